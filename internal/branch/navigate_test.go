package branch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// mainTree: u1-a1-{u2-a2, u3-a3}; the leaf (last entry) is a3.
func mainTree(t *testing.T) string {
	return writeSession(t,
		user("u1", "", "First message"),
		asst("a1", "u1", "First answer"),
		user("u2", "a1", "Main branch continue"),
		asst("a2", "u2", "Main answer", toolCall{"read", "main.go"}),
		user("u3", "a1", "Alternate path"),
		asst("a3", "u3", "Alternate answer", toolCall{"edit", "alt.go"}),
	)
}

// appended returns the entries appended to path since before (its old content).
func appended(t *testing.T, path string, before []byte) []*session.Entry {
	t.Helper()
	after := sessiontest.Read(t, path)
	if !bytes.HasPrefix(after, before) {
		t.Fatalf("the file was rewritten, not appended to")
	}
	ix := sessiontest.Index(t, path)
	old, err := session.Parse(before)
	if err != nil {
		t.Fatal(err)
	}
	return ix.Entries()[len(old.Entries):]
}

// contextTexts is the context real Pi builds on open (leaf = last entry), as texts.
func contextTexts(t *testing.T, path string) []string {
	t.Helper()
	return texts(sessiontest.Index(t, path).BuildContext("").Messages)
}

