package session

import (
	"os"
	"syscall"
	"unsafe"
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

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault the pages of a range in,
// writable, in one call.
const madvPopulateWrite = 23

// prefault faults in the whole pages of b, memory the caller is about to fill: one call
// instead of a fault per page. Where the kernel lacks the advice, the pages fault in as
// they are written, as they would anyway.
func prefault(b []byte) {
	page := uintptr(os.Getpagesize())
	start := (uintptr(unsafe.Pointer(unsafe.SliceData(b))) + page - 1) &^ (page - 1)
	end := (uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(len(b))) &^ (page - 1)
	if start < end {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvPopulateWrite)
	}
}
