package compaction

import (
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// BenchmarkOpenContextPrepare is the first row of docs/BENCHMARKS.md in-process: load and
// index a generated session, build the leaf's context and prepare a compaction.
func BenchmarkOpenContextPrepare(b *testing.B) {
	path, size := sessiontest.Bench(b)
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		f, err := session.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		ix := session.NewIndex(f)
		ix.BuildContext("")
		path, proj := ix.ProjectedPath(ix.LeafID()) // as the server prepares: from the index's projection
		if _, err := PrepareProjected(path, proj, session.DefaultCompactionSettings); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkContext and BenchmarkPrepare are the two steps after the load alone, on a
// session loaded once (each iteration starts from fresh entries, so that what an entry
// caches after its first read is not reused across iterations).
func BenchmarkContext(b *testing.B) { benchAfterLoad(b, false) }

func BenchmarkPrepare(b *testing.B) { benchAfterLoad(b, true) }

func benchAfterLoad(b *testing.B, prepare bool) {
	path, _ := sessiontest.Bench(b)
	for b.Loop() {
		b.StopTimer()
		f, err := session.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		ix := session.NewIndex(f)
		b.StartTimer()
		if !prepare {
			ix.BuildContext("")
			continue
		}
		if _, err := Prepare(ix.Path(ix.LeafID()), session.DefaultCompactionSettings); err != nil {
			b.Fatal(err)
		}
	}
}
