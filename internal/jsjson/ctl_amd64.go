package jsjson

import "golang.org/x/sys/cpu"

// scanBlocks classifies the first len(data)&^63 bytes of data and marks their quotes
// as lineScan does, 16 bytes at a time (SSE2, which every amd64 has); scanBlocksAVX2
// 32 at a time (ctl_amd64.s). quotes must hold a word per whole block.
//
//go:noescape
func scanBlocks(data []byte, quotes []uint64) uint8

//go:noescape
func scanBlocksAVX2(data []byte, quotes []uint64) uint8

var haveAVX2 = cpu.X86.HasAVX2

// blocks is the vectorised part of lineScan.
func blocks(data []byte, quotes []uint64) uint8 {
	if haveAVX2 {
		return scanBlocksAVX2(data, quotes)
	}
	return scanBlocks(data, quotes)
}
