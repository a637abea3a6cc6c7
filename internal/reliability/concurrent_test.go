package reliability

// Concurrent writers: pi-lsp (session.Append directly, and pi/append with force through
// the LSP server) and a real `pi` process (RPC prompts against the offline fake model
// server) append to the same session file at the same time. No line is ever
// interleaved (every line parses), every writer's entries are there, and real Pi loads
// the result. While the pi process runs on the session's cwd the server refuses to
// write the session without force (data.kind "ownedByPi") and never compacts it
// automatically, even when an appended answer's usage is over the threshold.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// piWriter is a running test/pi/pi-writer.mjs.
type piWriter struct {
	t      *testing.T
	stdin  io.WriteCloser
	events chan map[string]any
	pid    int
	wait   func() error
}

func startPiWriter(t *testing.T, ctx context.Context, cwd, agentDir, baseDir, sessionFile string) *piWriter {
	t.Helper()
	// The real pi 1.6.0 CLI, on the Node 22 it needs.
	cmd := isolate.GroupCmd(ctx, oracle.Node(), filepath.Join(oracle.RepoRoot(), "test", "pi", "pi-writer.mjs"),
		"--cwd", cwd, "--agent-dir", agentDir, "--base-dir", baseDir, "--session", sessionFile)
	if err := os.MkdirAll(baseDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd.Dir = baseDir
	cmd.Env = append(os.Environ(), "PI_LSP_PI_DIR="+oracle.PiDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := isolate.StartPiped(t, cmd)
	w := &piWriter{t: t, stdin: stdin, events: make(chan map[string]any, 256), wait: cmd.Wait}
	t.Cleanup(func() { _ = isolate.KillGroup(cmd); _ = cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				w.events <- ev
			}
		}
		close(w.events)
	}()
	ev := w.next("ready", 60*time.Second)
	w.pid = int(ev["pid"].(float64))
	return w
}

// next waits for an event of the given kind (failing on "error").
func (w *piWriter) next(kind string, timeout time.Duration) map[string]any {
	w.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				w.t.Fatalf("pi-writer exited while waiting for %q", kind)
			}
			if ev["event"] == "error" {
				w.t.Fatalf("pi-writer: %v", ev["message"])
			}
			if ev["event"] == kind {
				return ev
			}
		case <-deadline:
			w.t.Fatalf("pi-writer: no %q within %v", kind, timeout)
		}
	}
}

func (w *piWriter) send(cmd string) {
	if _, err := fmt.Fprintln(w.stdin, cmd); err != nil {
		w.t.Fatalf("pi-writer: %v", err)
	}
}

