package session

import "hash/maphash"

// idTable finds the entry of an id (the later one of a duplicated id): open addressing
// over slots of 8 bytes, each the position of an entry in the file and the low half of
// its id's hash. A map from id to *Entry costs about 60 bytes an entry (its slots hold
// the key and the pointer, at most 7/8 full, doubled when grown); this costs 11 to 21,
// which matters when entries are small (a file of minimal entries at the density limit).
type idTable struct {
	slots []idSlot // a power of two (or none), at most 3/4 full
	n     int
}

// idSeed seeds the ids' hashes, one per process (a file cannot aim at collisions).
var idSeed = maphash.MakeSeed()

type idSlot struct {
	hash uint32 // low half of the id's hash: the slot it wants, and a filter
	pos  int32  // position in File.Entries + 1; 0 for an empty slot
}

func newIDTable(n int) idTable {
	var t idTable
	t.alloc(n)
	return t
}

// alloc makes room for n ids.
func (t *idTable) alloc(n int) {
	size := 8
	for size*3/4 < n {
		size *= 2
	}
	t.slots = make([]idSlot, size)
}

// find is the slot of id, or the empty slot where it would go, and the id's hash.
func (t *idTable) find(id string, entries []*Entry) (*idSlot, uint32) {
	h := uint32(maphash.String(idSeed, id))
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.pos == 0 || s.hash == h && entries[s.pos-1].ID == id {
			return s, h
		}
	}
}

// get is the entry of id, or nil.
func (t *idTable) get(id string, entries []*Entry) *Entry {
	if len(t.slots) == 0 {
		return nil
	}
	if s, _ := t.find(id, entries); s.pos != 0 {
		return entries[s.pos-1]
	}
	return nil
}

// put makes entries[pos] the entry of its id and reports whether the id had one.
func (t *idTable) put(pos int, entries []*Entry) (had bool) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow(entries)
	}
	s, h := t.find(entries[pos].ID, entries)
	had = s.pos != 0
	if !had {
		t.n++
	}
	s.hash, s.pos = h, int32(pos+1)
	return had
}

func (t *idTable) grow(entries []*Entry) {
	old := t.slots
	t.slots = make([]idSlot, max(8, 2*len(old)))
	mask := uint32(len(t.slots) - 1)
	for _, o := range old {
		if o.pos == 0 {
			continue
		}
		i := o.hash & mask
		for t.slots[i].pos != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = o
	}
}
