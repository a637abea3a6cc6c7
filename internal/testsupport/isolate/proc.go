package isolate

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// GroupCmd prepares a command in its own process group: when ctx ends the whole group
// is killed (whatever the child started too), and Wait stops waiting for its pipes 5 s
// later.
func GroupCmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	newGroup(cmd)
	cmd.Cancel = func() error { return KillGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// KillGroup kills the process group of a command started by GroupCmd (nothing when it
// did not start).
func KillGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return killGroup(cmd.Process.Pid)
}

// ExitCode is the exit status that cmd.Wait's err stands for: 0 for nil, the status of
// an exit, and -1 for a process killed by a signal or that could not be waited for.
func ExitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// StartPiped starts cmd with its stderr on the test binary's and returns its stdout,
// failing the test when it cannot start.
func StartPiped(t testing.TB, cmd *exec.Cmd) io.ReadCloser {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdout
}

// HangUpSocket makes path a unix socket that accepts every connection and closes it at
// once, until the test ends (a live peer that answers nothing).
func HangUpSocket(t testing.TB, path string) {
	t.Helper()
	ServeSocket(t, path, func(net.Conn) {})
}
