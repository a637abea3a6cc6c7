//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// SIGINT or SIGTERM ends a command blocked in a read that does not heed its context
// (`compact --summary-file` on a FIFO no one writes): the process exits within a second
// with 130 or 143, the session untouched. It used to wait for ever.
func TestE2ESignalEndsABlockedCommand(t *testing.T) {
	e2eBinary(t) // built before any process bound starts counting
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			env, _, paths := e2eWorkspace(t)
			fifo := filepath.Join(t.TempDir(), "summary")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(paths[0])
			r := startCLI(t, env, 30*time.Second, "compact", paths[0], "--summary-file", fifo, "--keep-recent", "200")
			// Into the blocked read: a writer's non-blocking open succeeds once the command
			// has the FIFO open for reading (its signal handling set up long before); the
			// write end is held open and nothing is written, so its read blocks.
			w := -1
			for deadline := time.Now().Add(20 * time.Second); w < 0 && time.Now().Before(deadline); {
				if fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w = fd
				} else {
					time.Sleep(10 * time.Millisecond)
				}
			}
			if w < 0 {
				t.Fatalf("pi-lsp compact never opened the summary FIFO; stderr:\n%s", r.stderr.String())
			}
			t.Cleanup(func() { syscall.Close(w) })
			time.Sleep(100 * time.Millisecond)
			select {
			case <-r.done:
				t.Fatalf("pi-lsp compact exited %d before the signal; stderr:\n%s", r.code, r.stderr.String())
			default:
			}
			sent := time.Now()
			if err := r.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-r.done:
			case <-time.After(5 * time.Second):
				t.Fatalf("pi-lsp compact still runs 5s after %v", sig)
			}
			took := time.Since(sent)
			if want := 128 + int(sig); r.code != want {
				t.Errorf("exit %d after %v, want %d; stderr:\n%s", r.code, sig, want, r.stderr.String())
			}
			if took > time.Second {
				t.Errorf("exited %v after the signal", took)
			}
			if after, _ := os.ReadFile(paths[0]); !bytes.Equal(before, after) {
				t.Error("the session file changed")
			}
			t.Logf("RESULT signal (CLI compact blocked on a FIFO, %v): exit %d, %v after the signal", sig, r.code, took.Round(time.Millisecond))
		})
	}
}

// The server exits when its client's stdin closes while a long job runs (a compaction
// whose model holds its answer): it never outlives its client.
func TestE2EServerExitsWhenTheClientCloses(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	llm := fakemodel.New(t, heldAnswer(release, "## Goal\nHeld summary."))
	e := e2eEnv(t, lsptest.Config{
		InitOptions: map[string]any{"summarizer": "openai", "baseUrl": llm.URL, "model": "fake",
			"apiKeyEnv": "PI_LSP_E2E_KEY", "keepRecentTokens": 200},
		ExtraEnv: []string{"PI_LSP_E2E_KEY=test-key"},
	})
	before, _ := os.ReadFile(e.Paths[1])
	e.Start("pi/compact", map[string]any{"session": e.Paths[1]}, false)
	select {
	case <-llm.Started:
	case <-time.After(30 * time.Second):
		t.Fatalf("the model was not called; logs:\n%s", e.Logs())
	}
	pid := e.Pid()
	start := time.Now()
	_ = e.Conn.Close()
	code := e.ExitCode(5 * time.Second)
	took := time.Since(start)
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("process %d still exists", pid)
	}
	if after, _ := os.ReadFile(e.Paths[1]); !bytes.Equal(before, after) {
		t.Error("the session file changed")
	}
	t.Logf("RESULT lifetime (LSP, stdin closed during a held compaction): exit %d, %v after the close", code, took.Round(time.Millisecond))
}
