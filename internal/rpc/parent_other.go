//go:build !unix && !windows

package rpc

// processAlive cannot tell on this system, so the client's process is taken as alive and
// the server ends with its input, as before.
func processAlive(int) bool { return true }
