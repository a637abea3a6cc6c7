//go:build unix

package rpc

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// startClientProcess starts a process standing for the editor that spawned the server,
// killed with its process group when the test ends.
func startClientProcess(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd
}

// serveInitialized runs Serve on a pipe and sends initialize with processId pid; it
// returns the channel Serve's exit code arrives on and the client's end of the input.
func serveInitialized(t *testing.T, pid int) (<-chan int, io.WriteCloser) {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	code := make(chan int, 1)
	go func() {
		code <- Serve(ctx, pr, io.Discard, pr, Options{ParentInterval: 20 * time.Millisecond, AgentDir: t.TempDir(), BridgeDir: t.TempDir(), SoftThreshold: -1})
	}()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":%d,"capabilities":{}}}`, pid)
	if _, err := io.WriteString(pw, frameOf(body)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.Close() })
	return code, pw
}

// The server exits (code 1: no shutdown came) once the client's process is gone, though
// the client's end of its input is still open.
func TestServerExitsWhenTheClientProcessIsGone(t *testing.T) {
	client := startClientProcess(t)
	code, _ := serveInitialized(t, client.Process.Pid)
	select {
	case c := <-code:
		t.Fatalf("the server exited (%d) while its client was alive", c)
	case <-time.After(300 * time.Millisecond):
	}
	_ = syscall.Kill(-client.Process.Pid, syscall.SIGKILL)
	_ = client.Wait() // reaped, as the editor's own parent reaps it
	select {
	case c := <-code:
		if c != 1 {
			t.Errorf("exit code %d, want 1", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server still runs after its client's process is gone")
	}
}

// A processId that names no live process at initialize is not watched: the server
// serves until its input ends.
func TestServerIgnoresAProcessIDThatIsNotAlive(t *testing.T) {
	gone := startClientProcess(t)
	_ = syscall.Kill(-gone.Process.Pid, syscall.SIGKILL)
	_ = gone.Wait()
	code, in := serveInitialized(t, gone.Process.Pid)
	select {
	case c := <-code:
		t.Fatalf("the server exited (%d) on a processId that was never alive", c)
	case <-time.After(300 * time.Millisecond):
	}
	in.Close()
	select {
	case <-code:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end with its input")
	}
}
