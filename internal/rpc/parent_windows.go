//go:build windows

package rpc

import "syscall"

// processAlive reports whether a process pid is still running: a handle opened for
// querying tells whether it has exited (STILL_ACTIVE is 259).
func processAlive(pid int) bool {
	const queryLimited = 0x1000 // PROCESS_QUERY_LIMITED_INFORMATION
	h, err := syscall.OpenProcess(queryLimited, false, uint32(pid))
	if err != nil {
		return false
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == 259
}
