//go:build !amd64

package jsjson

// blocks is the part of lineScan that amd64 vectorises: the whole 64-byte blocks of
// data, a word at a time.
func blocks(data []byte, quotes []uint64) uint8 {
	var c uint8
	for k := 0; k+64 <= len(data); k += 64 {
		c |= classWords(data[k : k+64])
		quotes[k>>6] = quoteBits(data[k : k+64])
	}
	return c
}
