package compaction

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/gen"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// BenchmarkOpenContextPrepare is the first row of docs/BENCHMARKS.md in-process: load and
// index a generated session, build the leaf's context and prepare a compaction. Size with
// PI_LSP_BENCH_ENTRIES (default 16000, about 26 MB).
func BenchmarkOpenContextPrepare(b *testing.B) {
	n := 16000
	if s := os.Getenv("PI_LSP_BENCH_ENTRIES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	path := filepath.Join(b.TempDir(), "s.jsonl")
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := gen.Write(out, gen.Options{Entries: n, Seed: int64(n)}); err != nil {
		b.Fatal(err)
	}
	out.Close()
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		f, err := session.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		ix := session.NewIndex(f)
		ix.BuildContext("")
		if _, err := Prepare(ix.Path(ix.LeafID()), session.DefaultCompactionSettings); err != nil {
			b.Fatal(err)
		}
	}
}
