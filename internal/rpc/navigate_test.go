package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

const navTitle = "Summarizing branch"

// tree-nav.jsonl (genuine): Pi's leaf is 9e8d20a8; 6411358f is the last assistant of
// another branch; b060d9b3 is a user message whose parent is cabe21c9.

func TestNavigateWithoutSummary(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}})
	path := e.Sessions["tree-nav"]
	before := sessiontest.Read(t, path)
	raw, err := e.Command("pi.navigate", map[string]any{"targetId": "6411358f"})
	if err != nil {
		t.Fatal(err)
	}
	res := lsptest.Decode[lsptest.NavigateAnswer](t, raw)
	lines := appended(t, before, path)
	if len(lines) != 1 {
		t.Fatalf("appended %v, want one marker entry", lines)
	}
	marker := lines[0]
	if marker["type"] != "custom" || marker["customType"] != "pi-lsp/navigate" || marker["parentId"] != "6411358f" {
		t.Errorf("marker %v", marker)
	}
	if lsptest.Str(res.LeafID) != marker["id"] || lsptest.Str(res.Position) != "6411358f" || res.SummaryEntry != nil {
		t.Errorf("answer %s", raw)
	}
	// No summary, no progress.
	for _, p := range lsptest.Progresses(e.Messages()) {
		t.Errorf("unexpected progress %+v", p)
	}
	e.Await(5*time.Second, lsptest.NotificationMatching("pi/sessionChanged", "new leaf", lsptest.Has(map[string]any{"leafId": marker["id"], "entries": 46.0})))
	// The tree now marks the new path.
	tree, err := e.Tree(nil)
	if err != nil {
		t.Fatal(err)
	}
	if lsptest.Str(tree.LeafID) != marker["id"] {
		t.Errorf("pi/tree leafId %v", lsptest.Str(tree.LeafID))
	}
	// Navigating to the user message puts its text back in the editor.
	before = sessiontest.Read(t, path)
	res, err = e.Navigate(map[string]any{"targetId": "b060d9b3", "label": "third"})
	if err != nil {
		t.Fatal(err)
	}
	if lsptest.Str(res.Position) != "cabe21c9" || lsptest.Str(res.EditorText) != "SCRIPT:chat third question" {
		t.Errorf("answer %+v", res)
	}
	if len(appended(t, before, path)) == 0 {
		t.Errorf("nothing appended")
	}
	// Unknown targets and missing ids are errors, not crashes.
	_, err = e.Navigate(map[string]any{"targetId": "nope"})
	if ce := wantCode(t, err, rpc.CodeRequestFailed); ce.Kind() != rpc.KindNotFound {
		t.Errorf("kind %s", ce.Kind())
	}
	_, err = e.Navigate(map[string]any{})
	wantCode(t, err, rpc.CodeInvalidParams)
}

func TestNavigateWithSummary(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	llm.Set(func(f *fakemodel.Summarizer) { f.Delay = 30 * time.Millisecond })
	t.Setenv("PI_LSP_TEST_KEY", "k")
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}, InitOptions: llm.Config()})
	path := e.Sessions["tree-nav"]
	before := sessiontest.Read(t, path)
	p := e.Start("workspace/executeCommand", map[string]any{"command": "pi.navigate", "arguments": []any{map[string]any{"targetId": "b060d9b3", "summarize": true}}}, true)
	msgs := e.Await(15*time.Second, lsptest.ResponseTo(p.ID), lsptest.ProgressBeginAtZero(navTitle), lsptest.CompletedProgress(navTitle), lsptest.ServerCall("window/workDoneProgress/create"))
	res, cerr := p.Wait(time.Second)
	if cerr != nil {
		t.Fatal(cerr)
	}
	_ = msgs
	lines := appended(t, before, path)
	if len(lines) != 1 || lines[0]["type"] != "branch_summary" {
		t.Fatalf("appended %v, want one branch_summary", lines)
	}
	bs := lines[0]
	if bs["parentId"] != "cabe21c9" || bs["fromId"] != "9e8d20a8" || bs["fromHook"] == true {
		t.Errorf("branch summary %v", bs)
	}
	if !strings.Contains(bs["summary"].(string), "Fake summary from the test endpoint.") {
		t.Errorf("summary %q", bs["summary"])
	}
	got := lsptest.Fields(res)
	if got["leafId"] != bs["id"] || got["editorText"] != "SCRIPT:chat third question" {
		t.Errorf("answer %s", res)
	}
	if se, _ := got["summaryEntry"].(map[string]any); se == nil || se["id"] != bs["id"] {
		t.Errorf("summaryEntry %v", got["summaryEntry"])
	}
	if llm.Requests.Load() == 0 {
		t.Errorf("summarizer not called")
	}
}

