//go:build !linux

package session

import "os"

type mappable = *os.File

type mapping struct{ data []byte }

// mapFile maps nothing here: files are read.
func mapFile(*os.File, int64) *mapping { return nil }

func (m *mapping) release(start, end int64) {}

func (m *mapping) unmap() {}

// prefault does nothing here: pages fault in as they are written.
func prefault([]byte) {}
