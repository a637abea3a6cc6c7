//go:build unix

package isolate

import (
	"os/exec"
	"syscall"
)

// newGroup puts the command in a process group of its own.
func newGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the whole process group led by pid.
func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
