package session_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

func TestMain(m *testing.M) { os.Exit(oracle.Main(m)) }

// leafSample picks the leaves to diff: all of them for small files, a spread otherwise.
func leafSample(n int) []int { return oracle.Spread(n, 60, 40) }

func entryIDs(ix *session.Index) []string {
	ids := make([]string, len(ix.Entries()))
	for i, e := range ix.Entries() {
		ids[i] = e.ID
	}
	return ids
}

func loadCorpus(t *testing.T, cf oracle.CorpusFile) *session.Index {
	t.Helper()
	f, err := session.Load(cf.Path)
	if errors.Is(err, session.ErrNoHeader) {
		t.Skipf("%s has no header: Pi would replace it with a fresh session; pi-lsp refuses it (%v)", cf.Name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return session.NewIndex(f)
}

// eachCorpusIndex runs test as a subtest on every corpus file, loaded and indexed, with
// its entry ids in file order.
func eachCorpusIndex(t *testing.T, test func(t *testing.T, cf oracle.CorpusFile, ix *session.Index, ids []string)) {
	for _, cf := range oracle.Corpus(t) {
		t.Run(cf.Name, func(t *testing.T) {
			ix := loadCorpus(t, cf)
			test(t, cf, ix, entryIDs(ix))
		})
	}
}

// TestContextMatchesPi diffs buildSessionContext, the token estimates, the tree and the
// file lists against real Pi for every corpus file and many leaves.
func TestContextMatchesPi(t *testing.T) {
	o := oracle.Start(t)
	eachCorpusIndex(t, func(t *testing.T, cf oracle.CorpusFile, ix *session.Index, ids []string) {
		for _, li := range leafSample(len(ids)) {
			if !cf.Safe(li) {
				continue
			}
			var want struct {
				LeafID        string            `json:"leafId"`
				Messages      []json.RawMessage `json:"messages"`
				ThinkingLevel json.RawMessage   `json:"thinkingLevel"`
				Model         json.RawMessage   `json:"model"`
				Tokens        json.RawMessage   `json:"tokens"`
				Projected     json.RawMessage   `json:"projectedTokens"`
				System        json.RawMessage   `json:"systemMessage"`
				Estimates     []int             `json:"estimates"`
				IDs           []string          `json:"ids"`
			}
			o.Query(t, map[string]any{"op": "context", "file": cf.Path, "leafIndex": li}, &want)
			if len(want.IDs) != len(ids) {
				t.Fatalf("Pi sees %d entries, pi-lsp %d", len(want.IDs), len(ids))
			}
			c := ix.BuildContext(ids[li])
			msgs := make([]json.RawMessage, len(c.Messages))
			est := make([]int, len(c.Messages))
			for i, m := range c.Messages {
				msgs[i], est[i] = m.Raw(), session.EstimateTokens(m)
			}
			var model any
			if c.Model != nil {
				model = c.Model
			}
			oracle.SameJSON(t, "messages", msgs, want.Messages, ids, want.IDs)
			oracle.SameJSON(t, "thinkingLevel", c.ThinkingLevel, want.ThinkingLevel, ids, want.IDs)
			oracle.SameJSON(t, "model", model, want.Model, ids, want.IDs)
			oracle.SameJSON(t, "estimateContextTokens", session.EstimateContextTokens(c.Messages), want.Tokens, ids, want.IDs)
			oracle.SameJSON(t, "estimateTokens", est, want.Estimates, ids, want.IDs)
			oracle.SameJSON(t, "estimateProjectedContextTokens", session.ProjectedContextTokens(c.Path), want.Projected, ids, want.IDs)
			var sys json.RawMessage = json.RawMessage("null")
			if m := session.CurrentSystemMessage(c.Messages); m != nil {
				sys = m.Raw()
			}
			oracle.SameJSON(t, "getCurrentSystemMessage", sys, want.System, ids, want.IDs)

			var files struct {
				ReadFiles     []string `json:"readFiles"`
				ModifiedFiles []string `json:"modifiedFiles"`
			}
			o.Query(t, map[string]any{"op": "files", "file": cf.Path, "leafIndex": li}, &files)
			read, mod := fileops.ForPath(ix.Path(ids[li]))
			oracle.SameJSON(t, "files", map[string]any{"readFiles": read, "modifiedFiles": mod}, files, ids, want.IDs)
		}
	})
}

func TestTreeMatchesPi(t *testing.T) {
	o := oracle.Start(t)
	eachCorpusIndex(t, func(t *testing.T, cf oracle.CorpusFile, ix *session.Index, ids []string) {
		if len(ids) > 0 && !cf.Safe(len(ids)-1) {
			t.Skip("Pi loops forever on this file's leaf")
		}
		var want struct {
			LeafID *string         `json:"leafId"`
			Roots  json.RawMessage `json:"roots"`
			IDs    []string        `json:"ids"`
		}
		o.Query(t, map[string]any{"op": "tree", "file": cf.Path}, &want)
		roots, err := session.TreeJSON(t.Context(), ix.Tree())
		if err != nil {
			t.Fatal(err)
		}
		oracle.SameJSON(t, "tree", roots, want.Roots, ids, want.IDs)
		var leaf any
		if l := ix.LeafID(); l != "" {
			leaf = l
		}
		oracle.SameJSON(t, "leafId", leaf, want.LeafID, ids, want.IDs)
	})
}

// TestMigratedEntriesMatchPi: every entry as pi-lsp holds it after parsing and migration
// (v1 ids and parents, firstKeptEntryIndex resolved or kept, hookMessage renamed) equals
// the entry as Pi's parseSessionEntries + migrateSessionEntries leave it.
func TestMigratedEntriesMatchPi(t *testing.T) {
	o := oracle.Start(t)
	eachCorpusIndex(t, func(t *testing.T, cf oracle.CorpusFile, ix *session.Index, ids []string) {
		var want struct {
			Entries []json.RawMessage `json:"entries"`
			IDs     []string          `json:"ids"`
		}
		o.Query(t, map[string]any{"op": "entries", "file": cf.Path}, &want)
		got := make([]json.RawMessage, len(ix.Entries()))
		for i, e := range ix.Entries() {
			got[i] = e.Raw()
		}
		oracle.SameJSON(t, "migrated entries", got, want.Entries, ids, want.IDs)
	})
}

// TestContextUsageMatchesPiCLI: pi/contextUsage's figure is what the real pi 1.6.0 CLI
// reports for the session it opens (get_session_stats.contextUsage: tokens and percent,
// null after a compaction until a projected reply reports usage).
func TestContextUsageMatchesPiCLI(t *testing.T) {
	var files []oracle.CorpusFile
	for _, cf := range oracle.Corpus(t) {
		switch {
		case strings.HasPrefix(cf.Name, "genuine-1.6/"), cf.Name == "synthetic/compaction-checkpoints.jsonl", cf.Name == "synthetic/context-edits.jsonl":
			files = append(files, cf)
		}
	}
	if len(files) < 10 {
		t.Fatalf("only %d files", len(files))
	}
	// And the files cut right after their last compaction (nothing reported yet).
	for _, name := range []string{"compact-split", "overflow-recovery", "retain-none"} {
		data, err := os.ReadFile(filepath.Join(oracle.RepoRoot(), "testdata", "corpus", "genuine-1.6", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		last := -1
		for i, l := range lines {
			if strings.HasPrefix(l, `{"type":"compaction"`) {
				last = i
			}
		}
		if last < 0 {
			t.Fatalf("%s has no compaction", name)
		}
		p := filepath.Join(t.TempDir(), name+"-at-compaction.jsonl")
		if err := os.WriteFile(p, []byte(strings.Join(lines[:last+1], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, oracle.CorpusFile{Name: "cut/" + name, Path: p})
	}
	for _, cf := range files {
		t.Run(cf.Name, func(t *testing.T) {
			r := oracle.Inspect(t, cf.Path)
			var pi struct {
				Tokens        *float64 `json:"tokens"`
				ContextWindow int      `json:"contextWindow"`
				Percent       *float64 `json:"percent"`
			}
			b, _ := json.Marshal(r.Stats["contextUsage"])
			if err := json.Unmarshal(b, &pi); err != nil || pi.ContextWindow == 0 {
				t.Fatalf("contextUsage %s (%v)", b, err)
			}
			ix := loadCorpus(t, cf)
			tokens, percent := session.ContextUsage(ix.LeafPath(), pi.ContextWindow)
			if (tokens == nil) != (pi.Tokens == nil) || (tokens != nil && (*tokens != *pi.Tokens || *percent != *pi.Percent)) {
				t.Errorf("pi-lsp %v %v, Pi %s", deref(tokens), deref(percent), b)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
