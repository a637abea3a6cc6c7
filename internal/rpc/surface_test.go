package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// TestProgressFallbacks: a client without workDoneProgress, or one that refuses the
// token, gets window/showMessage instead of $/progress, and the job still runs.
func TestProgressFallbacks(t *testing.T) {
	check := func(t *testing.T, e *lsptest.Env, path string) {
		before := sessiontest.Read(t, path)
		if _, err := e.Call("pi/compact", nil); err != nil {
			t.Fatal(err)
		}
		if len(appended(t, before, path)) != 1 {
			t.Errorf("nothing compacted")
		}
		msgs := e.Await(5*time.Second, lsptest.NotificationMatching("window/showMessage", "job end", func(p json.RawMessage) bool {
			return strings.HasPrefix(lsptest.Fields(p)["message"].(string), compactTitle+": ")
		}))
		if ps := lsptest.Progresses(msgs); len(ps) != 0 {
			t.Errorf("$/progress sent: %+v", ps)
		}
	}
	t.Run("no capability", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, path := compactEnv(t, llm, lsptest.Config{NoProgress: true})
		check(t, e, path)
		for _, m := range e.Messages() {
			if m.Kind == lsptest.KindCall && m.Method == "window/workDoneProgress/create" {
				t.Errorf("token created for a client without workDoneProgress")
			}
		}
	})
	t.Run("create refused", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, path := compactEnv(t, llm, lsptest.Config{Hooks: lsptest.Hooks{CreateProgress: func(ctx context.Context, p json.RawMessage) (any, error) {
			return nil, errors.New("no progress here")
		}}})
		check(t, e, path)
	})
	t.Run("create never answered, job cancelled", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, path := compactEnv(t, llm, lsptest.Config{Hooks: lsptest.Hooks{CreateProgress: hangs}})
		before := sessiontest.Read(t, path)
		cancelWhileWaiting(t, e, false, "window/workDoneProgress/create")
		if !bytes.Equal(before, sessiontest.Read(t, path)) {
			t.Errorf("the session file changed")
		}
	})
}

// TestProgressCancelTokenSpelling: window/workDoneProgress/cancel finds the job by the
// token's value, however the client spells it.
func TestProgressCancelTokenSpelling(t *testing.T) {
	for _, tc := range []struct {
		name        string
		token       any
		cancelToken json.RawMessage
	}{
		{"escaped string", "tok-x", json.RawMessage(`"tok\u002dx"`)},
		{"number as float", 42, json.RawMessage(`42.0`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm := fakemodel.NewSummarizer(t)
			llm.Set(func(f *fakemodel.Summarizer) { f.Hold = true })
			e, path := compactEnv(t, llm, lsptest.Config{})
			before := sessiontest.Read(t, path)
			p := e.Start("pi/compact", map[string]any{"workDoneToken": tc.token}, true)
			select {
			case <-llm.Started:
			case <-time.After(10 * time.Second):
				t.Fatal("summarizer not called")
			}
			e.Notify("window/workDoneProgress/cancel", map[string]any{"token": tc.cancelToken})
			if _, cerr := p.Wait(5 * time.Second); cerr == nil || cerr.Code != rpc.CodeRequestCancelled {
				t.Fatalf("answer %v", cerr)
			}
			if !bytes.Equal(before, sessiontest.Read(t, path)) {
				t.Errorf("the session file changed")
			}
		})
	}
}

