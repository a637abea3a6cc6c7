package compaction

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// largeRequest is the history request of a compaction of the session at path, as
// Generate sends it.
func largeRequest(t testing.TB, path string) Request {
	f, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ix := session.NewIndex(f)
	p, err := Prepare(ix.Path(ix.LeafID()), session.DefaultCompactionSettings)
	if err != nil {
		t.Fatal(err)
	}
	return Request{Kind: KindHistory, Messages: p.MessagesToSummarize, PreviousSummary: p.PreviousSummary}
}

// generatedRequest is largeRequest on a session benchgen writes with about entries
// entries.
func generatedRequest(t testing.TB, entries int) Request {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	sessiontest.Generate(t, path, benchgen.Options{Entries: entries, Seed: int64(entries)})
	return largeRequest(t, path)
}

// BenchmarkExtractiveLarge measures the built-in summarizer on the history of a large
// generated session sized by PI_LSP_BENCH_ENTRIES (default 16000 entries, about 26 MB;
// see sessiontest.Bench): the CPU a compaction spends before it writes anything.
func BenchmarkExtractiveLarge(b *testing.B) {
	path, _ := sessiontest.Bench(b)
	req := largeRequest(b, path)
	b.ResetTimer()
	for b.Loop() {
		if _, err := (Extractive{}).Summarize(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
