package branch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

func TestMain(m *testing.M) { os.Exit(oracle.Main(m)) }

// sample returns up to n indices in [0, count) spread evenly, always with the first and
// the last, keeping only those ok accepts.
func sample(count, n int, ok func(int) bool) []int {
	seen := map[int]bool{}
	var out []int
	add := func(i int) {
		if i >= 0 && i < count && !seen[i] && ok(i) {
			seen[i] = true
			out = append(out, i)
		}
	}
	if count <= n {
		for i := 0; i < count; i++ {
			add(i)
		}
		return out
	}
	add(count - 1)
	for k := 0; k < n-1; k++ {
		add(k * (count - 1) / (n - 1))
	}
	return out
}

// normalized decodes JSON values and replaces entry ids by their index in ids.
func normalized(t *testing.T, raws []json.RawMessage, ids []string) any {
	t.Helper()
	out := make([]any, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return oracle.NormalizeIDs(out, ids)
}

func normID(id string, ids []string) any {
	if id == "" {
		return nil
	}
	return oracle.NormalizeIDs(id, ids)
}

func messagesRaw(ms []*session.Message) []json.RawMessage {
	out := make([]json.RawMessage, len(ms))
	for i, m := range ms {
		out[i] = m.Raw()
	}
	return out
}

// Collect and Prepare give what Pi's collectEntriesForBranchSummary and
// prepareBranchEntries give, for many (leaf, target) pairs and budgets over every
// corpus file (cycle-unsafe leaves and targets left out: Pi loops on them).
func TestDifferentialCollectPrepare(t *testing.T) {
	o := oracle.Start(t)
	budgets := []int{0, 500, 800, 2000, 10000}
	for _, cf := range oracle.Corpus(t) {
		t.Run(cf.Name, func(t *testing.T) {
			f, err := session.Load(cf.Path)
			if err != nil {
				t.Skipf("not a session pi-lsp loads: %v", err)
			}
			ix := session.NewIndex(f)
			ours := ids(ix.Entries())
			n := len(ours)
			if n == 0 {
				t.Skip("no entries")
			}
			leaves := sample(n, 6, cf.Safe)
			targets := sample(n, 14, cf.Safe)
			pairs := 0
			check := func(name string, req map[string]any, leaf, target string, budget int) {
				var pi oracle.Collected
				if err := o.QueryErr(t, req, &pi); err != nil {
					// Pi itself throws on some hostile branches (an assistant message with
					// null content: "content is not iterable"); pi-lsp prepares them.
					if !strings.Contains(err.Error(), "is not iterable") {
						t.Fatalf("oracle: %v", err)
					}
					col := Collect(ix, leaf, target)
					_ = Prepare(col.Entries, budget)
					return
				}
				if len(pi.IDs) != n {
					t.Fatalf("Pi sees %d entries, pi-lsp %d", len(pi.IDs), n)
				}
				col := Collect(ix, leaf, target)
				prep := Prepare(col.Entries, budget)
				read, mod := prep.FileOps.Lists()
				var piCA any
				if pi.CommonAncestorID != nil {
					piCA = oracle.NormalizeIDs(*pi.CommonAncestorID, pi.IDs)
				}
				if got := normID(col.CommonAncestorID, ours); !reflect.DeepEqual(got, piCA) {
					t.Errorf("%s: common ancestor %v, Pi %v", name, got, piCA)
				}
				if got, want := oracle.NormalizeIDs(toAny(ids(col.Entries)), ours), oracle.NormalizeIDs(toAny(pi.EntryIDs), pi.IDs); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: entries %v, Pi %v", name, got, want)
				}
				if got, want := normalized(t, messagesRaw(prep.Messages), ours), normalized(t, pi.Messages, pi.IDs); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: prepared messages differ\npi-lsp %v\nPi     %v", name, got, want)
				}
				if prep.TotalTokens != pi.TotalTokens {
					t.Errorf("%s: total tokens %d, Pi %d", name, prep.TotalTokens, pi.TotalTokens)
				}
				if !reflect.DeepEqual(read, orEmpty(pi.ReadFiles)) || !reflect.DeepEqual(mod, orEmpty(pi.ModifiedFiles)) {
					t.Errorf("%s: files %v %v, Pi %v %v", name, read, mod, pi.ReadFiles, pi.ModifiedFiles)
				}
				if s := compaction.SerializeAgentMessages(prep.Messages); s != pi.Serialized {
					t.Errorf("%s: serialized\n%q\nPi\n%q", name, s, pi.Serialized)
				}
				pairs++
			}
			// A few cases on the corpus file itself: their answers can be recorded as
			// goldens (PI_LSP_UPDATE_GOLDEN=1), so they also run without Node.
			last, mid := leaves[0], targets[len(targets)/2]
			for _, c := range [][3]int{{last, mid, 0}, {last, targets[len(targets)-1], 500}, {leaves[len(leaves)-1], last, 2000}} {
				check(fmt.Sprintf("golden: leaf #%d target #%d budget %d", c[0], c[1], c[2]),
					map[string]any{"op": "collect", "file": cf.Path, "leafIndex": c[0], "targetIndex": c[1], "budget": c[2]},
					ours[c[0]], ours[c[1]], c[2])
			}
			// The bulk asks about a copy outside the repository, which is never recorded
			// (the answers would weigh megabytes): live oracle only.
			if !o.Live() {
				t.Logf("no live oracle: %d golden cases only", pairs)
				return
			}
			live := copyTo(t, cf.Path)
			for _, l := range leaves {
				for _, tg := range targets {
					for _, b := range budgets {
						check(fmt.Sprintf("leaf #%d target #%d budget %d", l, tg, b),
							map[string]any{"op": "collect", "file": live, "leafIndex": l, "targetIndex": tg, "budget": b},
							ours[l], ours[tg], b)
					}
				}
			}
			// No old position: nothing to collect.
			check("leaf null", map[string]any{"op": "collect", "file": live, "leaf": nil, "targetIndex": targets[0], "budget": 0},
				"", ours[targets[0]], 0)
			t.Logf("%d (leaf, target, budget) cases", pairs)
		})
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// assertPiLoads checks that real Pi, opening the file, has the leaf and exactly the
// context pi-lsp builds for it.
func assertPiLoads(t *testing.T, o *oracle.Oracle, path, what string) {
	t.Helper()
	pi := o.PiLoad(t, path)
	ix := sessiontest.Index(t, path)
	ours := ids(ix.Entries())
	var piLeaf any
	if pi.LeafID != nil {
		piLeaf = oracle.NormalizeIDs(*pi.LeafID, pi.IDs)
	}
	if got := normID(ix.LeafID(), ours); !reflect.DeepEqual(got, piLeaf) {
		t.Errorf("%s: leaf %v, Pi %v", what, got, piLeaf)
	}
	got := normalized(t, messagesRaw(ix.BuildContext("").Messages), ours)
	want := normalized(t, pi.Messages, pi.IDs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: context differs\npi-lsp %v\nPi     %v", what, got, want)
	}
}

func copyTo(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// appendUser appends a user message as a child of Pi's leaf, as Pi does when the user
// types the next message.
func appendUser(t *testing.T, path, text string) {
	t.Helper()
	ix := sessiontest.Index(t, path)
	msg := map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}, "timestamp": 1767322000000}
	if _, err := session.Append(path, taken(ix), []session.NewEntry{{Type: session.TypeMessage, ParentID: ix.LeafID(),
		Fields: []session.Field{{Key: "message", Value: msg}}}}); err != nil {
		t.Fatal(err)
	}
}

