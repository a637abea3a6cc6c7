package oracle

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func corpus(parts ...string) string {
	return filepath.Join(append([]string{RepoRoot(), "testdata", "corpus"}, parts...)...)
}

// Against Pi 0.73.1: the summary prompts and limits of 1.6.0 are not implemented yet.
func TestConstants(t *testing.T) {
	o := StartLegacy(t)
	var c struct {
		Version                 string `json:"VERSION"`
		CurrentSessionVersion   int    `json:"CURRENT_SESSION_VERSION"`
		CompactionSummaryPrefix string `json:"COMPACTION_SUMMARY_PREFIX"`
		CompactionSummarySuffix string `json:"COMPACTION_SUMMARY_SUFFIX"`
		BranchSummaryPrefix     string `json:"BRANCH_SUMMARY_PREFIX"`
		BranchSummarySuffix     string `json:"BRANCH_SUMMARY_SUFFIX"`
		BranchSummaryPreamble   string `json:"BRANCH_SUMMARY_PREAMBLE"`
		Prompts                 struct {
			Initial, Update, TurnPrefix, Branch string
		} `json:"prompts"`
	}
	o.Query(t, map[string]any{"op": "constants"}, &c)
	if c.Version != "0.73.1" {
		t.Errorf("VERSION = %q, want 0.73.1", c.Version)
	}
	if c.CurrentSessionVersion != 3 {
		t.Errorf("CURRENT_SESSION_VERSION = %d, want 3", c.CurrentSessionVersion)
	}
	if !strings.HasSuffix(c.CompactionSummaryPrefix, "\n\n<summary>\n") || c.CompactionSummarySuffix != "\n</summary>" {
		t.Errorf("compaction summary wrapper = %q ... %q", c.CompactionSummaryPrefix, c.CompactionSummarySuffix)
	}
	if !strings.HasSuffix(c.BranchSummaryPrefix, "\n\n<summary>\n") || c.BranchSummarySuffix != "</summary>" {
		t.Errorf("branch summary wrapper = %q ... %q", c.BranchSummaryPrefix, c.BranchSummarySuffix)
	}
	want := "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
	if c.BranchSummaryPreamble != want {
		t.Errorf("BRANCH_SUMMARY_PREAMBLE = %q, want %q", c.BranchSummaryPreamble, want)
	}
	for name, p := range map[string]string{"initial": c.Prompts.Initial, "update": c.Prompts.Update, "turnPrefix": c.Prompts.TurnPrefix, "branch": c.Prompts.Branch} {
		if len(p) < 100 || strings.Contains(p, "<conversation>") {
			t.Errorf("prompt %s looks wrong: %q", name, truncate(p, 120))
		}
	}
}

type contextResult struct {
	LeafID   string            `json:"leafId"`
	Messages []json.RawMessage `json:"messages"`
	Tokens   struct {
		Tokens int `json:"tokens"`
	} `json:"tokens"`
	Estimates []int    `json:"estimates"`
	IDs       []string `json:"ids"`
}

func roles(t *testing.T, msgs []json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(msgs))
	for i, m := range msgs {
		var r struct{ Role string }
		if err := json.Unmarshal(m, &r); err != nil {
			t.Fatal(err)
		}
		out[i] = r.Role
	}
	return out
}

func TestContextGenuine(t *testing.T) {
	o := Start(t)
	cases := []struct {
		file      string
		messages  int
		firstRole string
	}{
		{"full-main.jsonl", 18, "user"},
		{"full-clone.jsonl", 3, "bashExecution"}, // Pi's clone leaves a dangling parentId
		{"compact-twice.jsonl", 4, "compactionSummary"},
		{"overflow.jsonl", 14, "compactionSummary"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			var r contextResult
			o.Query(t, map[string]any{"op": "context", "file": corpus("genuine", c.file)}, &r)
			if len(r.Messages) != c.messages {
				t.Fatalf("%d messages (%v), want %d", len(r.Messages), roles(t, r.Messages), c.messages)
			}
			if got := roles(t, r.Messages)[0]; got != c.firstRole {
				t.Errorf("first role %q, want %q", got, c.firstRole)
			}
			if len(r.IDs) == 0 || r.LeafID != r.IDs[len(r.IDs)-1] {
				t.Errorf("default leaf %q should be the last entry of %v", r.LeafID, r.IDs)
			}
			if len(r.Estimates) != len(r.Messages) || r.Tokens.Tokens <= 0 {
				t.Errorf("estimates %v, tokens %d", r.Estimates, r.Tokens.Tokens)
			}
		})
	}
}

// Ids invented by v1 migration must be the same for every request about the
// same file, so results can be related to each other.
func TestMigrationIDsStable(t *testing.T) {
	o := Start(t)
	if !o.Live() {
		// Goldens of different requests may come from different recording runs, each
		// migrating with fresh random ids: only one live process can show stability.
		t.Skip("needs the live oracle: golden answers of v1 files come from separate migrations")
	}
	file := corpus("synthetic", "v1-compaction.jsonl")
	var ctx contextResult
	o.Query(t, map[string]any{"op": "context", "file": file}, &ctx)
	var tree struct {
		LeafID string   `json:"leafId"`
		IDs    []string `json:"ids"`
		Branch []string `json:"branch"`
	}
	o.Query(t, map[string]any{"op": "tree", "file": file}, &tree)
	if len(ctx.IDs) != 9 || strings.Join(ctx.IDs, ",") != strings.Join(tree.IDs, ",") {
		t.Fatalf("ids differ between requests: %v vs %v", ctx.IDs, tree.IDs)
	}
	if tree.LeafID != ctx.LeafID || len(tree.Branch) != 9 {
		t.Errorf("tree leaf %q branch %v, context leaf %q", tree.LeafID, tree.Branch, ctx.LeafID)
	}
	if got := roles(t, ctx.Messages); got[0] != "compactionSummary" || len(got) != 6 {
		t.Errorf("v1 context roles %v", got)
	}
}

