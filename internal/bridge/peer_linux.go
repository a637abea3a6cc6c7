package bridge

import (
	"net"

	"golang.org/x/sys/unix"
)

// maxSunPath is the size of sun_path: a path must be shorter (with its NUL).
const maxSunPath = 108

// peerUID is the user of the process at nc's other end (SO_PEERCRED).
func peerUID(nc net.Conn) (int, error) {
	return sockoptUID(nc, func(fd int) (int, error) {
		cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err != nil {
			return 0, err
		}
		return int(cred.Uid), nil
	})
}
