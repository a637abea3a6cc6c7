package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// ErrLocked means another process holds the session's write lock.
var ErrLocked = errors.New("session is locked by another writer")

// ErrNewerVersion means the session's header has a format version newer than the one
// Pi 1.6.0 writes (CurrentVersion): pi-lsp reads such a file as 1.6.0 would but never
// appends to it, since a newer Pi may expect entries it cannot write.
var ErrNewerVersion = errors.New("session format is newer than Pi 1.6.0's")

// NewerVersionError is ErrNewerVersion with the header's version.
type NewerVersionError struct{ Version float64 }

func (e *NewerVersionError) Error() string {
	return fmt.Sprintf("the session's format version %v is newer than Pi 1.6.0's (%d): pi-lsp reads it but does not write to it (read-only); update pi-lsp to write it", e.Version, CurrentVersion)
}

func (e *NewerVersionError) Unwrap() error { return ErrNewerVersion }

// CheckWritable returns a *NewerVersionError when the session file at path has a header
// whose version is newer than CurrentVersion, and nil otherwise (also when the file
// cannot be read: the write itself then says why).
func CheckWritable(path string) error {
	f, _, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil
	}
	defer f.Close()
	return checkHeaderVersion(f)
}

// checkHeaderVersion reads the first non-blank line of f (within its first 64 KiB) and
// refuses a session header with a version newer than CurrentVersion.
func checkHeaderVersion(f io.ReaderAt) error {
	buf := make([]byte, 64<<10)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return nil
	}
	for _, line := range bytes.Split(buf[:n], []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var h struct {
			Type    string          `json:"type"`
			Version json.RawMessage `json:"version"`
		}
		var v float64
		if json.Unmarshal(line, &h) == nil && h.Type == TypeSession && json.Unmarshal(h.Version, &v) == nil && v > CurrentVersion {
			return &NewerVersionError{Version: v}
		}
		return nil
	}
	return nil
}

// NewEntry is an entry to append: its type-specific fields in order. The writer adds
// type, id, parentId and timestamp.
type NewEntry struct {
	Type     string
	ParentID string // "" writes parentId: null
	// Fields are written after the envelope, in order. A nil value is left out (as
	// JSON.stringify leaves out undefined).
	Fields []Field
}

// Field is one key/value of a NewEntry.
type Field struct {
	Key   string
	Value any
}

// Append appends entries to the session file at path as whole lines, one write per call
// under an advisory lock, then fsyncs. It never rewrites a byte that was there: if the
// file does not end with a newline (a torn line), a newline is written first so the torn
// bytes stay alone on their line and nothing new is lost with them. A write or fsync
// that fails part-way (a full disk, the file-size limit) is taken back, still under the
// lock, to the size the file had: the file then holds whole lines or is byte-identical. Ids are fresh 8-hex ids
// unique within taken (which is updated).
//
// It returns the appended entries as the file now holds them.
func Append(path string, taken map[string]*Entry, entries []NewEntry) ([]*Entry, error) {
	return AppendIfSize(path, -1, taken, entries)
}

// ErrChanged means the file is not the size the caller loaded: another writer appended
// in between, so what the caller computed from the old content must not be written.
var ErrChanged = errors.New("the session file changed since it was read")

// AppendIfSize is Append that first checks, under the lock, that the file still has
// expectSize bytes (a negative size skips the check). A job that computed its entries
// from a loaded file uses it so that a concurrent append is never silently overtaken.
func AppendIfSize(path string, expectSize int64, taken map[string]*Entry, entries []NewEntry) ([]*Entry, error) {
	var want *Snapshot
	if expectSize >= 0 {
		want = &Snapshot{size: expectSize} // no identity: the size decides
	}
	return appendIf(path, want, taken, entries)
}

