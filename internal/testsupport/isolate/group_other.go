//go:build !unix

package isolate

import (
	"os"
	"os/exec"
)

// newGroup: no process groups here; the command is killed on its own.
func newGroup(*exec.Cmd) {}

// killGroup kills the process itself where there are no process groups.
func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
