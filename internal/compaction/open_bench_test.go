package compaction

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// benchSession writes a generated session sized by PI_LSP_BENCH_ENTRIES (default 16000,
// about 26 MB) and returns its path and size.
func benchSession(b *testing.B) (string, int64) {
	n := 16000
	if s := os.Getenv("PI_LSP_BENCH_ENTRIES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	path := filepath.Join(b.TempDir(), "s.jsonl")
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := benchgen.Write(out, benchgen.Options{Entries: n, Seed: int64(n)}); err != nil {
		b.Fatal(err)
	}
	out.Close()
	st, _ := os.Stat(path)
	return path, st.Size()
}

// BenchmarkOpenContextPrepare is the first row of docs/BENCHMARKS.md in-process: load and
// index a generated session, build the leaf's context and prepare a compaction.
func BenchmarkOpenContextPrepare(b *testing.B) {
	path, size := benchSession(b)
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
	path, _ := benchSession(b)
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
