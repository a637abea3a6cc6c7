package session

import (
	"errors"
	"runtime/debug"
	"sync"
)

// A file is loaded from a read-only mapping of it where the system allows (mapped_linux.go):
// its lines are parsed where the page cache holds them instead of being copied into read
// buffers first, which was the largest single cost of a load after the parse itself.
// Nothing a load keeps points into the mapping (a loaded file's entries copy what they
// keep, as they do from the reused read buffers), so it is unmapped when the load ends.
//
// A mapped file that shrinks while it is read faults instead of reading short. Every read
// of the mapping runs under guard, which turns that fault into errMapFault; the load is
// then done again with reads, which see the file as it is by then.

// errMapFault is a read of a mapped file past its end: the file shrank during the load.
var errMapFault = errors.New("session file shrank while it was mapped")

// guard runs fn, which reads in's bytes; a fault reading a mapping becomes errMapFault.
func (in lineSource) guard(fn func() error) (err error) {
	if !in.mapped {
		return fn()
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = errMapFault
		}
	}()
	return fn()
}

// loadMapped parses a file through a mapping of its size bytes; ok is false when the
// file cannot be mapped or shrank while it was read, and the caller reads it instead.
func loadMapped(in lineSource, fd mappable) (f *File, ok bool, err error) {
	m := mapFile(fd, in.size)
	if m == nil {
		return nil, false, nil
	}
	defer m.unmap()
	in.mem, in.mapped, in.release = m.data, true, m.release
	f, err = parse(in)
	if errors.Is(err, errMapFault) {
		return nil, false, nil
	}
	return f, true, err
}

// releaser drops the pages of a mapped load's parsed ranges, so that its resident memory
// holds the ranges being parsed and not the file, in few calls: each call makes every
// core that runs the load forget the pages too (an interrupt per core, which on a
// virtual machine is a trip to the host). It releases the parsed ranges at the start of
// the file once they add up to releaseBatch; what is left when the load ends goes with
// the mapping.
type releaser struct {
	release func(start, end int64) // nil: nothing to release (a load without a mapping)
	ranges  []byteRange
	mu      sync.Mutex
	done    []bool
	next    int   // the first range not parsed yet, of those at the start
	from    int64 // where the pages not released yet start
}

const releaseBatch = 8 << 20

func newReleaser(release func(start, end int64), ranges []byteRange) *releaser {
	r := &releaser{release: release, ranges: ranges}
	if release != nil {
		r.done = make([]bool, len(ranges))
		r.from = ranges[0].start
	}
	return r
}

// parsed records that range i is parsed.
func (r *releaser) parsed(i int) {
	if r.release == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done[i] = true
	for r.next < len(r.done) && r.done[r.next] {
		r.next++
	}
	if r.next > 0 {
		if end := r.ranges[r.next-1].end; end-r.from >= releaseBatch {
			r.release(r.from, end)
			r.from = end
		}
	}
}
