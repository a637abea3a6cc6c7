//go:build linux || darwin || freebsd

package bridge

import (
	"fmt"
	"net"
	"syscall"
)

// sockoptUID runs get on nc's descriptor.
func sockoptUID(nc net.Conn, get func(fd int) (int, error)) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, fmt.Errorf("%T has no descriptor", nc)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var uid int
	var gerr error
	if err := raw.Control(func(fd uintptr) { uid, gerr = get(int(fd)) }); err != nil {
		return 0, err
	}
	return uid, gerr
}
