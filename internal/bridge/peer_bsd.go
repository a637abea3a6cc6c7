//go:build darwin || freebsd

package bridge

import (
	"net"

	"golang.org/x/sys/unix"
)

// maxSunPath is the size of sun_path: a path must be shorter (with its NUL).
const maxSunPath = 104

// peerUID is the user of the process at nc's other end (LOCAL_PEERCRED, the call under
// getpeereid).
func peerUID(nc net.Conn) (int, error) {
	return sockoptUID(nc, func(fd int) (int, error) {
		cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			return 0, err
		}
		return int(cred.Uid), nil
	})
}
