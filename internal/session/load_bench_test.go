package session_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// BenchmarkLoadIndex is a session's load and index, as a job or the server's first look
// at a session makes them.
func BenchmarkLoadIndex(b *testing.B) {
	benchLoads(b, func(*session.Index) {})
}

// benchLoads times, on the benchmark session, its load and index and then what then
// does with the index.
func benchLoads(b *testing.B, then func(ix *session.Index)) {
	path, size := sessiontest.Bench(b)
	b.SetBytes(size)
	for b.Loop() {
		f, err := session.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		then(session.NewIndex(f))
	}
}

// BenchmarkOpenContextPrepare is what `pi-lsp bench-file` times and compares with Pi's
// SessionManager.open + buildSessionContext + prepareCompaction: a session's load and
// index, its context and the preparation of a compaction at its leaf.
func BenchmarkOpenContextPrepare(b *testing.B) {
	benchLoads(b, func(ix *session.Index) {
		ix.BuildContext("")
		branch, proj := ix.ProjectedPath(ix.LeafID())
		if _, err := compaction.PrepareProjected(branch, proj, session.DefaultCompactionSettings); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkLiveRefresh is the server's refresh of a followed session after one line was
// appended to it (what each of Pi's appends costs the server).
func BenchmarkLiveRefresh(b *testing.B) {
	path, _ := sessiontest.Bench(b)
	l, err := session.OpenLive(path)
	if err != nil {
		b.Fatal(err)
	}
	parent := l.Index.LeafID()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("b%07x", i)
		i++
		line := fmt.Sprintf(`{"type":"custom","id":%q,"parentId":%q,"timestamp":"2025-01-01T00:00:00.000Z","customType":"bench"}`+"\n", id, parent)
		if _, err := f.WriteString(line); err != nil {
			b.Fatal(err)
		}
		if changed, err := l.Refresh(); err != nil || !changed {
			b.Fatal(changed, err)
		}
		parent = id
	}
}

// BenchmarkLiveSnapshot is what a job's snapshot of the followed index costs the server
// (the id table and the labels copied; the entries shared).
func BenchmarkLiveSnapshot(b *testing.B) {
	path, _ := sessiontest.Bench(b)
	l, err := session.OpenLive(path)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := l.Snapshot(); err != nil {
			b.Fatal(err)
		}
	}
}
