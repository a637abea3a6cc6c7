package fileops

import "hash/maphash"

// pathSet is a set of paths in the order they were first added: open addressing over
// slots of 8 bytes (the low half of a path's hash and its place in the list), at most
// 3/4 full. A compaction adds thousands of calls' paths to three sets; a map of strings
// would hash each path where the set is probed and grow by rehashing its keys, this
// keeps each path's hash beside it and grows by moving slots.
type pathSet struct {
	slots []pathSlot
	paths []hashedPath
}

type pathSlot struct {
	hash uint32
	at   int32 // place in paths + 1; 0 for an empty slot
}

type hashedPath struct {
	path string
	hash uint64
}

// Len is the number of paths in the set.
func (s *pathSet) Len() int { return len(s.paths) }

// reserve makes room for n more paths.
func (s *pathSet) reserve(n int) {
	want := len(s.paths) + n
	if (want+1)*4 <= len(s.slots)*3 {
		return
	}
	size := max(8, len(s.slots))
	for (want+1)*4 > size*3 {
		size *= 2
	}
	s.rehash(size)
	if cap(s.paths) < want {
		grown := make([]hashedPath, len(s.paths), want)
		copy(grown, s.paths)
		s.paths = grown
	}
}

func (s *pathSet) rehash(size int) {
	s.slots = make([]pathSlot, size)
	mask := uint32(size - 1)
	for i, p := range s.paths {
		h := uint32(p.hash)
		j := h & mask
		for s.slots[j].at != 0 {
			j = (j + 1) & mask
		}
		s.slots[j] = pathSlot{hash: h, at: int32(i + 1)}
	}
}

// find is the slot of path (hash h), or the empty slot where it would go.
func (s *pathSet) find(path string, h uint64) *pathSlot {
	mask := uint32(len(s.slots) - 1)
	for j := uint32(h) & mask; ; j = (j + 1) & mask {
		sl := &s.slots[j]
		if sl.at == 0 || sl.hash == uint32(h) && s.paths[sl.at-1].path == path {
			return sl
		}
	}
}

// add puts path, whose hash is h, in the set.
func (s *pathSet) add(path string, h uint64) {
	if (len(s.paths)+1)*4 > len(s.slots)*3 {
		s.rehash(max(8, 2*len(s.slots)))
	}
	if sl := s.find(path, h); sl.at == 0 {
		s.paths = append(s.paths, hashedPath{path, h})
		*sl = pathSlot{hash: uint32(h), at: int32(len(s.paths))}
	}
}

// pathSeed seeds the paths' hashes, one per process.
var pathSeed = maphash.MakeSeed()

func hashPath(p string) uint64 { return maphash.String(pathSeed, p) }

// has reports whether path, whose hash is h, is in the set.
func (s *pathSet) has(path string, h uint64) bool {
	return len(s.slots) > 0 && s.find(path, h).at != 0
}

// addString puts path in the set.
func (s *pathSet) addString(path string) { s.add(path, hashPath(path)) }