func field(t *testing.T, e *session.Entry, name string) any {
	t.Helper()
	raw := e.RawField(name)
	if raw == nil {
		return "<absent>"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNavigate(t *testing.T) {
	summary := compaction.BranchSummaryPreamble + "SUMMARY"
	for _, tc := range []struct {
		name       string
		target     string
		opt        NavigateOptions
		position   string
		editorText *string
		types      []string // appended entry types
		parent     any      // parentId of the first appended entry
		context    []string // context Pi builds on open afterwards
		summarized []string // ids summarized (when a summary is generated)
	}{
		{
			name: "44 root user message, no summary", target: "u1", position: "", editorText: ptr("First message"),
			types: []string{"custom"}, parent: nil, context: []string{},
		},
		{
			name: "45 assistant, no summary", target: "a2", position: "a2",
			types: []string{"custom"}, parent: "a2",
			context: []string{"user:First message", "assistant:First answer", "user:Main branch continue", "assistant:Main answer"},
		},
		{
			name: "46 root user message with summary", target: "u1", opt: NavigateOptions{Summarize: true}, position: "",
			editorText: ptr("First message"), types: []string{"branch_summary"}, parent: nil,
			context:    []string{"branchSummary:" + summary + "\n\n<modified-files>\nalt.go\n</modified-files>"},
			summarized: []string{"a1", "u3", "a3"},
		},
		{
			name: "47/53 nested user message with summary", target: "u2", opt: NavigateOptions{Summarize: true}, position: "a1",
			editorText: ptr("Main branch continue"), types: []string{"branch_summary"}, parent: "a1",
			context: []string{"user:First message", "assistant:First answer",
				"branchSummary:" + summary + "\n\n<modified-files>\nalt.go\n</modified-files>"},
			summarized: []string{"u3", "a3"},
		},
		{
			name: "48 assistant with summary", target: "a2", opt: NavigateOptions{Summarize: true}, position: "a2",
			types: []string{"branch_summary"}, parent: "a2",
			context: []string{"user:First message", "assistant:First answer", "user:Main branch continue", "assistant:Main answer",
				"branchSummary:" + summary + "\n\n<modified-files>\nalt.go\n</modified-files>"},
			summarized: []string{"u3", "a3"},
		},
		{
			name: "label without summary", target: "a2", opt: NavigateOptions{Label: "here"}, position: "a2",
			types: []string{"custom", "label"}, parent: "a2",
			context: []string{"user:First message", "assistant:First answer", "user:Main branch continue", "assistant:Main answer"},
		},
		{
			name: "label with summary", target: "a1", opt: NavigateOptions{Summarize: true, Label: "here"}, position: "a1",
			types: []string{"branch_summary", "label"}, parent: "a1",
			context: []string{"user:First message", "assistant:First answer",
				"branchSummary:" + summary + "\n\n<modified-files>\nalt.go\n</modified-files>"},
			summarized: []string{"u3", "a3"},
		},
		{
			name: "summary asked, nothing left behind (forward from a1)", target: "a2",
			opt: NavigateOptions{Summarize: true, FromLeaf: "a1"}, position: "a2", types: []string{"custom"}, parent: "a2",
			context: []string{"user:First message", "assistant:First answer", "user:Main branch continue", "assistant:Main answer"},
		},
		{
			name: "from another leaf to Pi's leaf: nothing to record", target: "a3",
			opt: NavigateOptions{FromLeaf: "a2"}, position: "a3", types: []string{},
			context: []string{"user:First message", "assistant:First answer", "user:Alternate path", "assistant:Alternate answer"},
		},
		{
			name: "custom message navigates like a user message", target: "cm", position: "a3", editorText: ptr("custom text"),
			types:   []string{}, // the position is Pi's leaf already
			context: []string{"user:First message", "assistant:First answer", "user:Alternate path", "assistant:Alternate answer"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := mainTree(t)
			if tc.target == "cm" {
				// a custom_message below a3, leaf stays a3 (a label child of a3 is written last)
				path = writeSession(t,
					user("u1", "", "First message"), asst("a1", "u1", "First answer"),
					user("u2", "a1", "Main branch continue"), asst("a2", "u2", "Main answer"),
					user("u3", "a1", "Alternate path"), asst("a3", "u3", "Alternate answer"),
					customMessage("cm", "a3", "custom text"), asst("a4", "cm", "after custom"))
				tc.opt.FromLeaf = "a4"
				// Pi's leaf is a4 here, so the move to a3 is recorded.
				tc.types, tc.parent = []string{"custom"}, "a3"
			}
			before := sessiontest.Read(t, path)
			f := &fake{}
			tc.opt.Summarizer = f
			res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), tc.target, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.Position != tc.position {
				t.Errorf("position %q, want %q", res.Position, tc.position)
			}
			if tc.editorText != nil {
				if !res.HasEditorText || res.EditorText != *tc.editorText {
					t.Errorf("editor text %v %q, want %q", res.HasEditorText, res.EditorText, *tc.editorText)
				}
			} else if res.HasEditorText {
				t.Errorf("unexpected editor text %q", res.EditorText)
			}
			added := appended(t, path, before)
			var types []string
			for _, e := range added {
				types = append(types, e.Type)
			}
			if !reflect.DeepEqual(append([]string{}, types...), tc.types) {
				t.Fatalf("appended %v, want %v", types, tc.types)
			}
			if len(added) > 0 {
				if got := field(t, added[0], "parentId"); got != tc.parent {
					t.Errorf("parentId %v, want %v", got, tc.parent)
				}
				if res.LeafID != added[len(added)-1].ID {
					t.Errorf("leaf %s, want the last appended entry %s", res.LeafID, added[len(added)-1].ID)
				}
				for i := 1; i < len(added); i++ {
					if added[i].ParentID != added[i-1].ID {
						t.Errorf("entry %d is not chained to the previous one", i)
					}
				}
			} else if res.LeafID != tc.position {
				t.Errorf("leaf %s, want %s", res.LeafID, tc.position)
			}
			if got := contextTexts(t, path); !reflect.DeepEqual(got, tc.context) {
				t.Errorf("context on open\n%q\nwant\n%q", got, tc.context)
			}
			old := tc.opt.FromLeaf
			if old == "" {
				old = "a3"
			}
			for _, e := range added {
				switch e.Type {
				case session.TypeBranchSummary:
					b := e.BranchSummary()
					if b.FromID != old || b.FromHook || !b.Details.Present {
						t.Errorf("summary entry fromId %q (want the old leaf %s) fromHook %v details %v", b.FromID, old, b.FromHook, b.Details)
					}
					if !reflect.DeepEqual(b.Details.ModifiedFiles, []string{"alt.go"}) {
						t.Errorf("details %+v", b.Details)
					}
					if res.SummaryEntry == nil || res.SummaryEntry.ID != e.ID {
						t.Errorf("SummaryEntry %v", res.SummaryEntry)
					}
					if got := ids(res.Preparation.Entries); !reflect.DeepEqual(got, tc.summarized) {
						t.Errorf("summarized %v, want %v", got, tc.summarized)
					}
				case session.TypeCustom:
					if e.StringField("customType") != MarkerType {
						t.Errorf("custom entry %s", e.Raw())
					}
					want := map[string]any{"fromId": old, "targetId": tc.target}
					if got := field(t, e, "data"); !reflect.DeepEqual(got, want) {
						t.Errorf("marker data %v, want %v", got, want)
					}
					if res.MarkerEntry == nil || res.MarkerEntry.ID != e.ID {
						t.Errorf("MarkerEntry %v", res.MarkerEntry)
					}
				case session.TypeLabel:
					l := e.Label()
					want := tc.target
					if res.SummaryEntry != nil {
						want = res.SummaryEntry.ID
					}
					if l.TargetID != want || l.Label != "here" {
						t.Errorf("label %+v, want target %s", l, want)
					}
					if got := sessiontest.Index(t, path).Label(want); got != "here" {
						t.Errorf("label on %s: %q", want, got)
					}
				}
			}
			if tc.summarized == nil && len(f.calls()) != 0 {
				t.Errorf("%d summarizer calls, want none", len(f.calls()))
			}
		})
	}
}

func ptr(s string) *string { return &s }

// 51: the current leaf is a no-op; the hook is not asked.
func TestNavigateToCurrentLeaf(t *testing.T) {
	path := mainTree(t)
	before := sessiontest.Read(t, path)
	hooked := false
	res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a3", NavigateOptions{Summarize: true, Summarizer: &fake{},
		Hook: func(context.Context, *Preparation) (HookDecision, error) { hooked = true; return HookDecision{}, nil }})
	if err != nil || !res.AlreadyThere || res.LeafID != "a3" || hooked {
		t.Fatalf("res %+v err %v hooked %v", res, err, hooked)
	}
	if !bytes.Equal(before, sessiontest.Read(t, path)) {
		t.Error("the file changed")
	}
}

