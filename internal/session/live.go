package session

import (
	"fmt"
)

// Live is a loaded session kept current with its file: Refresh applies appended lines
// incrementally and reloads only when the file was replaced or truncated (or when an
// appended line would change an entry a snapshot shares, see Refresh). Snapshot gives a
// job a view of it that later refreshes do not change.
type Live struct {
	Path  string
	Index *Index
	tail  *Tail
	lines int
	// complete is the bytes of the file the index holds, through its last newline; size
	// the bytes read, an incomplete last line included (see Snapshot).
	complete, size int64
}

// OpenLive loads path and prepares to follow it.
func OpenLive(path string) (*Live, error) {
	l := &Live{Path: path}
	if err := l.load(); err != nil {
		return nil, err
	}
	return l, nil
}

// load (re)loads the file and follows it from the end of its last complete line; a torn
// tail is re-read (and skipped) once a newline completes it.
func (l *Live) load() error {
	f, err := Load(l.Path)
	if err != nil {
		return err
	}
	l.Index = NewIndex(f)
	l.lines = countLines(f)
	l.tail = tailOf(f)
	l.complete, l.size = f.CompleteSize, f.Size
	return nil
}

func countLines(f *File) int {
	n := 0
	for _, e := range f.Entries {
		n = max(n, e.Line)
	}
	return n
}

// Refresh applies what was appended since the last call and reports whether the index
// changed. Incomplete trailing lines are held back. Appended lines are parsed with
// Load's rules (Pi 1.6.0's). An entry already indexed is never changed once a snapshot
// shares it: an appended line that would relink earlier entries (a reused id, or the
// parent an orphan names) makes Refresh reload the file into a new index instead.
func (l *Live) Refresh() (bool, error) {
	u, err := l.tail.Poll()
	if err != nil {
		return false, err
	}
	if u.Removed {
		return false, fmt.Errorf("session %s was removed", l.Path)
	}
	if u.Reset {
		if err := l.load(); err != nil {
			return false, err
		}
		return true, nil
	}
	l.complete, l.size = u.Offset, u.Size
	changed := false
	for _, line := range u.Lines {
		l.lines++
		t := trimJSONSpace(line)
		if len(t) == 0 {
			continue
		}
		e, err := parseLine(t, nil)
		if err != nil || e.Type == TypeSession {
			continue // skipped as Load skips it; later headers are not entries
		}
		e.Line = l.lines
		if l.Index.shared && l.Index.relinks(e) {
			if err := l.load(); err != nil {
				return false, err
			}
			return true, nil
		}
		l.Index.Append(e)
		changed = true
	}
	return changed, nil
}
