package session

import (
	"os"
	"syscall"
)

// mappable is a file that can be mapped.
type mappable = *os.File

// mapping is a read-only shared mapping of a file.
type mapping struct{ data []byte }

// mapFile maps the first size bytes of fd read-only, or returns nil.
func mapFile(fd *os.File, size int64) *mapping {
	if size <= 0 || size != int64(int(size)) {
		return nil
	}
	data, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return &mapping{data: data}
}

// release drops the pages of [start, end) from the process (they stay in the page
// cache), so that a load's resident memory holds the ranges being parsed, not the file.
func (m *mapping) release(start, end int64) {
	page := int64(os.Getpagesize())
	start = (start + page - 1) &^ (page - 1)
	end &^= page - 1
	if start < end {
		_ = syscall.Madvise(m.data[start:end], syscall.MADV_DONTNEED)
	}
}

func (m *mapping) unmap() { _ = syscall.Munmap(m.data) }
