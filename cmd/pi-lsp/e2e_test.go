package main

// Process-level test of the built binary: it is built into a temp dir, spawned in its
// own process group with a deadline (the group is killed in Cleanup), and driven over
// its real stdio by go.lsp.dev/jsonrpc2 v0.10.0, a client that shares no framing code
// with the server. Everything lives in temp dirs; the summarizer is a local fake
// OpenAI-compatible endpoint.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	lsp "go.lsp.dev/jsonrpc2"

	"github.com/pi-lsp/pi-lsp/internal/session"
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

// e2eLLM is a fake OpenAI-compatible streaming endpoint. With hold set, answers stop
// after their first chunk until the request is cancelled.
type e2eLLM struct {
	srv     *httptest.Server
	mu      sync.Mutex
	hold    bool
	started chan struct{}
}

func newE2ELLM(t *testing.T) *e2eLLM {
	l := &e2eLLM{started: make(chan struct{}, 16)}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case l.started <- struct{}{}:
		default:
		}
		l.mu.Lock()
		hold := l.hold
		l.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		chunk := func(content string, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			fl.Flush()
		}
		for _, part := range []string{"## Goal\n", "End-to-end ", "summary."} {
			time.Sleep(20 * time.Millisecond)
			chunk(part, nil)
			if hold {
				<-r.Context().Done()
				return
			}
		}
		chunk("", "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
		fl.Flush()
	}))
	t.Cleanup(func() { l.srv.CloseClientConnections(); l.srv.Close() })
	return l
}

// e2eServer is a running pi-lsp process and its client.
type e2eServer struct {
	t       *testing.T
	cmd     *exec.Cmd
	conn    lsp.Conn
	stderr  *bytes.Buffer
	waitErr chan error

	mu      sync.Mutex
	notes   []e2eNote
	changed chan struct{}
}

type e2eNote struct {
	method string
	params json.RawMessage
}

type stdio struct {
	io.ReadCloser
	io.WriteCloser
}

func (s stdio) Close() error {
	err := s.WriteCloser.Close()
	_ = s.ReadCloser.Close()
	return err
}

func startE2E(t *testing.T, env []string) *e2eServer {
	bin := e2eBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, bin, "serve", "--stdio")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &e2eServer{t: t, cmd: cmd, stderr: &bytes.Buffer{}, waitErr: make(chan error, 1), changed: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: s.stderr}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { s.waitErr <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cancel()
		<-s.conn.Done()
		if t.Failed() {
			t.Logf("server stderr:\n%s", cmd.Stderr.(*lockedWriter).String())
		}
	})
	s.conn = lsp.NewConn(lsp.NewStream(stdio{stdout, stdin}))
	s.conn.Go(context.Background(), func(ctx context.Context, reply lsp.Replier, req lsp.Request) error {
		if _, isCall := req.(*lsp.Call); isCall {
			// window/workDoneProgress/create (and anything else) is acknowledged.
			return reply(ctx, nil, nil)
		}
		s.mu.Lock()
		s.notes = append(s.notes, e2eNote{req.Method(), append(json.RawMessage(nil), req.Params()...)})
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
		return nil
	})
	return s
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

func (s *e2eServer) call(method string, params any, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := s.conn.Call(ctx, method, params, result)
	return err
}

// await waits for a notification satisfying pred.
func (s *e2eServer) await(desc string, pred func(method string, params json.RawMessage) bool) json.RawMessage {
	s.t.Helper()
	deadline := time.After(20 * time.Second)
	seen := 0
	for {
		s.mu.Lock()
		notes, changed := s.notes[seen:], s.changed
		seen = len(s.notes)
		s.mu.Unlock()
		for _, n := range notes {
			if pred(n.method, n.params) {
				return n.params
			}
		}
		select {
		case <-changed:
		case <-deadline:
			s.t.Fatalf("timed out waiting for %s", desc)
		}
	}
}

func (s *e2eServer) exitStatus(timeout time.Duration) int {
	s.t.Helper()
	select {
	case err := <-s.waitErr:
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			return ee.ExitCode()
		default:
			s.t.Fatalf("wait: %v", err)
		}
	case <-time.After(timeout):
		s.t.Fatalf("pi-lsp did not exit within %v", timeout)
	}
	return -1
}

// e2eWorkspace prepares temp dirs with two copies of a genuine session and returns the
// process environment, the workspace and the session paths.
func e2eWorkspace(t *testing.T) ([]string, string, []string) {
	root := t.TempDir()
	agent := filepath.Join(root, "agent")
	work := filepath.Join(root, "project")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "genuine", "auto-threshold.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := session.SessionDir(agent, work)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i, name := range []string{"2026-11-29T13-02-03-796Z_a.jsonl", "2026-11-29T13-02-03-796Z_b.jsonl"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(time.Duration(i-2) * time.Minute)
		_ = os.Chtimes(p, mt, mt)
		paths = append(paths, p)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(root, "home"),
		"PI_CODING_AGENT_DIR=" + agent,
		"XDG_CONFIG_HOME=" + filepath.Join(root, "xdg", "config"),
		"XDG_DATA_HOME=" + filepath.Join(root, "xdg", "data"),
		"XDG_CACHE_HOME=" + filepath.Join(root, "xdg", "cache"),
		"XDG_STATE_HOME=" + filepath.Join(root, "xdg", "state"),
		"PI_LSP_E2E_KEY=test-key",
	}
	return env, work, paths
}

