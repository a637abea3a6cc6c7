//go:build unix

package session

import (
	"os"
	"syscall"
)

// inode is the file's inode number (0 when the system has none).
func inode(st os.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Ino
	}
	return 0
}

// fileID is the file's device and inode numbers (0, 0 when the system has none).
func fileID(st os.FileInfo) (dev, ino uint64) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Dev), uint64(sys.Ino)
	}
	return 0, 0
}

// lockFile takes the session's advisory write lock (flock), waiting up to 5 s for
// another pi-lsp that holds it.
func lockFile(f *os.File) error {
	return waitForLock(func() error {
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}, syscall.EWOULDBLOCK)
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
