package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Tail reads what is appended to one file, in whole lines. It holds back an incomplete
// last line until its newline arrives, and starts over when the file is replaced (new
// inode) or truncated (smaller than what was read).
type Tail struct {
	Path    string
	ino     uint64
	offset  int64
	partial []byte
	started bool
}

// NewTail follows path from offset (use the size of what was already loaded, or 0).
func NewTail(path string, offset int64) *Tail {
	t := &Tail{Path: path, offset: offset}
	if st, err := os.Stat(path); err == nil {
		t.ino = inode(st)
		t.started = true
	}
	return t
}

// tailOf follows a loaded file from the end of its last complete line. The inode is the
// one Load read, not the path's now: a file replaced between the load and this call
// (renamed over) is then a new inode at the first Poll, and read again whole, where a
// second stat would take the new file's inode and read it from the old file's offset.
func tailOf(f *File) *Tail {
	if f.src == nil {
		return NewTail(f.Path, f.CompleteSize)
	}
	return &Tail{Path: f.Path, offset: f.CompleteSize, ino: f.src.ino, started: true}
}

// maxTailRead is the most a Poll reads at once: beyond it (or when the held-back
// incomplete line passes it) the update is a Reset without lines, and the follower
// loads the file again (Load reads it in blocks and refuses what it cannot hold).
const maxTailRead = 16 << 20

// Update is what one Poll found.
type Update struct {
	// Reset is true when the file was replaced or truncated: Lines then hold the whole
	// file and earlier state must be dropped. It is also true, with no Lines, when more
	// than maxTailRead bytes were appended: the file is to be loaded again.
	Reset   bool
	Removed bool
	Lines   [][]byte // complete lines, without their '\n'
	Offset  int64    // bytes consumed through the last complete line
	// Size is the bytes read: Offset and the incomplete last line held back.
	Size int64
}

// Poll reads the bytes appended since the last call. Its cost is proportional to what
// was appended.
func (t *Tail) Poll() (Update, error) {
	var u Update
	st, err := os.Stat(t.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if t.started {
				u.Removed = true
				t.started, t.offset, t.partial = false, 0, nil
			}
			return u, nil
		}
		return u, fmt.Errorf("tail %s: %w", t.Path, err)
	}
	ino := inode(st)
	readFrom := t.offset + int64(len(t.partial))
	if !t.started || ino != t.ino || st.Size() < readFrom {
		u.Reset = t.started || t.offset > 0
		t.ino, t.offset, t.partial, t.started = ino, 0, nil, true
		readFrom = 0
	}
	if st.Size() == readFrom {
		u.Offset, u.Size = t.offset, readFrom
		return u, nil
	}
	if st.Size()-readFrom > maxTailRead {
		// More than a few appends' worth (or a file grown sparse by gigabytes): not
		// read into memory here, but loaded again, with Load's limits.
		u.Reset = true
		return u, nil
	}
	f, _, err := openRegular(t.Path, os.O_RDONLY)
	if err != nil {
		return u, fmt.Errorf("tail %s: %w", t.Path, err)
	}
	defer f.Close()
	buf := make([]byte, st.Size()-readFrom)
	n, err := f.ReadAt(buf, readFrom)
	if err != nil && err != io.EOF {
		return u, fmt.Errorf("tail %s: %w", t.Path, err)
	}
	data := append(t.partial, buf[:n]...)
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		t.partial = data
		u.Offset, u.Size = t.offset, t.offset+int64(len(data))
		return u, nil
	}
	complete := data[:last]
	t.partial = append([]byte(nil), data[last+1:]...)
	t.offset += int64(last + 1)
	for _, line := range bytes.Split(complete, []byte("\n")) {
		u.Lines = append(u.Lines, line)
	}
	u.Offset, u.Size = t.offset, t.offset+int64(len(t.partial))
	return u, nil
}

// Watch watches dir for changes to *.jsonl files and calls onChange with the changed
// file's path. Once the watch is in place and the sizes it rescans against are taken,
// it calls onChange("") for a first look: every change made after that call starts is
// reported (a caller that read the folder before Watch returned could miss a write made
// in between, and the baseline taken after it would hide it from every rescan).
// fsnotify events are only hints: the folder is also rescanned every interval, and on
// event overflow. Watch returns when ctx is done.
func Watch(ctx context.Context, dir string, interval time.Duration, onChange func(path string)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	if interval <= 0 {
		interval = 2 * time.Second
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	sizes := map[string]int64{}
	scan := func() {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, de := range ents {
			if !strings.HasSuffix(de.Name(), ".jsonl") {
				continue
			}
			p := filepath.Join(dir, de.Name())
			st, err := de.Info()
			if err != nil {
				continue
			}
			if old, ok := sizes[p]; !ok || old != st.Size() {
				sizes[p] = st.Size()
				onChange(p)
			}
		}
	}
	if ents, err := os.ReadDir(dir); err == nil {
		for _, de := range ents {
			if st, err := de.Info(); err == nil && strings.HasSuffix(de.Name(), ".jsonl") {
				sizes[filepath.Join(dir, de.Name())] = st.Size()
			}
		}
	}
	onChange("")
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Op&fsnotify.Chmod == ev.Op || !strings.HasSuffix(ev.Name, ".jsonl") {
				continue
			}
			if st, err := os.Stat(ev.Name); err == nil {
				sizes[ev.Name] = st.Size()
			} else {
				delete(sizes, ev.Name)
			}
			onChange(ev.Name)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				scan()
			}
		case <-tick.C:
			scan()
		}
	}
}
