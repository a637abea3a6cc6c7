package session_test

import (
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// BenchmarkOpenContextPrepare is what `pi-lsp bench-file` times and compares with Pi's
// SessionManager.open + buildSessionContext + prepareCompaction: a session's load and
// index, its context and the preparation of a compaction at its leaf.
func BenchmarkOpenContextPrepare(b *testing.B) {
	path, size := sessiontest.Bench(b)
	b.SetBytes(size)
	for b.Loop() {
		f, err := session.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		ix := session.NewIndex(f)
		ix.BuildContext("")
		branch, proj := ix.ProjectedPath(ix.LeafID())
		if _, err := compaction.PrepareProjected(branch, proj, session.DefaultCompactionSettings); err != nil {
			b.Fatal(err)
		}
	}
}
