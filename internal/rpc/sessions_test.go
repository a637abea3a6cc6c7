package rpc_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// Which session the server works on: listing, selecting (only inside Pi's folder),
// labels and undo over executeCommand, and creating the first one.

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
