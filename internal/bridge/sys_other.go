//go:build !unix

package bridge

import "os"

// Without Unix owners and modes (Windows) the registry's files are not checked for
// privacy. (Pi's extension listens on a Unix socket path, which Node does not offer on
// Windows, so no bridge registers there.)
func fileUID(os.FileInfo) (int, bool) { return 0, false }

// signalZero reports whether a process pid exists.
func signalZero(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