func TestE2ECoreFlow(t *testing.T) {
	llm := newE2ELLM(t)
	env, work, paths := e2eWorkspace(t)
	s := startE2E(t, env)
	uri := "file://" + work
	var init struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	if err := s.call("initialize", map[string]any{
		"processId": os.Getpid(), "rootUri": uri,
		"workspaceFolders": []any{map[string]any{"uri": uri, "name": "project"}},
		"capabilities":     map[string]any{"window": map[string]any{"workDoneProgress": true}},
		"initializationOptions": map[string]any{"summarizer": "openai", "baseUrl": llm.srv.URL + "/v1", "model": "fake",
			"apiKeyEnv": "PI_LSP_E2E_KEY", "keepRecentTokens": 200},
	}, &init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if !strings.Contains(strings.Join(init.Capabilities.ExecuteCommandProvider.Commands, ","), "pi.compact") {
		t.Fatalf("commands %v", init.Capabilities.ExecuteCommandProvider.Commands)
	}
	if err := s.conn.Notify(context.Background(), "initialized", map[string]any{}); err != nil {
		t.Fatal(err)
	}

	// pi.tree on the current session (the newest copy).
	var tree struct {
		Session string            `json:"session"`
		LeafID  string            `json:"leafId"`
		Roots   []json.RawMessage `json:"roots"`
	}
	if err := s.call("workspace/executeCommand", map[string]any{"command": "pi.tree", "arguments": []any{}}, &tree); err != nil {
		t.Fatalf("pi.tree: %v", err)
	}
	if tree.Session != paths[1] || tree.LeafID != "8852ca19" || len(tree.Roots) == 0 {
		t.Fatalf("pi.tree: session %s leaf %s roots %d", tree.Session, tree.LeafID, len(tree.Roots))
	}

	// pi.compact with server-created progress.
	var compacted struct {
		Entry struct {
			ID       string `json:"id"`
			ParentID string `json:"parentId"`
			Summary  string `json:"summary"`
		} `json:"entry"`
	}
	if err := s.call("workspace/executeCommand", map[string]any{"command": "pi.compact", "arguments": []any{map[string]any{}}}, &compacted); err != nil {
		t.Fatalf("pi.compact: %v", err)
	}
	if compacted.Entry.ParentID != "8852ca19" || !strings.HasPrefix(compacted.Entry.Summary, "## Goal\nEnd-to-end summary.") {
		t.Errorf("entry %+v", compacted.Entry)
	}
	var token json.RawMessage
	s.await("progress begin at 0%", func(m string, p json.RawMessage) bool {
		var pp struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind       string   `json:"kind"`
				Title      string   `json:"title"`
				Percentage *float64 `json:"percentage"`
			} `json:"value"`
		}
		if m != "$/progress" || json.Unmarshal(p, &pp) != nil || pp.Value.Kind != "begin" || pp.Value.Title != "Compacting session" {
			return false
		}
		if pp.Value.Percentage == nil || *pp.Value.Percentage != 0 {
			t.Errorf("begin without percentage 0: %s", p)
		}
		token = pp.Token
		return true
	})
	s.await("progress end", func(m string, p json.RawMessage) bool {
		return m == "$/progress" && bytes.Contains(p, []byte(`"kind":"end"`)) && bytes.Contains(p, token)
	})
	end := s.await("pi/compactionEnd", func(m string, p json.RawMessage) bool { return m == "pi/compactionEnd" })
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
	data, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"id":"`+compacted.Entry.ID+`"`)) {
		t.Errorf("the compaction entry is not in the file")
	}

	// Cancel a second compaction (of the other copy) with a raw $/cancelRequest.
	llm.mu.Lock()
	llm.hold = true
	llm.mu.Unlock()
	for len(llm.started) > 0 {
		<-llm.started // the first compaction's
	}
	before, _ := os.ReadFile(paths[0])
	errc := make(chan error, 1)
	idc := make(chan lsp.ID, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		id, err := s.conn.Call(ctx, "pi/compact", map[string]any{"session": paths[0]}, nil)
		idc <- id
		errc <- err
	}()
	select {
	case <-llm.started:
	case <-time.After(20 * time.Second):
		t.Fatal("summarizer not called")
	}
	// The library numbers its calls from 1: initialize, pi.tree, pi.compact, then this.
	if err := s.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": 4}); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-idc:
		err := <-errc
		if fmt.Sprint(id) != "4" {
			t.Fatalf("the call had id %v, not the 4 that was cancelled", id)
		}
		var le *lsp.Error
		if !errors.As(err, &le) || le.Code != -32800 {
			t.Fatalf("cancelled compaction answered %v, want -32800", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled compaction not answered")
	}
	s.await("aborted compactionEnd", func(m string, p json.RawMessage) bool {
		return m == "pi/compactionEnd" && bytes.Contains(p, []byte(`"aborted":true`))
	})
	if after, _ := os.ReadFile(paths[0]); !bytes.Equal(before, after) {
		t.Errorf("the cancelled compaction wrote to the file")
	}

	// shutdown answers quickly; exit ends the process with status 0.
	t0 := time.Now()
	if err := s.call("shutdown", nil, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("shutdown took %v", d)
	}
	if err := s.conn.Notify(context.Background(), "exit", nil); err != nil {
		t.Fatal(err)
	}
	if code := s.exitStatus(5 * time.Second); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

func TestE2EExitWithoutShutdown(t *testing.T) {
	env, work, _ := e2eWorkspace(t)
	s := startE2E(t, env)
	if err := s.call("initialize", map[string]any{"processId": nil, "rootUri": "file://" + work, "capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	// Closing stdin without shutdown: the server exits with status 1.
	_ = s.conn.Close()
	if code := s.exitStatus(5 * time.Second); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
}
