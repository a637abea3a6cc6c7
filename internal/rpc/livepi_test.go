package rpc_test

// A real `pi` 1.6.0 (the CLI in RPC mode, on Node 22, offline against
// test/pi/fake-openai.mjs) with pi-lsp's Pi extension (editors/pi/extension.ts) loaded,
// for the tests that drive a live pi from the editor through the bridge.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/pirpc"
)

// needLivePi skips (or, with PI_LSP_REQUIRE_ORACLE=1, fails) without Node 22 and Pi.
func needLivePi(t testing.TB) { t.Helper(); oracle.NeedPiCLI(t, "this test") }

// shortTempDir is a temp dir with a short path (a Unix socket path has at most 107
// bytes), removed after the test.
func shortTempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "plb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// fakeOpenAI is a running test/pi/fake-openai.mjs.
type fakeOpenAI struct {
	Port int
	Log  string
}

func startFakeOpenAI(t testing.TB, ctx context.Context, dir string) *fakeOpenAI {
	t.Helper()
	log := filepath.Join(dir, "fake-requests.jsonl")
	cmd := isolate.GroupCmd(ctx, oracle.Node(), filepath.Join(oracle.RepoRoot(), "test", "pi", "fake-openai.mjs"), "0", log)
	cmd.Env = append(os.Environ(), "FAKE_OPENAI_MAX_SECONDS=600")
	out := isolate.StartPiped(t, cmd)
	t.Cleanup(func() { _ = isolate.KillGroup(cmd); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("fake server: %v", err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("fake server port %q: %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return &fakeOpenAI{Port: port, Log: log}
}

// Requests are the fake server's request log records.
func (f *fakeOpenAI) Requests(t testing.TB) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(f.Log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range bytes.Split(data, []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// writePiAgentDir points Pi at the fake server (as test/pi/pi-rpc.mjs writeAgentDir).
func writePiAgentDir(t testing.TB, agentDir string, port, keepRecent int) {
	t.Helper()
	cost := map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
	models := map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": fmt.Sprintf("http://127.0.0.1:%d/v1", port), "api": "openai-completions", "apiKey": "fake-key",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false, "supportsStore": false},
		"models": []any{map[string]any{"id": "fake-model", "name": "Fake Model", "reasoning": false, "input": []string{"text"},
			"contextWindow": 128000, "maxTokens": 4096, "cost": cost}},
	}}}
	settings := map[string]any{"defaultProvider": "fake", "defaultModel": "fake-model", "quietStartup": true,
		"enableInstallTelemetry": false, "retry": map[string]any{"enabled": false},
		"compaction": map[string]any{"enabled": true, "reserveTokens": 16384, "keepRecentTokens": keepRecent}}
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"models.json": models, "settings.json": settings} {
		b, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(filepath.Join(agentDir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// livePi is one running `pi --mode rpc` with the bridge extension.
type livePi struct {
	*pirpc.Proc
	t    testing.TB
	mu   sync.Mutex
	next int
}

type livePiConfig struct {
	Root       string // private dir for HOME, XDG_*, TMPDIR and Pi's agent dir
	RuntimeDir string // XDG_RUNTIME_DIR (the bridge registers in RuntimeDir/pi-lsp)
	Workspace  string
	Session    string
	Port       int
	KeepRecent int
	NoBridge   bool // start pi without the extension
	// Installed: the extension was installed with `pi install` (no -e; packages load).
	Installed bool
}

func startLivePi(t testing.TB, ctx context.Context, c livePiConfig) *livePi {
	t.Helper()
	agentDir := filepath.Join(c.Root, "pi-agent")
	if c.KeepRecent == 0 {
		c.KeepRecent = 30
	}
	if !c.Installed { // an installed package's agent dir is the caller's
		writePiAgentDir(t, agentDir, c.Port, c.KeepRecent)
	}
	env := piEnv(c.Root, c.RuntimeDir, agentDir)
	args := []string{oracle.PiCLI(), "--mode", "rpc", "--provider", "fake", "--model", "fake-model",
		"--no-skills", "--no-prompt-templates", "--no-themes", "--no-context-files"}
	if !c.Installed {
		args = append(args, "--no-extensions")
	}
	if !c.NoBridge && !c.Installed {
		args = append(args, "-e", filepath.Join(oracle.RepoRoot(), "editors", "pi", "extension.ts"))
	}
	args = append(args, "--session", c.Session)
	return runLivePi(t, ctx, c.Workspace, env, args)
}

// piEnv is pi's environment: HOME, TMPDIR, XDG_* and its agent dir under root.
func piEnv(root, runtimeDir, agentDir string) []string {
	env := append([]string{}, pirpc.Environ("PI_CODING_AGENT")...)
	for _, d := range []string{"home", "tmp", "xdg/config", "xdg/data", "xdg/cache", "xdg/state"} {
		_ = os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	return append(env, "HOME="+filepath.Join(root, "home"), "TMPDIR="+filepath.Join(root, "tmp"),
		"XDG_CONFIG_HOME="+filepath.Join(root, "xdg/config"), "XDG_DATA_HOME="+filepath.Join(root, "xdg/data"),
		"XDG_CACHE_HOME="+filepath.Join(root, "xdg/cache"), "XDG_STATE_HOME="+filepath.Join(root, "xdg/state"),
		"XDG_RUNTIME_DIR="+runtimeDir, "PI_CODING_AGENT_DIR="+agentDir,
		"PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0", "NO_COLOR=1")
}

func runLivePi(t testing.TB, ctx context.Context, dir string, env, args []string) *livePi {
	t.Helper()
	cmd := isolate.GroupCmd(ctx, oracle.Node(), args...)
	cmd.Dir = dir
	cmd.Env = env
	p := &livePi{Proc: pirpc.Start(t, cmd), t: t}
	p.Send(map[string]any{"type": "get_state"}, 60*time.Second)
	return p
}

// Send sends an RPC command and returns its (successful) response.
func (p *livePi) Send(cmd map[string]any, timeout time.Duration) map[string]any {
	p.t.Helper()
	r := p.SendAllowFail(cmd, timeout)
	if r["success"] != true {
		p.t.Fatalf("pi: %v failed: %v", cmd["type"], r["error"])
	}
	return r
}

func (p *livePi) SendAllowFail(cmd map[string]any, timeout time.Duration) map[string]any {
	p.t.Helper()
	p.mu.Lock()
	p.next++
	id := fmt.Sprintf("t%d", p.next)
	p.mu.Unlock()
	m := map[string]any{}
	for k, v := range cmd {
		m[k] = v
	}
	m["id"] = id
	if err := p.Proc.Send(m); err != nil {
		p.t.Fatalf("pi: writing %v: %v\n%s", cmd["type"], err, p.Stderr())
	}
	r, err := p.Await(timeout, func(l map[string]any) bool { return isResponse(l) && l["id"] == id })
	switch err {
	case pirpc.ErrExited:
		p.t.Fatalf("pi exited waiting for %v\n%s", cmd["type"], p.Stderr())
	case pirpc.ErrTimeout:
		p.t.Fatalf("pi: no response to %v within %v\n%s", cmd["type"], timeout, p.Stderr())
	}
	return r
}

// isResponse tells pi's answers to commands from its events.
func isResponse(line map[string]any) bool {
	_, ok := line["id"].(string)
	return line["type"] == "response" && ok
}

// events are pi's lines that are not answers to commands.
func (p *livePi) events() []map[string]any {
	var out []map[string]any
	for _, l := range p.Lines() {
		if !isResponse(l) {
			out = append(out, l)
		}
	}
	return out
}

// Mark is the number of events so far.
func (p *livePi) Mark() int { return len(p.events()) }

// Events are the events from mark on.
func (p *livePi) Events(mark int) []map[string]any { return p.events()[mark:] }

// WaitEvent waits for an event from mark on.
func (p *livePi) WaitEvent(mark int, timeout time.Duration, desc string, pred func(map[string]any) bool) map[string]any {
	p.t.Helper()
	n := 0 // the events seen so far
	e, err := p.Await(timeout, func(l map[string]any) bool {
		if isResponse(l) {
			return false
		}
		n++
		return n > mark && pred(l)
	})
	if err != nil {
		p.t.Fatalf("pi: no %s within %v\n%s", desc, timeout, p.Stderr())
	}
	return e
}

// Prompt sends a prompt and waits until pi settled.
func (p *livePi) Prompt(text string) {
	p.t.Helper()
	mark := p.Mark()
	p.Send(map[string]any{"type": "prompt", "message": text}, 60*time.Second)
	p.WaitEvent(mark, 60*time.Second, "agent_settled", func(e map[string]any) bool { return e["type"] == "agent_settled" })
}

// Entries is what pi holds in memory (get_entries) and its leaf.
func (p *livePi) Entries() ([]map[string]any, string) {
	p.t.Helper()
	r := p.Send(map[string]any{"type": "get_entries"}, 30*time.Second)
	data := r["data"].(map[string]any)
	var out []map[string]any
	for _, e := range data["entries"].([]any) {
		out = append(out, e.(map[string]any))
	}
	leaf, _ := data["leafId"].(string)
	return out, leaf
}

// WaitBridge waits for the extension's registration of session in dir.
func (p *livePi) WaitBridge(dir, session string) *bridge.Registration {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		reg, err := bridge.Find(context.Background(), session, dir)
		if err == nil {
			return reg
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no bridge registration for %s in %s: %v\n%s", session, dir, err, p.Stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// installGenuine16 copies a genuine Pi 1.6.0 session into dir under its name, with the
// header's cwd set to cwd (real pi refuses a session whose cwd does not exist).
func installGenuine16(t testing.TB, name, dir, cwd string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "genuine-1.6", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	var hdr map[string]any
	if err := json.Unmarshal(first, &hdr); err != nil {
		t.Fatal(err)
	}
	hdr["cwd"] = cwd
	hb, _ := json.Marshal(hdr)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := strings.NewReplacer(":", "-", ".", "-").Replace(hdr["timestamp"].(string))
	path := filepath.Join(dir, ts+"_"+hdr["id"].(string)+".jsonl")
	if err := os.WriteFile(path, append(append(hb, '\n'), rest...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fileEntries reads a session file's entries (not the header).
func fileEntries(t testing.TB, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i == 0 || len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		out = append(out, m)
	}
	return out
}
