//go:build !amd64

package jsjson

// lineClass says which of the bytes that make a JSON string need more than a view of
// its bytes data holds (classControl, classBackslash, classHigh).
func lineClass(data []byte) uint8 { return classWords(data) }
