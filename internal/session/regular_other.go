//go:build !unix

package session

// openFlags: Windows opens a named pipe or a device without waiting for a peer; the
// type check after the open refuses them.
const openFlags = 0
