//go:build unix

package session

import "syscall"

// openFlags opens a session file without blocking: a FIFO with no writer or a device
// waiting for a carrier opens at once (and is then refused). Reads of a regular file
// do not heed the flag.
const openFlags = syscall.O_NONBLOCK
