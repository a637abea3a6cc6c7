package jsjson

// classBlocks classifies the first len(data)&^63 bytes of data as lineClass does
// (ctl_amd64.s).
//
//go:noescape
func classBlocks(data []byte) uint8

// lineClass says which of the bytes that make a JSON string need more than a view of
// its bytes data holds (classControl, classBackslash, classHigh): the whole 64-byte
// blocks vectorised (the check reads every byte of every line), the rest a word at a
// time.
func lineClass(data []byte) uint8 {
	n := len(data) &^ 63
	return classBlocks(data) | classWords(data[n:])
}
