package jsjson

// controlBlocks reports whether the first len(data)&^63 bytes of data hold a byte below
// 0x20 (ctl_amd64.s).
//
//go:noescape
func controlBlocks(data []byte) bool

// hasControl reports whether data holds a byte below 0x20: the whole 64-byte blocks
// vectorised (the check reads every byte of every line), the rest a word at a time.
func hasControl(data []byte) bool {
	n := len(data) &^ 63
	return controlBlocks(data) || hasControlWords(data[n:])
}
