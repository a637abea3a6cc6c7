//go:build windows

package session

import (
	"os"

	"golang.org/x/sys/windows"
)

// Windows has no inode numbers in os.FileInfo: a replaced file is noticed by its size
// and contents instead.
func inode(os.FileInfo) uint64 { return 0 }

func fileID(os.FileInfo) (dev, ino uint64) { return 0, 0 }

// lockOffsetHigh places the lock far beyond any session's end: Windows locks are
// mandatory, and a lock on the file's bytes would make Pi's own reads and appends fail.
// Every pi-lsp locks the same byte there, so they still exclude one another.
const lockOffsetHigh = 0x7fffffff

// lockFile takes the session's write lock (LockFileEx), waiting up to 5 s for another
// pi-lsp that holds it.
func lockFile(f *os.File) error {
	return waitForLock(func() error {
		ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
		return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	}, windows.ERROR_LOCK_VIOLATION)
}

func unlockFile(f *os.File) {
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &windows.Overlapped{OffsetHigh: lockOffsetHigh})
}
