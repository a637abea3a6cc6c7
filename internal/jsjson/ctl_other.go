//go:build !amd64

package jsjson

// hasControl reports whether data holds a byte below 0x20.
func hasControl(data []byte) bool { return hasControlWords(data) }