// TestSessionCommands covers pi.sessions, pi.selectSession, pi.label, pi.undoCompaction,
// pi.files and pi.context over executeCommand.
func TestSessionCommands(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav", "auto-threshold"}})
	treeNav, auto := e.Sessions["tree-nav"], e.Sessions["auto-threshold"]
	exec := func(cmd string, arg map[string]any) (map[string]any, error) {
		args := []any{}
		if arg != nil {
			args = append(args, arg)
		}
		res, err := e.Call("workspace/executeCommand", map[string]any{"command": cmd, "arguments": args})
		if err != nil {
			return nil, err
		}
		return lsptest.Fields(res), nil
	}
	res, err := exec("pi.sessions", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res["current"] != auto || len(res["sessions"].([]any)) != 2 || res["dir"] != e.SessionDir {
		t.Errorf("pi.sessions %v", res)
	}
	if res, err = exec("pi.selectSession", map[string]any{"path": treeNav}); err != nil || res["session"] != treeNav {
		t.Fatalf("pi.selectSession %v %v", res, err)
	}
	e.Await(5*time.Second, lsptest.NotificationMatching("pi/sessionChanged", "selected", lsptest.Has(map[string]any{"session": treeNav})))
	if res, err = exec("pi.context", nil); err != nil || res["session"] != treeNav || res["leafId"] != "9e8d20a8" {
		t.Fatalf("pi.context %v %v", res, err)
	}
	if res, err = exec("pi.files", map[string]any{"session": auto}); err != nil || len(res["modifiedFiles"].([]any)) == 0 {
		t.Fatalf("pi.files %v %v", res, err)
	}
	// Labels are appended entries.
	before := sessiontest.Read(t, treeNav)
	if res, err = exec("pi.label", map[string]any{"entryId": "5b9d65c4", "label": "start"}); err != nil || res["label"] != "start" {
		t.Fatalf("pi.label %v %v", res, err)
	}
	if lines := appended(t, before, treeNav); len(lines) != 1 || lines[0]["type"] != "label" || lines[0]["targetId"] != "5b9d65c4" {
		t.Errorf("label entry %v", lines)
	}
	_, err = exec("pi.label", map[string]any{"entryId": "nope", "label": "x"})
	if ce := wantCode(t, err, rpc.CodeRequestFailed); ce.Kind() != rpc.KindNotFound {
		t.Errorf("kind %s", ce.Kind())
	}
	// Undo compaction on the session with one: the leaf returns before it.
	before = sessiontest.Read(t, auto)
	if res, err = exec("pi.undoCompaction", map[string]any{"session": auto}); err != nil || res["compactionId"] != "83073b79" {
		t.Fatalf("pi.undoCompaction %v %v", res, err)
	}
	if len(appended(t, before, auto)) == 0 {
		t.Errorf("nothing appended")
	}
	// The tree-nav path has a compaction only on another branch: nothing to undo.
	_, err = exec("pi.undoCompaction", map[string]any{"session": treeNav})
	if ce := wantCode(t, err, rpc.CodeRequestFailed); ce.Kind() != rpc.KindNotFound {
		t.Errorf("kind %s", ce.Kind())
	}
	// Sessions outside the Pi folder are refused.
	outside := filepath.Join(e.Workspace, "x.jsonl")
	if err := os.WriteFile(outside, before, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = exec("pi.selectSession", map[string]any{"path": outside})
	if ce := wantCode(t, err, rpc.CodeInvalidParams); ce.Kind() != rpc.KindOutsideSessions {
		t.Errorf("kind %s", ce.Kind())
	}
	_, err = exec("pi.selectSession", map[string]any{"path": filepath.Join(e.SessionDir, "..", "..", "..", "work", "project", "x.jsonl")})
	wantCode(t, err, rpc.CodeInvalidParams)
	// More than one argument object is a params error.
	_, err = e.Command("pi.tree", map[string]any{}, map[string]any{})
	wantCode(t, err, rpc.CodeInvalidParams)
}

// TestNoSession: a workspace without sessions answers noSession, and pi/append with
// create starts one in Pi's folder for the workspace.
func TestNoSession(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{})
	_, err := e.Call("pi/tree", nil)
	if ce := wantCode(t, err, rpc.CodeRequestFailed); ce.Kind() != rpc.KindNoSession {
		t.Errorf("kind %s", ce.Kind())
	}
	_, err = e.Call("pi/append", map[string]any{"messages": []any{userMsg("hello", time.Now().UnixMilli())}})
	wantCode(t, err, rpc.CodeRequestFailed)
	res, err := e.Append(map[string]any{"create": true, "messages": []any{userMsg("hello", time.Now().UnixMilli())}})
	if err != nil {
		t.Fatal(err)
	}
	path := res.Session
	if filepath.Dir(path) != e.SessionDir {
		t.Fatalf("created %s, not in %s", path, e.SessionDir)
	}
	f, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.Cwd != e.Workspace || len(f.Entries) != 1 {
		t.Errorf("header cwd %q, %d entries", f.Header.Cwd, len(f.Entries))
	}
	tree, err := e.Tree(nil)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Session != path {
		t.Errorf("the created session is not current")
	}
}

// TestConfigurationChange: workspace/didChangeConfiguration is applied in wire order,
// so the next request already uses it (VS Code's nested piLsp form here).
func TestConfigurationChange(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	t.Setenv("PI_LSP_TEST_KEY", "k")
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"auto-threshold"}, InitOptions: map[string]any{"keepRecentTokens": 200}})
	e.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"piLsp": map[string]any{
		"summarizer": map[string]any{"kind": "openai", "baseUrl": llm.URL, "model": "m", "apiKeyEnv": "PI_LSP_TEST_KEY"},
		"compaction": map[string]any{"keepRecentTokens": 200},
	}}})
	res, err := e.Call("pi/compact", nil)
	if err != nil {
		t.Fatal(err)
	}
	if llm.Requests.Load() == 0 {
		t.Errorf("the new summarizer was not used: %s", lsptest.Trunc(res))
	}
}

// cancelWhileWaiting starts a pi/compact job (with a string id, or a number), cancels it
// once the server made the call that is never answered, and checks that the job
// answers cancelled at once.
func cancelWhileWaiting(t *testing.T, e *lsptest.Env, stringID bool, call string) {
	t.Helper()
	p := e.Start("pi/compact", nil, stringID)
	e.Await(5*time.Second, lsptest.ServerCall(call))
	p.Cancel()
	t0 := time.Now()
	if _, cerr := p.Wait(5 * time.Second); cerr == nil || cerr.Code != rpc.CodeRequestCancelled {
		t.Fatalf("answer %v", cerr)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("the cancelled job waited %v for the unanswered %s request", d, call)
	}
}

// TestCancelWhileHookPending: cancelling a job that waits for the client's hook answers
// at once, without waiting for the hook timeout.
func TestCancelWhileHookPending(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	e, path := hungHookEnv(t, llm, 30*time.Second)
	before := sessiontest.Read(t, path)
	cancelWhileWaiting(t, e, true, "pi/beforeCompact")
	e.Await(5*time.Second, lsptest.NotificationMatching("pi/compactionEnd", "aborted", lsptest.Has(map[string]any{"aborted": true})), lsptest.CompletedProgress(compactTitle))
	if !bytes.Equal(before, sessiontest.Read(t, path)) {
		t.Errorf("the session file changed")
	}
	if llm.Requests.Load() != 0 {
		t.Errorf("the summarizer ran after the cancel")
	}
}
