package session

import (
	"fmt"
	"maps"
	"os"
)

// Snapshot is a session as it was read at one moment, for a job that computes on it
// and may then append (a compaction, a navigation): its index, read-only, and the size
// and identity (device and inode) of the file the index was read from. Nothing changes
// a snapshot once taken: Load makes a fresh one (LoadSnapshot), and the server's
// followed index (Live.Snapshot) goes on following its file without touching what a
// snapshot sees. Several goroutines may read one snapshot.
//
// Append writes only while the file is still exactly what the snapshot read: the same
// file, the same size, checked again under the write lock. Otherwise it refuses with
// ErrChanged and the file is left byte-identical.
type Snapshot struct {
	ix       *Index
	size     int64
	dev, ino uint64
}

// LoadSnapshot loads and indexes the session file at path (Load, NewIndex) as a
// snapshot. Its errors are Load's.
func LoadSnapshot(path string) (*Snapshot, error) {
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{ix: NewIndex(f), size: f.Size}
	s.dev, s.ino = f.src.dev, f.src.ino
	return s, nil
}

// Index is the snapshot's index. It must not be changed (Index.Append).
func (s *Snapshot) Index() *Index { return s.ix }

// File is the snapshot's file: its header, entries and flags as read, and its Size.
func (s *Snapshot) File() *File { return s.ix.File }

// Path is the session file the snapshot was read from.
func (s *Snapshot) Path() string { return s.ix.File.Path }

// Size is the number of bytes of the file the snapshot holds (a torn last line
// included, as Load counts it).
func (s *Snapshot) Size() int64 { return s.size }

// Append appends entries to the snapshot's file (as Append does: whole lines, one write
// under the lock, a failed write taken back) when the file is still the one the
// snapshot read: the same file at the same size, checked before and again under the
// lock. A file that grew, shrank or was replaced since is ErrChanged, and so is an entry
// the snapshot could not read back (the file was truncated or rewritten: the error
// wraps both ErrChanged and the read error, ErrRewritten); either way nothing is
// written. Fresh ids are unique among the snapshot's entries. The snapshot itself is
// not changed: the appended entries are returned, as the file now holds them.
func (s *Snapshot) Append(entries []NewEntry) ([]*Entry, error) {
	if err := s.ix.File.ReadErr(); err != nil {
		// What was computed on could not all be read back: the file changed under the
		// job, which its callers report as they report any other change.
		return nil, fmt.Errorf("%w: %w", ErrChanged, err)
	}
	if st, err := os.Stat(s.Path()); err != nil || !s.same(st) {
		return nil, ErrChanged
	}
	return appendIf(s.Path(), s, s.taken(), entries)
}

// same reports whether st is the snapshot's file at the snapshot's size.
func (s *Snapshot) same(st os.FileInfo) bool {
	if st.Size() != s.size {
		return false
	}
	if s.dev == 0 && s.ino == 0 {
		return true // the system gives files no identity (Windows): the size decides
	}
	dev, ino := fileID(st)
	return dev == s.dev && ino == s.ino
}

// taken are the ids of the snapshot's entries, which a fresh id must not reuse.
func (s *Snapshot) taken() map[string]*Entry {
	m := make(map[string]*Entry, len(s.ix.File.Entries))
	for _, e := range s.ix.File.Entries {
		m[e.ID] = e
	}
	return m
}

// snapshot is a read-only copy of ix as it stands, for a snapshot of size bytes of the
// file (dev, ino): what Append changes in place (the id table, the labels, the lists) is
// copied, and the entries are shared, which marks ix shared: its owner (Live) must then
// never change an entry it holds (see Live.Refresh).
func (ix *Index) snapshot(size int64, dev, ino uint64) *Snapshot {
	f := *ix.File
	n := len(f.Entries)
	f.Entries = f.Entries[:n:n]
	f.Skipped = f.Skipped[:len(f.Skipped):len(f.Skipped)]
	f.Size, f.CompleteSize, f.EndsWithNewline, f.Torn = size, size, true, false
	c := &Index{
		File:            &f,
		byID:            idTable{slots: append([]idSlot(nil), ix.byID.slots...), n: ix.byID.n},
		labels:          maps.Clone(ix.labels),
		problems:        ix.problems[:len(ix.problems):len(ix.problems)],
		nProblem:        ix.nProblem,
		missing:         maps.Clone(ix.missing),
		dups:            ix.dups,
		thinkingChanges: ix.thinkingChanges,
		linear:          ix.linear,
		roots:           ix.roots[:len(ix.roots):len(ix.roots)],
	}
	c.projected.Store(ix.projected.Load())
	ix.shared = true
	return &Snapshot{ix: c, size: size, dev: dev, ino: ino}
}

// Snapshot is the followed session as of the last Refresh (or OpenLive), as a snapshot
// that later refreshes do not change: the index is copied where Refresh changes it in
// place, and its entries are shared. When the followed index is not exactly what Load
// would make of the file now, the snapshot is loaded afresh instead (LoadSnapshot): when
// an incomplete last line is held back (Load reads it as an entry or a torn line), the
// file was migrated from v1 or v2 in memory (appended lines are not), one of its
// entries could not be read back (the file was rewritten in place), or it holds more
// entries than Load allows for its size (ErrTooDense). Its Problems and File.Skipped are
// the followed index's (those found on load and since; an orphan whose parent was
// appended later stays listed): no job reads them.
func (l *Live) Snapshot() (*Snapshot, error) {
	f := l.Index.File
	if l.size != l.complete || f.MigratedFrom != 0 || f.ReadErr() != nil || f.src == nil ||
		int64(len(f.Entries)) > maxEntries(l.complete) {
		return LoadSnapshot(l.Path)
	}
	return l.Index.snapshot(l.complete, f.src.dev, f.src.ino), nil
}