// Unknown ids are errors that write nothing.
func TestNavigateUnknown(t *testing.T) {
	path := mainTree(t)
	before := sessiontest.Read(t, path)
	_, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "nope", NavigateOptions{})
	if err == nil || err.Error() != "entry nope not found" || !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown target: %v", err)
	}
	_, err = Navigate(context.Background(), sessiontest.Snapshot(t, path), "a1", NavigateOptions{FromLeaf: "gone"})
	if err == nil || !strings.Contains(err.Error(), "entry gone not found") {
		t.Errorf("unknown leaf: %v", err)
	}
	if !bytes.Equal(before, sessiontest.Read(t, path)) {
		t.Error("the file changed")
	}
}

// 49: cancelling during the summary writes nothing and says it was cancelled; a
// summarizer error writes nothing either.
func TestNavigateCancelAndError(t *testing.T) {
	path := mainTree(t)
	before := sessiontest.Read(t, path)
	f := &fake{block: true, started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-f.started; cancel() }()
	_, err := Navigate(ctx, sessiontest.Snapshot(t, path), "a2", NavigateOptions{Summarize: true, Summarizer: f})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: %v", err)
	}
	_, err = Navigate(context.Background(), sessiontest.Snapshot(t, path), "a2", NavigateOptions{Summarize: true, Summarizer: &fake{err: errors.New("model down")}})
	if err == nil || !strings.Contains(err.Error(), "model down") {
		t.Errorf("error: %v", err)
	}
	_, err = Navigate(context.Background(), sessiontest.Snapshot(t, path), "a2", NavigateOptions{Summarize: true})
	if err == nil {
		t.Error("no summarizer: no error")
	}
	if !bytes.Equal(before, sessiontest.Read(t, path)) {
		t.Error("the file changed")
	}
}

