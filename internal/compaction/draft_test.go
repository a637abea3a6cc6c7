package compaction_test

import (
	"context"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// countingSummarizer records every request and answers with the extractive summarizer.
type countingSummarizer struct {
	mu   sync.Mutex
	reqs []compaction.Request
}

func (c *countingSummarizer) Name() string { return "counting" }

func (c *countingSummarizer) Summarize(ctx context.Context, r compaction.Request) (compaction.Result, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, r)
	c.mu.Unlock()
	return compaction.Extractive{}.Summarize(ctx, r)
}

func (c *countingSummarizer) calls() []compaction.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]compaction.Request(nil), c.reqs...)
}

func copyGenuine(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "genuine", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func prepareAt(t *testing.T, path, leaf string, keep int) *compaction.Preparation {
	t.Helper()
	f, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ix := session.NewIndex(f)
	if leaf == "" {
		leaf = ix.LeafID()
	}
	p, err := compaction.Prepare(ix.Path(leaf), session.CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: keep})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDraftIsCommittedWithoutAModelCall(t *testing.T) {
	path := copyGenuine(t, "full-main.jsonl")
	store := compaction.NewDraftStore(t.TempDir())
	sum := &countingSummarizer{}
	p := prepareAt(t, path, "", 60)
	d, err := store.Refresh(context.Background(), path, p, sum, compaction.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := len(sum.calls())
	if before == 0 {
		t.Fatal("drafting made no summary request")
	}
	before0, _ := os.ReadFile(path)
	res, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{
		Settings:   session.CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 60},
		Summarizer: sum,
		Reuse:      store.ReuseFrom(path, sum, compaction.Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sum.calls()); n != before {
		t.Fatalf("commit made %d more model calls", n-before)
	}
	if res.Outcome.Summary != d.Outcome.Summary || res.Outcome.FromHook {
		t.Fatal("the committed summary is not the draft")
	}
	after, _ := os.ReadFile(path)
	if len(after) <= len(before0) || string(after[:len(before0)]) != string(before0) {
		t.Fatal("the session was not appended to")
	}
}

func TestDraftUpdatesOnlyTheNewPart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.jsonl")
	sessiontest.Generate(t, path, benchgen.Options{Entries: 400, Seed: 3})
	f, _ := session.Load(path)
	ix := session.NewIndex(f)
	full := ix.Path(ix.LeafID())
	store := compaction.NewDraftStore("")
	sum := &countingSummarizer{}
	// Find two leaves whose cuts split no turn and whose spans extend one another.
	settings := session.CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 3000}
	type cand struct {
		p   *compaction.Preparation
		ids []string
	}
	var cands []cand
	for i := 1; i < len(full); i++ {
		p, err := compaction.Prepare(full[:i+1], settings)
		if err != nil || p.IsSplitTurn || p.NothingToSummarize() {
			continue
		}
		cands = append(cands, cand{p, compaction.SpanIDs(p)})
	}
	var early, final *compaction.Preparation
	for a := 0; a < len(cands) && final == nil; a++ {
		for b := len(cands) - 1; b > a; b-- {
			x, y := cands[a].ids, cands[b].ids
			if len(x) == 0 || len(x) >= len(y) {
				continue
			}
			prefix := true
			for k := range x {
				prefix = prefix && x[k] == y[k]
			}
			if prefix {
				early, final = cands[a].p, cands[b].p
				break
			}
		}
	}
	if early == nil {
		t.Fatal("no pair of extending spans in the generated session")
	}
	if _, err := store.Refresh(context.Background(), path, early, sum, compaction.Options{}); err != nil {
		t.Fatal(err)
	}
	first := store.Get(path)
	n := len(sum.calls())
	d, err := store.Refresh(context.Background(), path, final, sum, compaction.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reqs := sum.calls()[n:]
	if !d.Incremental || len(reqs) != 1 {
		t.Fatalf("update: incremental=%v with %d requests", d.Incremental, len(reqs))
	}
	if reqs[0].PreviousSummary == "" || len(reqs[0].Messages) >= len(final.MessagesToSummarize) {
		t.Fatalf("the update did not summarize only the new part (%d of %d messages, previous %q)", len(reqs[0].Messages), len(final.MessagesToSummarize), reqs[0].PreviousSummary)
	}
	if first.Key == d.Key {
		t.Fatal("key unchanged")
	}
}

func TestDraftPersistsOutsideTheSessionAndGoesStale(t *testing.T) {
	path := copyGenuine(t, "full-main.jsonl")
	cache := t.TempDir()
	sum := &countingSummarizer{}
	p := prepareAt(t, path, "", 60)
	sessionBytes, _ := os.ReadFile(path)
	if _, err := compaction.NewDraftStore(cache).Refresh(context.Background(), path, p, sum, compaction.Options{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(sessionBytes) {
		t.Fatal("drafting wrote to the session file")
	}
	files, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files: %v", files)
	}
	fresh := compaction.NewDraftStore(cache)
	if fresh.Lookup(path, p, "", nil) == nil {
		t.Fatal("a new store does not find the cached draft")
	}
	if fresh.Lookup(path, p, "other focus", nil) != nil {
		t.Fatal("a draft for another focus was reused")
	}
	if fresh.Lookup(path, prepareAt(t, path, "", 200), "", nil) != nil {
		t.Fatal("a draft of another span was reused")
	}
}
