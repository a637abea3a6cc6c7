//go:build unix

package main

import "syscall"

// maxRSS is getrusage's peak resident set size of this process (KB on Linux).
func maxRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return int64(ru.Maxrss)
}