// T17 and Pi's session_before_tree semantics.
func TestNavigateHook(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		path := mainTree(t)
		before := sessiontest.Read(t, path)
		var got *Preparation
		_, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "u2", NavigateOptions{Summarize: true, Summarizer: &fake{}, Label: "L",
			CustomInstructions: "focus",
			Hook: func(_ context.Context, p *Preparation) (HookDecision, error) {
				got = p
				return HookDecision{Cancel: true}, nil
			}})
		if !errors.Is(err, ErrCancelled) {
			t.Errorf("err %v", err)
		}
		if got == nil || got.TargetID != "u2" || got.OldLeafID != "a3" || got.CommonAncestorID != "a1" ||
			!reflect.DeepEqual(ids(got.Entries), []string{"u3", "a3"}) || !got.UserWantsSummary || got.Label != "L" || got.CustomInstructions != "focus" {
			t.Errorf("preparation %+v", got)
		}
		if !bytes.Equal(before, sessiontest.Read(t, path)) {
			t.Error("the file changed")
		}
	})
	t.Run("label from the hook, no summary", func(t *testing.T) {
		path := mainTree(t)
		before := sessiontest.Read(t, path)
		res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a2", NavigateOptions{
			Hook: func(context.Context, *Preparation) (HookDecision, error) {
				return HookDecision{Label: ptr("from hook")}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		added := appended(t, path, before)
		if len(added) != 2 || added[1].Type != session.TypeLabel || added[1].Label().TargetID != "a2" || res.LeafID != added[1].ID {
			t.Errorf("appended %d, leaf %s", len(added), res.LeafID)
		}
	})
	t.Run("hook summary", func(t *testing.T) {
		path := mainTree(t)
		f := &fake{}
		res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a2", NavigateOptions{Summarize: true, Summarizer: f,
			Hook: func(context.Context, *Preparation) (HookDecision, error) {
				return HookDecision{Summary: &HookSummary{Text: "HOOK TEXT", Details: map[string]any{"custom": 1}}}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		e := res.SummaryEntry
		if e == nil || len(f.calls()) != 0 || !res.FromHook {
			t.Fatalf("summary %v, %d calls", e, len(f.calls()))
		}
		if field(t, e, "summary") != "HOOK TEXT" || field(t, e, "fromHook") != true ||
			!reflect.DeepEqual(field(t, e, "details"), map[string]any{"custom": float64(1)}) {
			t.Errorf("entry %s", e.Raw())
		}
	})
	t.Run("hook summary without a summary request is ignored", func(t *testing.T) {
		path := mainTree(t)
		res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a2", NavigateOptions{
			Hook: func(context.Context, *Preparation) (HookDecision, error) {
				return HookDecision{Summary: &HookSummary{Text: "HOOK TEXT"}}, nil
			}})
		if err != nil || res.SummaryEntry != nil || res.MarkerEntry == nil {
			t.Errorf("res %+v err %v", res, err)
		}
	})
	t.Run("hook overrides instructions", func(t *testing.T) {
		path := mainTree(t)
		f := &fake{}
		_, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a2", NavigateOptions{Summarize: true, Summarizer: f, CustomInstructions: "mine",
			Hook: func(context.Context, *Preparation) (HookDecision, error) {
				return HookDecision{CustomInstructions: ptr("HOOK FOCUS"), ReplaceInstructions: new(bool)}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		if r := f.calls()[0]; r.CustomInstructions != "HOOK FOCUS" || r.ReplaceInstructions {
			t.Errorf("request %+v", r)
		}
	})
	t.Run("hook error", func(t *testing.T) {
		path := mainTree(t)
		before := sessiontest.Read(t, path)
		_, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a2", NavigateOptions{
			Hook: func(context.Context, *Preparation) (HookDecision, error) {
				return HookDecision{}, errors.New("client gone")
			}})
		if err == nil || !bytes.Equal(before, sessiontest.Read(t, path)) {
			t.Errorf("err %v", err)
		}
	})
}

// T17: a summary over entries that hold no message is Pi's literal text, still written.
func TestNavigateSummaryOverLabelsOnly(t *testing.T) {
	path := writeSession(t,
		user("u1", "", "hi"), asst("a1", "u1", "hello"),
		labelLine("l1", "a1", "u1", "one"), labelLine("l2", "l1", "a1", "two"),
	)
	f := &fake{}
	res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a1", NavigateOptions{Summarize: true, Summarizer: f})
	if err != nil {
		t.Fatal(err)
	}
	e := res.SummaryEntry
	if e == nil || len(f.calls()) != 0 {
		t.Fatalf("summary %v calls %d", e, len(f.calls()))
	}
	b := e.BranchSummary()
	if b.Summary != NoContent || !reflect.DeepEqual(field(t, e, "details"), map[string]any{"readFiles": []any{}, "modifiedFiles": []any{}}) ||
		b.FromID != "l2" || e.ParentID != "a1" {
		t.Errorf("entry %s", e.Raw())
	}
}