// Every navigation pi-lsp writes (with a summary, without one, with a label, an undone
// compaction) loads in real Pi with exactly the context pi-lsp builds, and keeps doing
// so once the user sends the next message.
func TestDifferentialPiLoadsNavigation(t *testing.T) {
	o := oracle.Start(t)
	for _, cf := range oracle.Corpus(t) {
		t.Run(cf.Name, func(t *testing.T) {
			f, err := session.Load(cf.Path)
			if err != nil || len(f.Entries) == 0 {
				t.Skip("no entries")
			}
			if f.MigratedFrom == 1 {
				t.Skip("v1 file: pi-lsp never writes to it")
			}
			ix := session.NewIndex(f)
			n := len(f.Entries)
			for _, tg := range sample(n, 5, cf.Safe) {
				target := ix.Entries()[tg].ID
				for _, mode := range []struct {
					name string
					opt  NavigateOptions
				}{
					{"summary", NavigateOptions{Summarize: true, Summarizer: compaction.Extractive{}}},
					{"no summary", NavigateOptions{}},
					{"summary and label", NavigateOptions{Summarize: true, Summarizer: compaction.Extractive{}, Label: "checkpoint"}},
					{"label", NavigateOptions{Label: "checkpoint"}},
				} {
					what := fmt.Sprintf("%s to #%d", mode.name, tg)
					path := copyTo(t, cf.Path)
					res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), target, mode.opt)
					if err != nil {
						if errors.Is(err, ErrCycle) {
							continue
						}
						t.Fatalf("%s: %v", what, err)
					}
					assertPiLoads(t, o, path, what)
					if res.AlreadyThere {
						continue
					}
					appendUser(t, path, "next message after "+what)
					assertPiLoads(t, o, path, what+", then a new message")
				}
			}
			// Undo the newest compaction on Pi's path, if there is one.
			path := copyTo(t, cf.Path)
			if _, err := UndoCompaction(context.Background(), sessiontest.Snapshot(t, path), ""); err == nil {
				assertPiLoads(t, o, path, "undo-compaction")
				appendUser(t, path, "next message after undo")
				assertPiLoads(t, o, path, "undo-compaction, then a new message")
			}
			// A label set on the last entry.
			path = copyTo(t, cf.Path)
			if _, err := SetLabel(path, ix.Entries()[n-1].ID, "x"); err == nil {
				assertPiLoads(t, o, path, "label")
			}
		})
	}
}