// usageMessages is a user message and an assistant answer whose usage is over the
// compaction threshold (115,100 of 128,000 with 16,384 reserved) but not an overflow.
func usageMessages(tag string, size int) []json.RawMessage {
	now := time.Now().UnixMilli()
	user, _ := json.Marshal(map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": tag + " question"}}, "timestamp": now})
	asst, _ := json.Marshal(map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": tag + " " + strings.Repeat("z", size)}},
		"api": "openai-completions", "provider": "editor", "model": "editor-model",
		"usage":      map[string]any{"input": 115000, "output": 100, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 115100, "cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
		"stopReason": "stop", "timestamp": now + 1})
	return []json.RawMessage{user, asst}
}

func TestConcurrentWritersWithRealPi(t *testing.T) {
	needLive(t, "the concurrent-writer test")
	o := liveOracle(t)
	w := newWorld(t)
	root, workspace := w.root, w.workspace
	path := w.install(t, corpus.Genuine("full-main"))
	c := startServer(t, serverConfig{AgentDir: w.agentDir, Workspace: workspace, KeepNotes: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Pi gets its own agent dir (the fake provider, its own compaction off); pi-lsp
	// keeps Pi's default settings, compaction enabled.
	pi := startPiWriter(t, ctx, workspace, filepath.Join(root, "pi-agent"), filepath.Join(root, "pi"), path)
	t.Logf("pi running as pid %d", pi.pid)

	// While pi runs: every write without force is refused, and the file is untouched.
	before := sessiontest.Read(t, path)
	ix := sessiontest.Index(t, path)
	someID := ix.Entries()[2].ID
	refusals := map[string]map[string]any{
		"pi/append":         {"messages": usageMessages("refused", 10)},
		"pi/compact":        {},
		"pi/navigate":       {"targetId": someID},
		"pi/label":          {"entryId": someID, "label": "nope"},
		"pi/undoCompaction": {},
	}
	for method, params := range refusals {
		_, err := c.call(ctx, method, params)
		if kindOf(err) != "ownedByPi" {
			t.Errorf("%s while pi runs: %v (kind %q), want ownedByPi", method, err, kindOf(err))
		} else if !strings.Contains(err.Error(), fmt.Sprint(pi.pid)) {
			t.Errorf("%s: the refusal %q does not name pi's pid %d", method, err, pi.pid)
		}
	}
	if string(sessiontest.Read(t, path)) != string(before) {
		t.Fatal("a refused request changed the file")
	}

	// Now everyone writes at once: pi runs its prompts while pi-lsp's two writers keep
	// appending until pi is done (and at least their minimum counts are written).
	const piPrompts, directAppends, lspAppends = 20, 200, 40
	pi.send(fmt.Sprintf("prompts %d 30000", piPrompts))
	pi.next("prompted", time.Minute) // pi is writing
	piDone := make(chan struct{})
	go func() { pi.next("done", 3*time.Minute); close(piDone) }()
	running := func() bool {
		select {
		case <-piDone:
			return false
		default:
			return true
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	mine := map[string]string{} // id → writer
	overlapping := 0            // pi-lsp appends made while pi was still prompting
	errs := make(chan error, 8)
	wg.Add(2)
	go func() { // session.Append, as the CLI writes
		defer wg.Done()
		r := rand.New(rand.NewSource(1))
		taken := sessiontest.Taken(ix)
		parent := ix.LeafID()
		for i := 0; i < directAppends || running(); i++ {
			msg, _ := json.Marshal(map[string]any{"role": "user", "content": []any{map[string]any{"type": "text",
				"text": fmt.Sprintf("direct %d ", i) + strings.Repeat("d", 1000+r.Intn(64000))}}, "timestamp": time.Now().UnixMilli()})
			out, err := session.Append(path, taken, []session.NewEntry{{Type: session.TypeMessage, ParentID: parent,
				Fields: []session.Field{{Key: "message", Value: json.RawMessage(msg)}}}})
			if err != nil {
				errs <- fmt.Errorf("session.Append: %w", err)
				return
			}
			parent = out[0].ID
			mu.Lock()
			mine[parent] = "direct"
			if running() {
				overlapping++
			}
			mu.Unlock()
			time.Sleep(time.Duration(r.Intn(20)) * time.Millisecond)
		}
	}()
	go func() { // pi/append with force, through the server
		defer wg.Done()
		r := rand.New(rand.NewSource(2))
		for i := 0; i < lspAppends || running(); i++ {
			res, err := c.call(ctx, "pi/append", map[string]any{"messages": usageMessages(fmt.Sprintf("lsp %d", i), 1000+r.Intn(100000)), "force": true})
			if err != nil {
				errs <- fmt.Errorf("pi/append: %w", err)
				return
			}
			out := lsptest.Decode[rpc.AppendResult](t, res)
			if out.AutoCompaction != "" {
				errs <- fmt.Errorf("pi/append answered autoCompaction %q while pi runs", out.AutoCompaction)
			}
			mu.Lock()
			for _, id := range out.EntryIDs {
				mine[id] = "lsp"
			}
			if running() {
				overlapping++
			}
			mu.Unlock()
			time.Sleep(time.Duration(r.Intn(100)) * time.Millisecond)
		}
	}()
	wg.Wait()
	<-piDone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Still running: still no automatic compaction, and the owner is reported.
	time.Sleep(500 * time.Millisecond)
	if n := c.notifications("pi/compactionStart"); len(n) > 0 {
		t.Errorf("the server compacted a session pi is writing: %s", n[0].Params)
	}
	owned := false
	for _, n := range c.notifications("pi/sessionChanged") {
		var p struct {
			Owner *struct{ Pid int } `json:"owner"`
		}
		_ = json.Unmarshal(n.Params, &p)
		owned = owned || p.Owner != nil && p.Owner.Pid == pi.pid
	}
	if !owned {
		t.Errorf("no pi/sessionChanged named pi (pid %d) as the owner", pi.pid)
	}
	pi.send("quit")
	pi.next("stopped", time.Minute)

	// Every line is a whole JSON object: nothing interleaved.
	data := sessiontest.Read(t, path)
	if data[len(data)-1] != '\n' {
		t.Error("the file does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("line %d is not JSON (interleaved writes?): %.200s", i+1, l)
		}
	}
	f, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Skipped) > 0 || f.Torn {
		t.Errorf("pi-lsp skipped lines: %v", f.Skipped)
	}
	ix2 := session.NewIndex(f)
	counts := map[string]int{}
	for id, who := range mine {
		if ix2.Entry(id) == nil {
			t.Errorf("%s entry %s is missing", who, id)
		}
		counts[who]++
	}
	prompts := map[int]int{}
	compactions := 0
	for _, e := range f.Entries {
		if e.Type == session.TypeCompaction && ix.Entry(e.ID) == nil {
			compactions++
		}
		if m, err := e.Message(); err == nil && m.Role == session.RoleUser {
			var k int
			if _, err := fmt.Sscanf(m.Text(""), "SCRIPT:chat CHARS=30000 prompt %d from pi-writer", &k); err == nil {
				prompts[k]++
			}
		}
	}
	for k := 1; k <= piPrompts; k++ {
		if prompts[k] != 1 {
			t.Errorf("pi's prompt %d appears %d times", k, prompts[k])
		}
	}
	if compactions != 0 {
		t.Errorf("%d compaction entries were written while pi ran", compactions)
	}
	checkPiLoads(t, o, path)
	t.Logf("RESULT concurrent-writers: %d lines, %d bytes; pi prompts %d (user+assistant each), session.Append %d, pi/append(force) %d×2 messages, %d of pi-lsp's appends while pi was prompting; interleaved lines 0; ownedByPi refusals %d/%d; auto-compactions while pi ran 0",
		len(lines), len(data), len(prompts), counts["direct"], counts["lsp"]/2, overlapping, len(refusals), len(refusals))

	// Control: with pi gone, the same append is accepted without force and does
	// trigger the threshold compaction.
	out := mustCallFor[rpc.AppendResult](c, "pi/append", map[string]any{"messages": usageMessages("after pi", 100)})
	if out.AutoCompaction != "threshold" {
		t.Errorf("after pi exited: autoCompaction %q, want threshold", out.AutoCompaction)
	}
	// A generous wait: on a loaded machine the compaction runs behind everything else.
	deadline := time.Now().Add(120 * time.Second)
	for len(c.notifications("pi/compactionEnd")) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(c.notifications("pi/compactionEnd")) == 0 {
		t.Error("no pi/compactionEnd after the control append")
	}
}
