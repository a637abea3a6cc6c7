package main

// Process-level tests of a stalled model: the built binary against internal/fakellm
// answering 200 with an event-stream and then nothing. The bounds are made small through
// PI_LSP_STALL_TIMEOUT / PI_LSP_SUMMARY_TIMEOUT (CLI) and the piLsp object of Pi's
// settings file (LSP): a 2 s stall and a 5 s bound.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// cliRun is a started pi-lsp CLI process in its own process group.
type cliRun struct {
	cmd    *exec.Cmd
	stderr *lsptest.SyncBuffer
	stdout *lsptest.SyncBuffer
	start  time.Time
	done   chan struct{}
	code   int
	took   time.Duration
	// peakKB is the largest VmHWM read from /proc while the process ran: the peak of its
	// own memory. The rusage of a wait does not tell it on Linux, where a child's maxrss
	// starts from its parent's high-water mark (exec saves the vfork-shared memory's).
	peakKB atomic.Int64
}

// peakRSS is the peak resident memory of the process in bytes, as sampled.
func (r *cliRun) peakRSS() int64 { return r.peakKB.Load() << 10 }

// sampleHWM reads the process's VmHWM every 2 ms until it is done.
func (r *cliRun) sampleHWM(pid int) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	for {
		if b, err := os.ReadFile(path); err == nil {
			if i := bytes.Index(b, []byte("VmHWM:")); i >= 0 {
				f := strings.Fields(string(b[i+len("VmHWM:"):]))
				if len(f) > 0 {
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb > r.peakKB.Load() {
						r.peakKB.Store(kb)
					}
				}
			}
		}
		select {
		case <-r.done:
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// startCLI runs the binary with args; the group is killed after timeout and at cleanup.
func startCLI(t *testing.T, env []string, timeout time.Duration, args ...string) *cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := isolate.GroupCmd(ctx, e2eBinary(t), args...)
	cmd.Env = env
	r := &cliRun{cmd: cmd, stderr: &lsptest.SyncBuffer{}, stdout: &lsptest.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	r.start = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go r.sampleHWM(cmd.Process.Pid)
	go func() {
		r.code = isolate.ExitCode(cmd.Wait())
		r.took = time.Since(r.start)
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = isolate.KillGroup(cmd)
		cancel()
		<-r.done
	})
	return r
}

func (r *cliRun) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("pi-lsp %v did not exit; stderr:\n%s", r.cmd.Args[1:], r.stderr.String())
	}
}

// stallEnv is the e2e environment with the summarizer pointed at url.
func stallEnv(env []string, url string, extra ...string) []string {
	env = append(env, "PI_LSP_BASE_URL="+url, "PI_LSP_MODEL=fake", "PI_LSP_API_KEY_ENV=PI_LSP_E2E_KEY")
	return append(env, extra...)
}

// startCompact runs `pi-lsp compact --progress` on the older of two session copies with
// the OpenAI summarizer at llm, env the stall and summary bounds, and more args after the
// command's own; it returns the run, the copy and the copy's bytes before. (Progress
// lines go to a stderr that is not a terminal only with --progress.)
func startCompact(t *testing.T, llm *fakemodel.Server, env []string, args ...string) (r *cliRun, path string, before []byte) {
	t.Helper()
	base, _, paths := e2eWorkspace(t)
	before = sessiontest.Read(t, paths[0])
	r = startCLI(t, stallEnv(base, llm.URL, env...), 60*time.Second,
		append([]string{"compact", paths[0], "--progress", "--summarizer", "openai", "--keep-recent", "200"}, args...)...)
	return r, paths[0], before
}

var elapsedRe = regexp.MustCompile(`\((\d+(?:\.\d+)?)s\)$`)

// lineSeconds is the "(2.0s)" at the end of a progress line.
func lineSeconds(line string) float64 {
	m := elapsedRe.FindStringSubmatch(line)
	if m == nil {
		return -1
	}
	f, _ := strconv.ParseFloat(m[1], 64)
	return f
}