// appendIf is Append that first checks, under the lock, that the file is still want's
// (Snapshot.same: its size, and its identity when want has one); nil skips the check.
func appendIf(path string, want *Snapshot, taken map[string]*Entry, entries []NewEntry) ([]*Entry, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	f, _, err := openRegular(path, os.O_RDWR|os.O_APPEND)
	if err != nil {
		return nil, fmt.Errorf("open session for append: %w", err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return nil, err
	}
	defer unlockFile(f)

	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat session: %w", err)
	}
	if want != nil && !want.same(st) {
		return nil, ErrChanged
	}
	if err := checkHeaderVersion(f); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	torn, size, err := tornTail(f, st.Size())
	if err != nil {
		return nil, err
	}
	if want != nil && size != want.size {
		return nil, ErrChanged // a writer was finishing a line
	}
	if torn {
		buf.WriteByte('\n')
	}
	if taken == nil {
		taken = map[string]*Entry{}
	}
	out := make([]*Entry, 0, len(entries))
	now := time.Now().UTC()
	for i, ne := range entries {
		id := newEntryID(taken)
		parent := ne.ParentID
		if i > 0 && parent == chainToPrevious {
			parent = out[i-1].ID
		}
		fields := ne.Fields
		if i > 0 {
			fields = resolvePreviousID(fields, out[i-1].ID)
		}
		line, err := encodeEntry(ne.Type, id, parent, now.Format("2006-01-02T15:04:05.000Z"), fields)
		if err != nil {
			return nil, err
		}
		e, err := decodeEntry(line, nil)
		if err != nil {
			return nil, fmt.Errorf("encode entry: %w", err)
		}
		taken[id] = e
		out = append(out, e)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := writeWhole(f, size, buf.Bytes()); err != nil {
		return nil, err
	}
	return out, nil
}

// writeAppend is the one call that puts bytes into a session file. Tests replace it to
// inject a short or failing write (a disk that fills up mid-line).
var writeAppend = func(f *os.File, b []byte) (int, error) { return f.Write(b) }

// writeWhole appends b to f, which held before bytes when the lock was taken, and
// fsyncs. Either all of b is in the file and synced, or the file is taken back to before
// bytes: a partial line left behind would be glued to the next line a running pi
// appends, and that line would be lost with it. The caller holds the lock.
func writeWhole(f *os.File, before int64, b []byte) error {
	n, err := writeAppend(f, b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		err = fmt.Errorf("append to session: %w", err)
	} else if serr := f.Sync(); serr != nil {
		err = fmt.Errorf("sync session: %w", serr)
	}
	if err == nil {
		return nil
	}
	// Whatever count the failed call reported, what follows before in the file can only
	// be a prefix of b: takeBack checks that before it truncates.
	if rerr := takeBack(f, before, b); rerr != nil {
		return fmt.Errorf("%w; the partial write could not be taken back: %v", err, rerr)
	}
	return err
}

// takeBack truncates f to before bytes when what follows them is a prefix of what this
// call was writing (written), and fsyncs. Pi appends without a lock: if another writer appended
// after the partial bytes, truncating would cut its line too, so it is refused.
func takeBack(f *os.File, before int64, written []byte) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat session: %w", err)
	}
	switch size := st.Size(); {
	case size == before:
		return nil
	case size < before:
		return fmt.Errorf("the file shrank to %d bytes (was %d) while it was locked", size, before)
	case size > before+int64(len(written)):
		return fmt.Errorf("another writer appended after them (the file is %d bytes, %d before this write); the partial line is at offset %d", size, before, before)
	}
	got := make([]byte, st.Size()-before)
	if _, err := f.ReadAt(got, before); err != nil && err != io.EOF {
		return fmt.Errorf("read back the partial write: %w", err)
	}
	if !bytes.Equal(got, written[:len(got)]) {
		return fmt.Errorf("another writer appended after them (the bytes after offset %d are not only this write's); the partial line is at offset %d", before, before)
	}
	if err := f.Truncate(before); err != nil {
		return fmt.Errorf("truncate to %d bytes: %w", before, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync after truncating: %w", err)
	}
	return nil
}

// chainToPrevious as a NewEntry.ParentID makes the entry a child of the previous entry
// of the same Append call.
const chainToPrevious = "\x00previous"

// ChainToPrevious is the ParentID that links an entry to the one appended just before it
// in the same call.
const ChainToPrevious = chainToPrevious

// PreviousEntryID as a Field value is replaced by the id of the entry appended just
// before it in the same Append call (e.g. a label whose targetId is that entry).
var PreviousEntryID = previousEntryID{}

type previousEntryID struct{}

func resolvePreviousID(fields []Field, prev string) []Field {
	var out []Field
	for i, f := range fields {
		if _, ok := f.Value.(previousEntryID); ok {
			if out == nil {
				out = append([]Field(nil), fields...)
			}
			out[i].Value = prev
		}
	}
	if out == nil {
		return fields
	}
	return out
}

// OwnID as a Field value is replaced by the id of the entry being written (Pi 1.6.0's
// retain-none compaction: firstKeptEntryId is the compaction's own id).
var OwnID = ownID{}

type ownID struct{}