func TestNavigateCancel(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	llm.Set(func(f *fakemodel.Summarizer) { f.Hold = true })
	t.Setenv("PI_LSP_TEST_KEY", "k")
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}, InitOptions: llm.Config()})
	path := e.Sessions["tree-nav"]
	before := sessiontest.Read(t, path)
	p := e.Start("pi/navigate", map[string]any{"targetId": "6411358f", "summarize": true}, false)
	select {
	case <-llm.Started:
	case <-time.After(10 * time.Second):
		t.Fatal("summarizer not called")
	}
	msgs := e.Await(5*time.Second, lsptest.ProgressReportMatching(navTitle, "summarizing"))
	e.Notify("window/workDoneProgress/cancel", map[string]any{"token": json.RawMessage(lsptest.ProgressOf(msgs, navTitle)[0].Token)})
	if _, cerr := p.Wait(5 * time.Second); cerr == nil || cerr.Code != rpc.CodeRequestCancelled {
		t.Fatalf("answer %v, want -32800", cerr)
	}
	e.Await(5*time.Second, lsptest.CompletedProgress(navTitle))
	if !bytes.Equal(sessiontest.Read(t, path), before) {
		t.Errorf("the session file changed")
	}
}

func TestTreeHooks(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		var asked json.RawMessage
		e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}, ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeTree: func(ctx context.Context, p json.RawMessage) (any, error) {
				asked = p
				return map[string]any{"cancel": true}, nil
			}}})
		path := e.Sessions["tree-nav"]
		before := sessiontest.Read(t, path)
		res, err := e.Navigate(map[string]any{"targetId": "6411358f", "summarize": true})
		if err != nil {
			t.Fatalf("pi/navigate: %v (a hook cancel is an answer with cancelled: true, as Pi's navigateTree returns)", err)
		}
		if !res.Cancelled || lsptest.Str(res.LeafID) != "9e8d20a8" {
			t.Errorf("answer %+v", res)
		}
		if !bytes.Equal(sessiontest.Read(t, path), before) {
			t.Errorf("the session file changed")
		}
		q := lsptest.Fields(asked)
		if q["targetId"] != "6411358f" || q["oldLeafId"] != "9e8d20a8" || q["userWantsSummary"] != true {
			t.Errorf("pi/beforeTree params %s", asked)
		}
		e.Await(5*time.Second, lsptest.CompletedProgress(navTitle))
	})
	t.Run("summary from the hook", func(t *testing.T) {
		const text = "Branch summary from the editor."
		e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}, ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeTree: func(ctx context.Context, p json.RawMessage) (any, error) {
				return map[string]any{"summary": map[string]any{"summary": text, "details": map[string]any{"source": "hook"}}}, nil
			}}})
		path := e.Sessions["tree-nav"]
		before := sessiontest.Read(t, path)
		if _, err := e.Navigate(map[string]any{"targetId": "6411358f", "summarize": true}); err != nil {
			t.Fatal(err)
		}
		lines := appended(t, before, path)
		if len(lines) != 1 || lines[0]["type"] != "branch_summary" || lines[0]["summary"] != text || lines[0]["fromHook"] != true {
			t.Fatalf("appended %v, want one branch_summary with exactly the hook's summary and fromHook true", lines)
		}
		if d, _ := lines[0]["details"].(map[string]any); d["source"] != "hook" {
			t.Errorf("details %v", lines[0]["details"])
		}
	})
	t.Run("hook that never answers", func(t *testing.T) {
		e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}, ClientHooks: true, Options: rpc.Options{HookTimeout: 200 * time.Millisecond}, Hooks: lsptest.Hooks{BeforeTree: hangs}})
		path := e.Sessions["tree-nav"]
		before := sessiontest.Read(t, path)
		res, err := e.Navigate(map[string]any{"targetId": "6411358f"})
		if err != nil {
			t.Fatal(err)
		}
		if lines := appended(t, before, path); len(lines) != 1 || lsptest.Str(res.LeafID) != lines[0]["id"] {
			t.Fatalf("appended %v, answer %+v", lines, res)
		}
	})
	t.Run("hook error", func(t *testing.T) {
		e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}, ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeTree: func(ctx context.Context, p json.RawMessage) (any, error) {
				return nil, errors.New("boom")
			}}})
		if _, err := e.Navigate(map[string]any{"targetId": "6411358f"}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPreviewAndCommitBranchSummary previews a branch summary, edits it, and navigates
// with the edited text.
func TestPreviewAndCommitBranchSummary(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"}})
	path := e.Sessions["full-main"]
	ix := sessiontest.Index(t, path)
	var target string
	for _, en := range ix.Path(ix.LeafID()) {
		if en.Role() == session.RoleAssistant {
			target = en.ID // the first assistant message
			break
		}
	}
	prev, err := e.PreviewBranchSummary(map[string]any{"targetId": target})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(prev.Summary, "The user explored a different conversation branch") {
		t.Fatalf("preview: %+v", prev)
	}
	edited := prev.Summary + "\n- remember: the second branch was abandoned on purpose"
	if _, err := e.Navigate(map[string]any{"targetId": target, "summarize": true, "summary": edited}); err != nil {
		t.Fatal(err)
	}
	last := sessiontest.Last(t, path)
	b := last.BranchSummary()
	if last.Type != session.TypeBranchSummary || b.Summary != edited || last.ParentID != target {
		t.Fatalf("entry %s", last.Raw())
	}
	var details struct{ Edited bool }
	json.Unmarshal(last.RawField("details"), &details)
	if !details.Edited {
		t.Fatal("branch summary not marked edited")
	}
}