// `pi-lsp compact FILE --summarizer openai` against a stalled model: a clear error within
// the 5 s bound, two attempts, a line per attempt before the error, the file unchanged.
func TestE2ECompactStalledModel(t *testing.T) {
	llm := fakemodel.New(t)
	llm.SetFallback(fakemodel.StallAfterHeaders(time.Minute))
	r, path, before := startCompact(t, llm, []string{"PI_LSP_STALL_TIMEOUT=2", "PI_LSP_SUMMARY_TIMEOUT=5s"})
	r.wait(t)
	stderr := r.stderr.String()
	t.Logf("exit %d after %v; stderr:\n%s", r.code, r.took.Round(10*time.Millisecond), stderr)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if r.code == 0 {
		t.Fatal("exit status 0")
	}
	if r.took > 6*time.Second {
		t.Errorf("took %v: past the 5s bound", r.took)
	}
	want := []string{"pi-lsp compact: preparing (", "pi-lsp compact: summarizing (", "pi-lsp compact: summarizing: attempt 1 of 4 (", "pi-lsp compact: summarizing: attempt 2 of 2 after stall (", "pi-lsp compact: "}
	if len(lines) != len(want) {
		t.Fatalf("%d stderr lines, want %d", len(lines), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("stderr line %d %q, want %q...", i+1, lines[i], w)
		}
	}
	if s := lineSeconds(lines[3]); s < 1.9 || s > 5 {
		t.Errorf("attempt 2 announced at %vs: want after the 2s stall", s)
	}
	errLine := lines[len(lines)-1]
	for _, w := range []string{"stream stalled for 2s", "no byte received", "after 1 retry"} {
		if !strings.Contains(errLine, w) {
			t.Errorf("error line %q lacks %q", errLine, w)
		}
	}
	if n := llm.Count(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the session file changed")
	}
	t.Logf("RESULT stalled-model (CLI): pi-lsp compact --summarizer openai against 200 + event-stream + nothing: exit %d after %v (bound 5s, stall 2s), %d requests, progress lines before the error %q, file byte-identical",
		r.code, r.took.Round(10*time.Millisecond), llm.Count(), lines[:len(lines)-1])
}

// A model that sends keep-alive comments for longer than the stall timeout before it
// answers (a local model on a long prompt) is not stalled: the compaction is written.
func TestE2ECompactKeepAliveModel(t *testing.T) {
	llm := fakemodel.New(t, fakemodel.KeepAlivesThen(200*time.Millisecond, 3*time.Second, "## Goal\nLate local summary."))
	r, path, before := startCompact(t, llm, []string{"PI_LSP_STALL_TIMEOUT=2", "PI_LSP_SUMMARY_TIMEOUT=20"}, "--json")
	r.wait(t)
	stderr := r.stderr.String()
	if r.code != 0 {
		t.Fatalf("exit %d after %v; stderr:\n%s", r.code, r.took, stderr)
	}
	if r.took < 3*time.Second {
		t.Errorf("done after %v, before the answer", r.took)
	}
	if llm.Count() != 1 || strings.Contains(stderr, "attempt 2") {
		t.Errorf("%d requests; stderr:\n%s", llm.Count(), stderr)
	}
	after, _ := os.ReadFile(path)
	if !bytes.HasPrefix(after, before) || !bytes.Contains(after[len(before):], []byte("Late local summary.")) {
		t.Errorf("no compaction entry with the summary appended")
	}
}

// Ctrl-C while the model is stalled: the CLI exits at once and writes nothing.
func TestE2ECompactInterruptMidStall(t *testing.T) {
	llm := fakemodel.New(t)
	llm.SetFallback(fakemodel.StallAfterHeaders(time.Minute))
	r, path, before := startCompact(t, llm, []string{"PI_LSP_STALL_TIMEOUT=20", "PI_LSP_SUMMARY_TIMEOUT=60"})
	select {
	case <-llm.Started:
	case <-time.After(20 * time.Second):
		t.Fatalf("the model was not called; stderr:\n%s", r.stderr.String())
	}
	time.Sleep(300 * time.Millisecond)
	sent := time.Now()
	if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r.wait(t)
	if d := time.Since(sent); d > time.Second {
		t.Errorf("exited %v after the interrupt", d)
	}
	if r.code == 0 || !strings.Contains(r.stderr.String(), "context canceled") {
		t.Errorf("exit %d; stderr:\n%s", r.code, r.stderr.String())
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the session file changed")
	}
}