// AtEntryTime as a Field value writes a JSON object with its timestamp member set to the
// time of the entry being written, in milliseconds (as Pi stamps a compaction's
// systemMessage checkpoint: new Date(entry.timestamp).getTime()).
func AtEntryTime(obj json.RawMessage) any { return atEntryTime(obj) }

type atEntryTime json.RawMessage

func (a atEntryTime) encode(ts string) (json.RawMessage, error) {
	v, err := jsjson.Parse(a)
	if err != nil || v.Kind != jsjson.Object {
		return nil, fmt.Errorf("not a JSON object: %.40s", a)
	}
	ms, _ := ParseJSDate(ts)
	setKey(&v, "timestamp", jsjson.Value{Kind: jsjson.Number, Num: ms})
	return json.RawMessage(jsjson.Stringify(v)), nil
}

func encodeEntry(typ, id, parent, ts string, fields []Field) ([]byte, error) {
	o := newObject()
	o.str("type", typ)
	o.str("id", id)
	if parent == "" {
		o.raw("parentId", json.RawMessage("null"))
	} else {
		o.str("parentId", parent)
	}
	o.str("timestamp", ts)
	for _, f := range fields {
		if f.Value == nil {
			continue
		}
		var raw []byte
		if _, ok := f.Value.(ownID); ok {
			b, _ := json.Marshal(id)
			raw = b
		} else if r, ok := f.Value.(json.RawMessage); ok {
			raw = r
		} else if a, ok := f.Value.(atEntryTime); ok {
			r, err := a.encode(ts)
			if err != nil {
				return nil, fmt.Errorf("encode %s.%s: %w", typ, f.Key, err)
			}
			raw = r
		} else {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(f.Value); err != nil {
				return nil, fmt.Errorf("encode %s.%s: %w", typ, f.Key, err)
			}
			raw = bytes.TrimRight(b.Bytes(), "\n")
		}
		o.raw(f.Key, raw)
	}
	return o.done(), nil
}

// Create writes a new v3 session file for cwd in dir, named as Pi names it, and returns
// its path. The header's cwd is resolved as Pi 1.6.0 resolves it (ResolvePath). It fails
// if the file exists.
func Create(dir, cwd string) (string, *Header, error) {
	cwd = ResolvePath(cwd)
	id, err := uuid.NewV7()
	if err != nil {
		return "", nil, fmt.Errorf("session id: %w", err)
	}
	ts := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	name := FileName(ts, id.String())
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("create session dir: %w", err)
	}
	o := newObject()
	o.str("type", TypeSession)
	o.raw("version", json.RawMessage("3"))
	o.str("id", id.String())
	o.str("timestamp", ts)
	o.str("cwd", cwd)
	line := append(o.done(), '\n')
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", nil, fmt.Errorf("create session: %w", err)
	}
	defer f.Close()
	if err := writeWhole(f, 0, line); err != nil {
		// The file is ours alone (O_EXCL): an empty file is no session, remove it.
		_ = os.Remove(path)
		return "", nil, fmt.Errorf("write session header: %w", err)
	}
	return path, &Header{ID: id.String(), Version: 3, Timestamp: ts, Cwd: cwd, Raw: line[:len(line)-1]}, nil
}

// tornTail reports whether the file, size bytes long, ends inside a line that no writer
// is finishing: a writer that crashed mid-line. Pi appends without a lock, and a large
// append grows the file in steps, so a tail without its newline may be a line still
// being written; it counts as torn only once the size has stood still for a while (a
// fresh line after a live writer's line would leave a blank line). The while is long
// against scheduling delays on a loaded machine (5 ms was overtaken there); only an
// append after a real torn tail, which is rare, waits it out.
func tornTail(f *os.File, size int64) (torn bool, final int64, err error) {
	const settle, patience = 100 * time.Millisecond, 2 * time.Second
	last := make([]byte, 1)
	for deadline := time.Now().Add(patience); ; {
		if size == 0 {
			return false, 0, nil
		}
		if _, err := f.ReadAt(last, size-1); err != nil && err != io.EOF {
			return false, size, fmt.Errorf("read session tail: %w", err)
		}
		if last[0] == '\n' {
			return false, size, nil
		}
		time.Sleep(settle)
		st, err := f.Stat()
		if err != nil {
			return false, size, fmt.Errorf("stat session: %w", err)
		}
		if st.Size() == size || time.Now().After(deadline) {
			return true, st.Size(), nil
		}
		size = st.Size()
	}
}
