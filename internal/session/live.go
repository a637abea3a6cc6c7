package session

import (
	"bytes"
	"fmt"
)

// Live is a loaded session kept current with its file: Refresh applies appended lines
// incrementally and reloads only when the file was replaced or truncated.
type Live struct {
	Path  string
	Index *Index
	tail  *Tail
	lines int
}

// OpenLive loads path and prepares to follow it.
func OpenLive(path string) (*Live, error) {
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	l := &Live{Path: path, Index: NewIndex(f)}
	// Follow from the end of the last complete line; a torn tail is re-read (and
	// skipped) once a newline completes it.
	l.tail = NewTail(path, completeSize(f))
	l.lines = countLines(f)
	return l, nil
}

func completeSize(f *File) int64 { return f.CompleteSize }

func countLines(f *File) int {
	n := 0
	for _, e := range f.Entries {
		n = max(n, e.Line)
	}
	return n
}

// Refresh applies what was appended since the last call and reports whether the index
// changed. Incomplete trailing lines are held back.
func (l *Live) Refresh() (bool, error) {
	u, err := l.tail.Poll()
	if err != nil {
		return false, err
	}
	if u.Removed {
		return false, fmt.Errorf("session %s was removed", l.Path)
	}
	if u.Reset {
		f, err := Load(l.Path)
		if err != nil {
			return false, err
		}
		l.Index = NewIndex(f)
		l.lines = countLines(f)
		l.tail = NewTail(l.Path, completeSize(f))
		return true, nil
	}
	changed := false
	for _, line := range u.Lines {
		l.lines++
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] != '{' {
			continue
		}
		e, err := decodeEntry(t, nil)
		if err != nil || e.Type == TypeSession {
			continue
		}
		e.Line = l.lines
		l.Index.Append(e)
		changed = true
	}
	return changed, nil
}
