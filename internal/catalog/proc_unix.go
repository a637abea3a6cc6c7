//go:build unix

package catalog

import (
	"os/exec"
	"syscall"
)

// inGroup runs cmd in its own process group, and its cancellation kills the group: a
// "!command" or a pi that starts children leaves none behind when its time is up.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
