package rpc_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

func TestInitializeAdvertisesCommandTable(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}})
	var res struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands         []string `json:"commands"`
				WorkDoneProgress bool     `json:"workDoneProgress"`
			} `json:"executeCommandProvider"`
			Experimental struct {
				Pi struct {
					Methods       []string `json:"methods"`
					Notifications []string `json:"notifications"`
					Hooks         []string `json:"hooks"`
				} `json:"pi"`
			} `json:"experimental"`
		} `json:"capabilities"`
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(e.Init, &res); err != nil {
		t.Fatal(err)
	}
	caps := res.Capabilities
	if !slices.Equal(caps.ExecuteCommandProvider.Commands, rpc.CommandIDs()) {
		t.Errorf("commands = %v, want the table %v", caps.ExecuteCommandProvider.Commands, rpc.CommandIDs())
	}
	want := []string{"pi.compact", "pi.navigate", "pi.undoCompaction", "pi.label", "pi.tree", "pi.sessions", "pi.files", "pi.context", "pi.selectSession"}
	for _, id := range want {
		if !slices.Contains(caps.ExecuteCommandProvider.Commands, id) {
			t.Errorf("command %s missing from executeCommandProvider", id)
		}
	}
	if !caps.ExecuteCommandProvider.WorkDoneProgress {
		t.Errorf("executeCommandProvider.workDoneProgress = false")
	}
	methods := slices.Clone(caps.Experimental.Pi.Methods)
	slices.Sort(methods)
	if !slices.Equal(methods, rpc.MethodNames()) {
		t.Errorf("experimental.pi.methods = %v, want %v", methods, rpc.MethodNames())
	}
	for _, n := range []string{"pi/sessionChanged", "pi/compactionStart", "pi/compactionEnd", "pi/fileOps", "pi/contextUsage"} {
		if !slices.Contains(caps.Experimental.Pi.Notifications, n) {
			t.Errorf("experimental.pi.notifications lacks %s", n)
		}
	}
	if !slices.Equal(caps.Experimental.Pi.Hooks, []string{"pi/beforeCompact", "pi/beforeTree"}) {
		t.Errorf("experimental.pi.hooks = %v", caps.Experimental.Pi.Hooks)
	}
	if res.ServerInfo.Name != "pi-lsp" {
		t.Errorf("serverInfo.name = %q", res.ServerInfo.Name)
	}
	// A second initialize is refused, and the server keeps serving.
	_, err := e.Call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
	wantCode(t, err, rpc.CodeInvalidRequest)
	if _, err := e.Call("pi/tree", nil); err != nil {
		t.Fatalf("pi/tree after a second initialize: %v", err)
	}
	// The current session is the workspace's newest, and its state is pushed.
	e.Await(5*time.Second, lsptest.NotificationMatching("pi/sessionChanged", "for the copied session",
		lsptest.Has(map[string]any{"session": e.Sessions["tree-nav"], "leafId": "9e8d20a8"})))
}

func TestRequestBeforeInitialize(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}, SkipInitialize: true})
	for _, m := range []string{"pi/tree", "shutdown", "workspace/executeCommand", "no/such/method"} {
		// LSP: every request before initialize, shutdown included, gets -32002.
		_, err := e.Call(m, map[string]any{})
		wantCode(t, err, rpc.CodeServerNotInitialized)
	}
	// Notifications before initialize are dropped, not answered.
	e.Notify("$/cancelRequest", map[string]any{"id": 1})
	e.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{}})
	e.Initialize(lsptest.Config{})
	res, err := e.Tree(nil)
	if err != nil {
		t.Fatalf("pi/tree after initialize: %v", err)
	}
	if got := lsptest.Str(res.LeafID); got != "9e8d20a8" {
		t.Errorf("leafId = %v", got)
	}
}

func TestAfterShutdown(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}})
	if _, err := e.Call("shutdown", nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	for _, m := range []string{"pi/tree", "workspace/executeCommand", "no/such/method", "shutdown", "initialize"} {
		_, err := e.Call(m, map[string]any{})
		if m == "shutdown" && err == nil {
			continue // a repeated shutdown may be acknowledged again
		}
		wantCode(t, err, rpc.CodeInvalidRequest)
	}
	e.Notify("exit", nil)
	if code := e.ExitCode(2 * time.Second); code != 0 {
		t.Errorf("exit after shutdown: Serve returned %d, want 0", code)
	}
}

func TestUnknownMethods(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}})
	for _, m := range []string{"pi/noSuchThing", "textDocument/hover", "$/unknownRequest"} {
		_, err := e.Call(m, map[string]any{})
		wantCode(t, err, rpc.CodeMethodNotFound)
	}
	// Unknown notifications (including $/ ones) are ignored and never answered.
	mark := e.Mark()
	e.Notify("pi/noSuchNotification", map[string]any{"x": 1})
	e.Notify("$/setTrace", map[string]any{"value": "off"})
	e.Notify("textDocument/didOpen", []int{1, 2, 3})
	if _, err := e.Call("pi/files", nil); err != nil {
		t.Fatalf("pi/files after unknown notifications: %v", err)
	}
	for _, m := range e.Messages()[mark:] {
		if m.Kind == lsptest.KindResponse && m.Err != nil {
			t.Errorf("unexpected error answer after notifications: %s", m)
		}
		if m.Kind == lsptest.KindUndecodable {
			t.Errorf("unexpected undecodable message: %s", m)
		}
	}
	// An unknown command is a params error of executeCommand.
	_, err := e.Call("workspace/executeCommand", map[string]any{"command": "pi.noSuchCommand"})
	wantCode(t, err, rpc.CodeInvalidParams)
}

func TestExitCodes(t *testing.T) {
	t.Run("shutdown then exit", func(t *testing.T) {
		e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}})
		if _, err := e.Call("shutdown", nil); err != nil {
			t.Fatal(err)
		}
		e.Notify("exit", nil)
		if code := e.ExitCode(2 * time.Second); code != 0 {
			t.Errorf("Serve returned %d, want 0", code)
		}
	})
	t.Run("exit without shutdown", func(t *testing.T) {
		e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}})
		e.Notify("exit", nil)
		if code := e.ExitCode(2 * time.Second); code != 1 {
			t.Errorf("Serve returned %d, want 1", code)
		}
	})
	t.Run("EOF without shutdown", func(t *testing.T) {
		e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}})
		if _, err := e.Call("pi/tree", nil); err != nil {
			t.Fatal(err)
		}
		_ = e.Conn.Close()
		if code := e.ExitCode(2 * time.Second); code != 1 {
			t.Errorf("Serve returned %d, want 1", code)
		}
	})
	t.Run("EOF before initialize", func(t *testing.T) {
		e := lsptest.NewEnv(t, lsptest.Config{SkipInitialize: true})
		_ = e.Conn.Close()
		if code := e.ExitCode(2 * time.Second); code != 1 {
			t.Errorf("Serve returned %d, want 1", code)
		}
	})
}