// 52: custom instructions reach the prompt; the call's usage is stored in the entry.
func TestNavigateInstructionsAndUsage(t *testing.T) {
	path := mainTree(t)
	f := &fake{usage: &session.Usage{Input: 100, Output: 20, TotalTokens: 120}}
	res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a2", NavigateOptions{Summarize: true, Summarizer: f, CustomInstructions: "MARKER-52"})
	if err != nil {
		t.Fatal(err)
	}
	if p := compaction.BuildPrompt(f.calls()[0]); !strings.Contains(p, "Additional focus: MARKER-52") || !strings.Contains(p, "[User]: Alternate path") {
		t.Errorf("prompt %q", p)
	}
	u, ok := field(t, res.SummaryEntry, "usage").(map[string]any)
	if !ok || u["totalTokens"] != float64(120) {
		t.Errorf("usage %v", field(t, res.SummaryEntry, "usage"))
	}
}

// Divergence 6: a compaction's file lists on the branch left reach the summary.
func TestNavigateSummaryAccumulatesCompactionDetails(t *testing.T) {
	path := writeSession(t,
		user("u1", "", "start"), asst("a1", "u1", "ok"),
		user("u2", "a1", "work"), asst("a2", "u2", "", toolCall{"write", "x.go"}),
		compactionLine("c", "a2", "summary", "u2", details([]string{"old-read.go"}, []string{"old-mod.go"}), false),
		user("u3", "c", "more"), asst("a3", "u3", "", toolCall{"read", "y.go"}),
	)
	res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a1", NavigateOptions{Summarize: true, Summarizer: &fake{}})
	if err != nil {
		t.Fatal(err)
	}
	b := res.SummaryEntry.BranchSummary()
	if !reflect.DeepEqual(b.Details.ReadFiles, []string{"old-read.go", "y.go"}) || !reflect.DeepEqual(b.Details.ModifiedFiles, []string{"old-mod.go", "x.go"}) {
		t.Errorf("details %+v", b.Details)
	}
	// Pi's lists (the dry-run's) leave the compaction's details out.
	if p := res.Preparation; !reflect.DeepEqual(p.ReadFiles, []string{"y.go"}) || !reflect.DeepEqual(p.ModifiedFiles, []string{"x.go"}) {
		t.Errorf("Pi's lists %v %v", p.ReadFiles, p.ModifiedFiles)
	}
}

func TestNavigateDryRun(t *testing.T) {
	path := mainTree(t)
	before := sessiontest.Read(t, path)
	f := &fake{}
	hooked := false
	res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "u2", NavigateOptions{DryRun: true, Summarize: true, Summarizer: f, Budget: 1,
		Hook: func(context.Context, *Preparation) (HookDecision, error) { hooked = true; return HookDecision{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Preparation
	if p.CommonAncestorID != "a1" || !reflect.DeepEqual(ids(p.Entries), []string{"u3", "a3"}) || p.Budget != 1 ||
		len(p.Prepared.Messages) != 0 || !reflect.DeepEqual(p.ModifiedFiles, []string{"alt.go"}) {
		t.Errorf("preparation %+v", p)
	}
	if hooked || len(f.calls()) != 0 || !bytes.Equal(before, sessiontest.Read(t, path)) || res.Position != "a1" || res.EditorText != "Main branch continue" {
		t.Errorf("dry run did something: %+v", res)
	}
}

// The file changing between load and write aborts the write.
func TestNavigateSessionChanged(t *testing.T) {
	path := mainTree(t)
	_, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a2", NavigateOptions{Summarize: true, Summarizer: &fake{},
		Hook: func(context.Context, *Preparation) (HookDecision, error) {
			fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return HookDecision{}, err
			}
			defer fh.Close()
			_, err = fh.Write(encodeLines(t, []line{user("zz", "a3", "typed meanwhile")})[bytes.IndexByte(encodeLines(t, nil), '\n')+1:])
			return HookDecision{}, err
		}})
	if !errors.Is(err, ErrSessionChanged) || !errors.Is(err, compaction.ErrSessionChanged) {
		t.Fatalf("err %v", err)
	}
	ix := sessiontest.Index(t, path)
	if ix.LeafID() != "zz" {
		t.Errorf("leaf %s: something was written after the concurrent entry", ix.LeafID())
	}
}