// Undoing a compaction in a genuine session brings back exactly the context Pi built
// before that compaction.
func TestDifferentialUndoRestoresPreCompactionContext(t *testing.T) {
	o := oracle.Start(t)
	for _, name := range []string{"compact-twice.jsonl", "compact-split.jsonl", "overflow.jsonl", "auto-threshold.jsonl"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(oracle.RepoRoot(), "testdata", "corpus", "genuine", name)
			ix := sessiontest.Index(t, src)
			p := ix.Path(ix.LeafID())
			ci := session.LastCompactionIndex(p)
			if ci < 0 {
				t.Skip("no compaction on the path")
			}
			comp := p[ci]
			parentIndex := -1
			for i, e := range ix.Entries() {
				if e.ID == comp.ParentID {
					parentIndex = i
				}
			}
			var before struct {
				Messages []json.RawMessage `json:"messages"`
				IDs      []string          `json:"ids"`
			}
			o.Query(t, map[string]any{"op": "context", "file": src, "leafIndex": parentIndex}, &before)

			path := copyTo(t, src)
			if _, err := UndoCompaction(context.Background(), sessiontest.Snapshot(t, path), ""); err != nil {
				t.Fatal(err)
			}
			after := o.PiLoad(t, path)
			if got, want := normalized(t, after.Messages, after.IDs), normalized(t, before.Messages, before.IDs); !reflect.DeepEqual(got, want) {
				t.Errorf("Pi's context after undo differs from Pi's context before compaction %s\nafter  %v\nbefore %v", comp.ID, got, want)
			}
		})
	}
}