func TestUnsafeLeafRefused(t *testing.T) {
	o := Start(t)
	err := o.QueryErr(t, map[string]any{"op": "context", "file": corpus("synthetic", "cycle.jsonl"), "leafIndex": 2}, nil)
	var oe *Error
	if !errors.As(err, &oe) || !strings.Contains(oe.Message, "cycle") {
		t.Fatalf("want a cycle refusal, got %v", err)
	}
	// The default leaf of the same file is safe.
	var r contextResult
	o.Query(t, map[string]any{"op": "context", "file": corpus("synthetic", "cycle.jsonl")}, &r)
	if len(r.Messages) != 4 {
		t.Errorf("cycle.jsonl default leaf: %d messages, want 4", len(r.Messages))
	}
}

type manifest struct {
	Files []struct {
		Name       string          `json:"name"`
		SafeLeaves json.RawMessage `json:"safeLeaves"`
		Expect     map[string][]map[string]any
	} `json:"files"`
}

// The behaviour spec's worked examples (synthetic manifest "expect" blocks)
// hold for real Pi.
// Against Pi 0.73.1: the expectations are the 0.73.1 behaviour spec's (its cut points
// moved in 1.6.0, see pi-drift §4.1).
func TestSpecExamples(t *testing.T) {
	o := StartLegacy(t)
	data, err := os.ReadFile(corpus("synthetic", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range m.Files {
		for op, list := range f.Expect {
			for _, want := range list {
				n++
				req := map[string]any{"op": op, "file": corpus("synthetic", f.Name), "keep": want["keep"]}
				if s, ok := want["start"]; ok {
					req["start"] = s
				}
				var got map[string]any
				o.Query(t, req, &got)
				ids, _ := got["ids"].([]any)
				for k, w := range want {
					if k == "keep" || k == "start" {
						continue
					}
					var g any
					switch {
					case k == "firstKeptEntryIndex" && op == "prepare":
						g = float64(-1)
						for i, id := range ids {
							if id == got["firstKeptEntryId"] {
								g = float64(i)
							}
						}
					case k == "messagesToSummarize" || k == "turnPrefixMessages":
						l, _ := got[k].([]any)
						g = float64(len(l))
					default:
						g = got[k]
					}
					wb, _ := json.Marshal(w)
					gb, _ := json.Marshal(g)
					if string(wb) != string(gb) {
						t.Errorf("%s %s %v: %s = %s, want %s", f.Name, op, req["keep"], k, gb, wb)
					}
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d expectations in the manifest", n)
	}
}

// The real CLI and the library agree on what full-main.jsonl holds.
func TestRealCLIAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Pi CLI")
	}
	o := Start(t)
	for _, name := range []string{"full-main.jsonl", "full-clone.jsonl"} {
		file := corpus("genuine", name)
		var r contextResult
		o.Query(t, map[string]any{"op": "context", "file": file}, &r)
		got := Inspect(t, file)
		if strings.Join(got.Roles, ",") != strings.Join(roles(t, r.Messages), ",") {
			t.Errorf("%s: CLI roles %v, library roles %v", name, got.Roles, roles(t, r.Messages))
		}
		if got.CopyRewritten {
			t.Errorf("%s: Pi changed a genuine file just by opening it: %v", name, got.AppendedTypes)
		}
	}
}

func TestCompareAnswersByIndex(t *testing.T) {
	g := json.RawMessage(`{"leafId":"aaaa0001","ids":["aaaa0000","aaaa0001"],"branch":["aaaa0000","aaaa0001"],"n":1}`)
	l := json.RawMessage(`{"leafId":"bbbb0001","ids":["bbbb0000","bbbb0001"],"branch":["bbbb0000","bbbb0001"],"n":1}`)
	if d := compareAnswers(g, l); d != "" {
		t.Errorf("same structure should compare equal: %s", d)
	}
	l2 := json.RawMessage(`{"leafId":"bbbb0000","ids":["bbbb0000","bbbb0001"],"branch":["bbbb0000","bbbb0001"],"n":1}`)
	if d := compareAnswers(g, l2); d == "" {
		t.Error("a different leaf index must not compare equal")
	}
}

func TestCanonicalKey(t *testing.T) {
	_, key, golden, err := canonical(map[string]any{"op": "cut", "keep": 10, "id": 7, "file": corpus("genuine", "full-main.jsonl")}, "oracle-golden")
	if err != nil {
		t.Fatal(err)
	}
	if key != `{"file":"testdata/corpus/genuine/full-main.jsonl","keep":10,"op":"cut"}` {
		t.Errorf("key = %s", key)
	}
	if filepath.Base(golden) != "full-main.jsonl.json" {
		t.Errorf("golden = %s", golden)
	}
	_, _, golden, err = canonical(map[string]any{"op": "context", "file": filepath.Join(os.TempDir(), "x.jsonl")}, "oracle-golden")
	if err != nil || golden != "" {
		t.Errorf("files outside the repository have no golden: %q %v", golden, err)
	}
}
