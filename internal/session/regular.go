package session

import (
	"errors"
	"fmt"
	"math"
	"os"
)

// Session files are regular files. A FIFO, a device or a directory named *.jsonl (or a
// link to one) is refused without blocking: it is opened non-blocking (openFlags), so
// that opening a FIFO with no writer or a device that waits for a carrier returns at
// once, and the open file's own type (fstat, not a stat of the path, which could change
// in between) decides. Reading such a file would block for ever (a FIFO), never end
// (/dev/zero) or fail late.
//
// A regular file is also refused when it is larger than the index can hold
// (MaxFileBytes), from its size, before anything is read; a line longer than
// MaxLineBytes is refused once its length is known, found without holding the line
// (see lineReader.lineEnd).

// ErrNotRegular refuses a session path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge refuses a session file larger than MaxFileBytes or holding a line longer
// than MaxLineBytes.
var ErrTooLarge = errors.New("session file too large")

const (
	// MaxLineBytes is the longest line a loaded file may hold: 2^29-24, V8's limit on
	// the length of a string. Pi 1.6.0 reads each line into one string and throws past
	// that length, so no line Pi can read back is longer in ASCII (pi-lsp counts bytes:
	// a line of multi-byte text Pi could still read is refused from this many bytes, a
	// line of hundreds of megabytes no session holds). The index itself locates lines
	// of up to 2^31-1 bytes (Entry.n is an int32).
	MaxLineBytes = 1<<29 - 24
	// MaxFileBytes is the largest file the index can number: entries are numbered
	// with an int32 (Entry.pos), and past DenseFloor entries a file may hold one entry
	// per MinEntryBytes bytes (ErrTooDense), so a larger file could hold more entries
	// than an int32 counts. 128 GiB.
	MaxFileBytes = MinEntryBytes * math.MaxInt32
)

// openRegular opens path (flag as os.OpenFile's, without O_CREATE) without blocking and
// returns it with its FileInfo when it is a regular file; anything else is closed and
// refused with ErrNotRegular.
func openRegular(path string, flag int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag|openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kindOf(st.Mode()))}
	}
	return f, st, nil
}

// kindOf names a file type for a refusal.
func kindOf(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}

// checkSize refuses a file larger than MaxFileBytes.
func checkSize(path string, size int64) error {
	if size > MaxFileBytes {
		return fmt.Errorf("%s: %w: %d bytes, over the %d bytes (128 GiB) the index can hold", path, ErrTooLarge, size, int64(MaxFileBytes))
	}
	return nil
}
