//go:build !amd64

package jsjson

// blockClasses is what the classifier says of the whole 64-byte blocks of b.
func blockClasses(b []byte) uint8 { return blocks(b, make([]uint64, len(b)/64)) }