// The LSP server against a stalled model, with the bounds from Pi's settings file: the
// attempts are $/progress reports, the request fails within the bound, the progress ends
// with the reason, and a cancel during the stall is answered at once.
func TestE2ELSPStalledModel(t *testing.T) {
	llm := fakemodel.New(t)
	llm.SetFallback(fakemodel.StallAfterHeaders(time.Minute))
	e := e2eEnv(t, lsptest.Config{
		InitOptions: map[string]any{"summarizer": "openai", "baseUrl": llm.URL, "model": "fake",
			"apiKeyEnv": "PI_LSP_E2E_KEY", "keepRecentTokens": 200},
		ExtraEnv:   []string{"PI_LSP_E2E_KEY=test-key"},
		AgentFiles: map[string]string{"settings.json": `{"piLsp": {"summaryTimeout": 5, "stallTimeout": 2}}`},
	})
	paths := e.Paths
	before := sessiontest.Read(t, paths[1])
	progressOf := func(token string) []lsptest.Progress {
		var out []lsptest.Progress
		for _, p := range lsptest.Progresses(e.Messages()) {
			if p.Token == `"`+token+`"` {
				out = append(out, p)
			}
		}
		return out
	}
	// progressOn is met by a $/progress of token whose params contain substr.
	progressOn := func(token, substr string) lsptest.Expectation {
		return lsptest.NotificationMatching("$/progress", token+" "+substr, func(p json.RawMessage) bool {
			return bytes.Contains(p, []byte(`"`+token+`"`)) && bytes.Contains(p, []byte(substr))
		})
	}

	start := time.Now()
	_, err := e.Call("pi/compact", map[string]any{"session": paths[1], "workDoneToken": "stall-1"})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "stream stalled for 2s") {
		t.Fatalf("pi/compact answered %v", err)
	}
	if took > 6*time.Second {
		t.Errorf("answered after %v: past the 5s bound", took)
	}
	e.Await(20*time.Second, progressOn("stall-1", `"kind":"end"`))
	var reports []string
	var end string
	for _, p := range progressOf("stall-1") {
		switch p.Kind {
		case "report":
			if end != "" {
				t.Errorf("report %q after the end", p.Msg)
			}
			reports = append(reports, p.Msg)
		case "end":
			end = p.Msg
		}
	}
	retry := -1
	for i, m := range reports {
		if strings.HasPrefix(m, "summarizing: attempt 2 of 2 after stall (") {
			retry = i
		}
	}
	if retry < 0 {
		t.Errorf("no report of the stall retry in %q", reports)
	}
	if !strings.HasPrefix(end, "Not compacted: ") || !strings.Contains(end, "stream stalled") {
		t.Errorf("progress end %q", end)
	}
	if n := llm.Count(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if after, _ := os.ReadFile(paths[1]); !bytes.Equal(before, after) {
		t.Error("the session file changed")
	}
	t.Logf("RESULT stalled-model (LSP): pi/compact answered an error after %v (bound 5s, stall 2s, from settings.json), %d requests, $/progress reports %q, end %q",
		took.Round(10*time.Millisecond), llm.Count(), reports, end)

	// Cancel through the progress UI during the stall: answered at once, nothing written.
	for len(llm.Started) > 0 {
		<-llm.Started
	}
	p := e.Start("pi/compact", map[string]any{"session": paths[1], "workDoneToken": "stall-2"}, false)
	select {
	case <-llm.Started:
	case <-time.After(20 * time.Second):
		t.Fatal("the model was not called")
	}
	time.Sleep(300 * time.Millisecond)
	sent := time.Now()
	e.Notify("window/workDoneProgress/cancel", map[string]any{"token": "stall-2"})
	if _, cerr := p.Wait(5 * time.Second); cerr == nil {
		t.Errorf("cancelled compaction answered without an error")
	}
	if d := time.Since(sent); d > time.Second {
		t.Errorf("answered %v after the cancel", d)
	}
	e.Await(20*time.Second, progressOn("stall-2", "Cancelled; nothing was written"))
	if after, _ := os.ReadFile(paths[1]); !bytes.Equal(before, after) {
		t.Error("the cancelled compaction wrote to the file")
	}
}
