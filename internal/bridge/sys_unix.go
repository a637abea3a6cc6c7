//go:build unix

package bridge

import (
	"os"
	"syscall"
)

// fileUID is the owner of a file (false when the system does not say).
func fileUID(st os.FileInfo) (int, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(sys.Uid), true
}

// signalZero reports whether pid exists and is ours to signal (EPERM: another user's).
func signalZero(pid int) bool { return syscall.Kill(pid, 0) == nil }
