package main

// Process-level test of the built binary: it is built into a temp dir, spawned in its
// own process group with a deadline (the group is killed in Cleanup), and driven over
// its real stdio by go.lsp.dev/jsonrpc2 v0.10.0, a client that shares no framing code
// with the server (the shared harness, lsptest, in its spawned mode). Everything lives
// in temp dirs; the summarizer is the shared fake model.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// e2eBinary builds pi-lsp once per test binary run.
var e2eBuild struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

func e2eBinary(t *testing.T) string {
	t.Helper()
	e2eBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "pi-lsp-e2e-bin")
		if err != nil {
			e2eBuild.err = err
			return
		}
		e2eBuild.path = filepath.Join(dir, "pi-lsp")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", e2eBuild.path, ".")
		e2eBuild.out, e2eBuild.err = cmd.CombinedOutput()
	})
	if e2eBuild.err != nil {
		t.Fatalf("go build: %v\n%s", e2eBuild.err, e2eBuild.out)
	}
	return e2eBuild.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if e2eBuild.path != "" {
		_ = os.RemoveAll(filepath.Dir(e2eBuild.path))
	}
	os.Exit(code)
}

// e2eWorkspace prepares temp dirs with two copies of a genuine session (the second the
// newest) and returns the environment of a process that runs in them, the workspace and
// the session paths.
func e2eWorkspace(t *testing.T) ([]string, string, []string) {
	root := t.TempDir()
	d := isolate.Child(t, root, filepath.Join(root, "agent"))
	work := filepath.Join(root, "project")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := session.SessionDir(d.AgentDir, work)
	var paths []string
	for i := range 2 {
		paths = append(paths, corpus.Install(t, corpus.Genuine("auto-threshold"), dir, time.Now().Add(time.Duration(i-2)*time.Minute)))
	}
	env := append([]string{"PATH=" + os.Getenv("PATH")}, d.Env()...)
	return append(env, "PI_LSP_E2E_KEY=test-key"), work, paths
}

// e2eEnv spawns the built binary under the shared harness, on two copies of a genuine
// session (the second the newest).
func e2eEnv(t *testing.T, cfg lsptest.Config) *lsptest.Env {
	cfg.Binary = e2eBinary(t)
	cfg.Corpus = []string{"auto-threshold", "auto-threshold"}
	return lsptest.NewEnv(t, cfg)
}

func TestE2ECoreFlow(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	llm.Set(func(f *fakemodel.Summarizer) {
		f.Text, f.Chunks, f.Delay = "## Goal\nEnd-to-end summary.", 3, 20*time.Millisecond
	})
	e := e2eEnv(t, lsptest.Config{
		InitOptions: lsptest.Merge(llm.Config(), map[string]any{"keepRecentTokens": 200}),
		ExtraEnv:    []string{"PI_LSP_TEST_KEY=test-key"},
	})
	paths := e.Paths
	init := lsptest.Decode[struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}](t, e.Init)
	if !strings.Contains(strings.Join(init.Capabilities.ExecuteCommandProvider.Commands, ","), "pi.compact") {
		t.Fatalf("commands %v", init.Capabilities.ExecuteCommandProvider.Commands)
	}

	// pi.tree on the current session (the newest copy).
	res, err := e.Command("pi.tree")
	if err != nil {
		t.Fatalf("pi.tree: %v", err)
	}
	tree := lsptest.Decode[rpc.TreeResult](t, res)
	if tree.Session != paths[1] || lsptest.Str(tree.LeafID) != "8852ca19" || len(tree.Roots) == 0 {
		t.Fatalf("pi.tree: session %s leaf %s roots %d", tree.Session, lsptest.Str(tree.LeafID), len(tree.Roots))
	}

	// pi.compact with server-created progress.
	res, err = e.Command("pi.compact", map[string]any{})
	if err != nil {
		t.Fatalf("pi.compact: %v", err)
	}
	compacted := lsptest.Decode[struct {
		Entry struct {
			ID       string `json:"id"`
			ParentID string `json:"parentId"`
			Summary  string `json:"summary"`
		} `json:"entry"`
	}](t, res)
	if compacted.Entry.ParentID != "8852ca19" || !strings.HasPrefix(compacted.Entry.Summary, "## Goal\nEnd-to-end summary.") {
		t.Errorf("entry %+v", compacted.Entry)
	}
	msgs := e.Await(20*time.Second, lsptest.ProgressBeginAtZero("Compacting session"), lsptest.CompletedProgress("Compacting session"),
		lsptest.NotificationMatching("pi/compactionEnd", "", nil))
	var end json.RawMessage
	for _, m := range msgs {
		if m.Kind == lsptest.KindNotification && m.Method == "pi/compactionEnd" {
			end = m.Params
			break
		}
	}
	var ev struct {
		Reason  string `json:"reason"`
		Aborted bool   `json:"aborted"`
		Result  struct {
			Summary string `json:"summary"`
		} `json:"result"`
	}
	if err := json.Unmarshal(end, &ev); err != nil || ev.Reason != "manual" || ev.Aborted || ev.Result.Summary != compacted.Entry.Summary {
		t.Errorf("compactionEnd %s", end)
	}
	if !bytes.Contains(sessiontest.Read(t, paths[1]), []byte(`"id":"`+compacted.Entry.ID+`"`)) {
		t.Errorf("the compaction entry is not in the file")
	}

	// Cancel a second compaction (of the other copy) with a raw $/cancelRequest.
	llm.Set(func(f *fakemodel.Summarizer) { f.Hold = true })
	for len(llm.Started) > 0 {
		<-llm.Started // the first compaction's
	}
	before := sessiontest.Read(t, paths[0])
	mark := e.Mark()
	p := e.Start("pi/compact", map[string]any{"session": paths[0]}, false)
	select {
	case <-llm.Started:
	case <-time.After(20 * time.Second):
		t.Fatal("summarizer not called")
	}
	p.Cancel()
	if _, cerr := p.Wait(5 * time.Second); cerr == nil || cerr.Code != -32800 {
		t.Fatalf("cancelled compaction answered %v, want -32800", cerr)
	}
	e.Await(20*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/compactionEnd", "aborted",
		lsptest.Has(map[string]any{"aborted": true}))))
	if after := sessiontest.Read(t, paths[0]); !bytes.Equal(before, after) {
		t.Errorf("the cancelled compaction wrote to the file")
	}

	// shutdown answers quickly; exit ends the process with status 0.
	e.Shutdown(time.Second)
	e.Notify("exit", nil)
	if code := e.ExitCode(5 * time.Second); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

func TestE2EExitWithoutShutdown(t *testing.T) {
	e := e2eEnv(t, lsptest.Config{SkipInitialize: true})
	if _, err := e.Call("initialize", map[string]any{"processId": nil, "rootUri": "file://" + e.Workspace, "capabilities": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	// Closing stdin without shutdown: the server exits with status 1.
	_ = e.Conn.Close()
	if code := e.ExitCode(5 * time.Second); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
}