// Dangling parents, self-parents and cycles never hang and never produce a file Pi
// would loop on.
func TestNavigateDefectiveTrees(t *testing.T) {
	path := writeSession(t,
		user("R", "", "root"), asst("S", "R", "s"),
		user("X", "Y", "x"), asst("Y", "X", "y"),
		user("P", "P", "self parent"),
		user("O", "missing", "orphan"), asst("Q", "O", "q"),
		user("Z", "Y", "below the cycle"),
	)
	for _, tc := range []struct {
		name, from, target string
		err                error
		position           string
	}{
		{"from a cycle to a sound entry", "Z", "S", nil, "S"},
		{"to a user message below a dangling parent", "S", "O", nil, ""},
		{"to an entry below a dangling parent", "S", "Q", nil, "Q"},
		{"to an entry on a cycle", "S", "Y", ErrCycle, ""},
		{"to a self-parented user message", "S", "P", ErrCycle, ""},
		{"from a self-parented entry", "P", "S", nil, "S"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := sessiontest.Read(t, path)
			var res *NavigateResult
			var err error
			noHang(t, 5*time.Second, func() {
				res, err = Navigate(context.Background(), sessiontest.Snapshot(t, path), tc.target, NavigateOptions{FromLeaf: tc.from, Summarize: true, Summarizer: &fake{}})
			})
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !bytes.Equal(before, sessiontest.Read(t, path)) {
					t.Errorf("err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Position != tc.position {
				t.Errorf("position %q, want %q", res.Position, tc.position)
			}
			var ctxLen int
			noHang(t, 5*time.Second, func() { ctxLen = len(sessiontest.Index(t, path).BuildContext("").Messages) })
			_ = ctxLen
		})
	}
}

