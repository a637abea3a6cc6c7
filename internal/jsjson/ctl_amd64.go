package jsjson

import "golang.org/x/sys/cpu"

// classBlocks classifies the first len(data)&^63 bytes of data as lineClass does, 16
// bytes at a time (SSE2, which every amd64 has); classBlocksAVX2 32 at a time
// (ctl_amd64.s).
//
//go:noescape
func classBlocks(data []byte) uint8

//go:noescape
func classBlocksAVX2(data []byte) uint8

var haveAVX2 = cpu.X86.HasAVX2

// lineClass says which of the bytes that make a JSON string need more than a view of
// its bytes data holds (classControl, classBackslash, classHigh): the whole 64-byte
// blocks vectorised (the check reads every byte of every line), the rest a word at a
// time.
func lineClass(data []byte) uint8 {
	n := len(data) &^ 63
	if haveAVX2 {
		return classBlocksAVX2(data) | classWords(data[n:])
	}
	return classBlocks(data) | classWords(data[n:])
}