func TestUndoCompaction(t *testing.T) {
	path := writeSession(t,
		user("u1", "", "first"), asst("a1", "u1", "one"),
		user("u2", "a1", "second"), asst("a2", "u2", "two", toolCall{"edit", "e.go"}),
		compactionLine("c1", "a2", "SUMMARY ONE", "u2", details(nil, []string{"e.go"}), false),
		user("u3", "c1", "third"), asst("a3", "u3", "three"),
		compactionLine("c2", "a3", "SUMMARY TWO", "u3", nil, false),
		user("u4", "c2", "fourth"), asst("a4", "u4", "four"),
	)
	ix := sessiontest.Index(t, path)
	wantFirst := rawMessages(ix.BuildContext("a3").Messages)
	wantSecond := rawMessages(ix.BuildContext("a2").Messages)
	if len(wantSecond) != 4 {
		t.Fatalf("pre-compaction context %d messages", len(wantSecond))
	}

	before := sessiontest.Read(t, path)
	res, err := UndoCompaction(context.Background(), sessiontest.Snapshot(t, path), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.UndoneCompactionID != "c2" || res.Position != "a3" || res.MarkerEntry == nil || res.SummaryEntry != nil || res.LeafID != res.MarkerEntry.ID {
		t.Fatalf("res %+v", res)
	}
	if d := field(t, res.MarkerEntry, "data").(map[string]any); d["undoneCompactionId"] != "c2" || d["fromId"] != "a4" || d["targetId"] != "a3" {
		t.Errorf("marker data %v", d)
	}
	if got := rawMessages(sessiontest.Index(t, path).BuildContext("").Messages); !reflect.DeepEqual(got, wantFirst) {
		t.Errorf("context after the first undo\n%v\nwant\n%v", got, wantFirst)
	}
	if added := appended(t, path, before); len(added) != 1 {
		t.Errorf("%d entries appended", len(added))
	}

	res, err = UndoCompaction(context.Background(), sessiontest.Snapshot(t, path), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.UndoneCompactionID != "c1" {
		t.Errorf("second undo: %s", res.UndoneCompactionID)
	}
	if got := rawMessages(sessiontest.Index(t, path).BuildContext("").Messages); !reflect.DeepEqual(got, wantSecond) {
		t.Errorf("context after the second undo\n%v\nwant\n%v", got, wantSecond)
	}

	before = sessiontest.Read(t, path)
	if _, err := UndoCompaction(context.Background(), sessiontest.Snapshot(t, path), ""); !errors.Is(err, ErrNoCompaction) {
		t.Errorf("third undo: %v", err)
	}
	if !bytes.Equal(before, sessiontest.Read(t, path)) {
		t.Error("the file changed")
	}
	// Nothing was deleted: every original entry is still there.
	ix = sessiontest.Index(t, path)
	for _, id := range []string{"u1", "a1", "u2", "a2", "c1", "u3", "a3", "c2", "u4", "a4"} {
		if ix.Entry(id) == nil {
			t.Errorf("%s is gone", id)
		}
	}
}

// A compaction made on a user message: undo lands on that message itself, so the
// context keeps it (the user-message rule of navigation does not apply).
func TestUndoCompactionOnUserMessage(t *testing.T) {
	path := writeSession(t,
		user("u1", "", "first"), asst("a1", "u1", "one"), user("u2", "a1", "pending question"),
		compactionLine("c1", "u2", "S", "u2", nil, false),
		asst("a2", "c1", "answer"),
	)
	want := rawMessages(sessiontest.Index(t, path).BuildContext("u2").Messages)
	res, err := UndoCompaction(context.Background(), sessiontest.Snapshot(t, path), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Position != "u2" || res.HasEditorText {
		t.Errorf("res %+v", res)
	}
	if got := rawMessages(sessiontest.Index(t, path).BuildContext("").Messages); !reflect.DeepEqual(got, want) {
		t.Errorf("context %v, want %v", got, want)
	}
}

func TestSetLabel(t *testing.T) {
	path := mainTree(t)
	e, err := SetLabel(path, "u2", "checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	if e.ParentID != "a3" || e.Label().TargetID != "u2" || e.Label().Label != "checkpoint" {
		t.Errorf("entry %s", e.Raw())
	}
	ix := sessiontest.Index(t, path)
	if ix.Label("u2") != "checkpoint" || ix.LeafID() != e.ID {
		t.Errorf("label %q leaf %s", ix.Label("u2"), ix.LeafID())
	}
	// The label never enters the context.
	if got := texts(ix.BuildContext("").Messages); len(got) != 4 {
		t.Errorf("context %v", got)
	}
	c, err := SetLabel(path, "u2", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.ParentID != e.ID || c.RawField("label") != nil {
		t.Errorf("clearing entry %s", c.Raw())
	}
	if l := sessiontest.Index(t, path).Label("u2"); l != "" {
		t.Errorf("label after clearing %q", l)
	}
	before := sessiontest.Read(t, path)
	if _, err := SetLabel(path, "non-existent", "x"); err == nil || err.Error() != "entry non-existent not found" {
		t.Errorf("unknown: %v", err)
	}
	if !bytes.Equal(before, sessiontest.Read(t, path)) {
		t.Error("the file changed")
	}
}

// A v1 file has no ids on disk: Pi renumbers it on open (and so does session.Load, so
// its ids cannot even be named across two loads); nothing is ever written to it.
func TestWritableRefusesV1(t *testing.T) {
	data := []byte(`{"type":"session","id":"s1","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/tmp"}
{"type":"message","timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"user","content":"hi","timestamp":1}}
`)
	f, err := session.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := writable(f); !errors.Is(err, ErrOldFormat) {
		t.Errorf("v1: %v", err)
	}
	f, err = session.Load(mainTree(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := writable(f); err != nil {
		t.Errorf("v3: %v", err)
	}
}

// Every entry of the corpus's defective files as a target: each navigation ends (with a
// result or ErrCycle) and leaves a file whose context builds.
func TestNavigateCorpusDefectiveFiles(t *testing.T) {
	for _, name := range []string{"cycle.jsonl", "self-parent.jsonl", "orphan.jsonl", "multi-root.jsonl", "torn-last-line.jsonl"} {
		src := corpus.Path("synthetic/" + name)
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		ix := sessiontest.Index(t, src)
		for _, e := range ix.Entries() {
			path := t.TempDir() + "/" + name
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			var err error
			noHang(t, 5*time.Second, func() {
				_, err = Navigate(context.Background(), sessiontest.Snapshot(t, path), e.ID, NavigateOptions{Summarize: true, Summarizer: compaction.Extractive{}, Label: "l"})
			})
			if err != nil && !errors.Is(err, ErrCycle) {
				t.Errorf("%s → %s: %v", name, e.ID, err)
			}
			noHang(t, 5*time.Second, func() { sessiontest.Index(t, path).BuildContext("") })
		}
	}
}
