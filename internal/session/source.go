package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// source is a loaded session file, for reading entry lines again on demand: a loaded
// file holds each entry's envelope and message metadata, not its bytes. Session files
// only grow (Pi and pi-lsp append whole lines), so the bytes of a line stay where they
// were read. The file is opened while it is being read and closed after a moment of
// rest, so loaded sessions hold no descriptors; it is reopened by path and must still
// be the same file. A read that finds something else there (the file was replaced,
// truncated or rewritten behind our back) is refused and remembered, never returned.
type source struct {
	path     string
	dev, ino uint64

	mu    sync.Mutex
	fd    *os.File
	timer *time.Timer
	err   error // first failed re-read
}

// ErrRewritten reports that a session file no longer holds, at a loaded entry's
// position, the line that was read there: it was replaced, truncated or rewritten.
// Reload it.
var ErrRewritten = errors.New("session file changed on disk since it was loaded")

// sourceIdle is how long a source keeps its file open after the last read.
const sourceIdle = 2 * time.Second

// openSource opens a session file to load: a regular file (openRegular) no larger than
// the index can hold (checkSize).
func openSource(path string) (*source, *os.File, error) {
	fd, st, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSize(path, st.Size()); err != nil {
		fd.Close()
		return nil, nil, err
	}
	s := &source{path: path, fd: fd}
	s.dev, s.ino = fileID(st)
	return s, fd, nil
}

// loaded starts the rest countdown once the file has been read through.
func (s *source) loaded() {
	s.mu.Lock()
	s.restLocked()
	s.mu.Unlock()
}

// restLocked (re)starts the countdown that closes the file after sourceIdle.
func (s *source) restLocked() {
	if s.timer != nil {
		s.timer.Reset(sourceIdle)
		return
	}
	s.timer = time.AfterFunc(sourceIdle, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fd != nil {
			s.fd.Close()
			s.fd = nil
		}
	})
}

// file returns the open file, reopening it (and checking that it is still the file
// that was loaded) after a rest.
func (s *source) fileLocked() (*os.File, error) {
	if s.fd != nil {
		s.restLocked()
		return s.fd, nil
	}
	fd, st, err := openRegular(s.path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	if dev, ino := fileID(st); dev != s.dev || ino != s.ino {
		fd.Close()
		return nil, fmt.Errorf("%w: %s was replaced", ErrRewritten, s.path)
	}
	s.fd = fd
	s.restLocked()
	return fd, nil
}

// line reads the n bytes of a trimmed line at off. The line was a JSON object with the
// given id when it was loaded, so it must still start with '{' and end with '}', with a
// line end or the end of the file after it, and hold that id.
func (s *source) line(off int64, n int, id string) ([]byte, error) {
	s.mu.Lock()
	fd, err := s.fileLocked()
	s.mu.Unlock()
	if err != nil {
		return nil, s.fail(fmt.Errorf("%w: %v", ErrRewritten, err))
	}
	buf := make([]byte, n+1)
	// A concurrent close after rest at worst fails this read; try once more.
	got, err := fd.ReadAt(buf, off)
	if errors.Is(err, os.ErrClosed) {
		s.mu.Lock()
		fd, err = s.fileLocked()
		s.mu.Unlock()
		if err == nil {
			got, err = fd.ReadAt(buf, off)
		}
	}
	if err != nil && !(err == io.EOF && got == n) {
		return nil, s.fail(fmt.Errorf("%w: %s: re-read at byte %d: %v", ErrRewritten, s.path, off, err))
	}
	if n < 2 || buf[0] != '{' || buf[n-1] != '}' || got == n+1 && !isJSONSpace(buf[n]) || !holdsID(buf[:n], id) {
		return nil, s.fail(fmt.Errorf("%w: %s: the line at byte %d is not what was read there", ErrRewritten, s.path, off))
	}
	return buf[:n:n], nil
}

// span reads the bytes of [lo, hi] (hi: the byte after a line, when the file has one),
// or returns nil when they cannot be read: the caller then reads its lines one by one,
// which reports why.
func (s *source) span(lo, hi int64) []byte {
	s.mu.Lock()
	fd, err := s.fileLocked()
	s.mu.Unlock()
	if err != nil {
		return nil
	}
	buf := make([]byte, hi-lo+1)
	got, err := fd.ReadAt(buf, lo)
	if err != nil && !(err == io.EOF && int64(got) >= hi-lo) {
		return nil
	}
	return buf[:got]
}

func (s *source) fail(err error) error {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	return err
}

func (s *source) readErr() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// arena copies the small strings a loaded entry keeps (ids, timestamps, model names,
// paths) out of the read buffer, which is reused, into large shared blocks: one
// allocation per 32 KB instead of one per string. Blocks are never written twice, so
// the strings viewing them are immutable.
type arena struct {
	block []byte
	// interned keeps one copy of values that repeat on every line (provider, model,
	// stop reason, tool names). File paths are copied, not interned: a session names
	// thousands of them, and a lookup per tool call cost more than the copies.
	interned map[string]string
	// recent remembers interned values by a cheap key, so that the values of the line
	// before (the same provider, model, stop reason...) are found without hashing.
	recent [32]string
	blocks int // blocks allocated so far (see next in entry.go: the same growth)
}

const arenaBlock = 32 << 10

func (a *arena) str(s string) string {
	if len(s) == 0 {
		return ""
	}
	if len(s) > arenaBlock/4 {
		return string([]byte(s))
	}
	if len(a.block)+len(s) > cap(a.block) {
		if a.blocks++; a.blocks > slabBlocks {
			a.block = make([]byte, 0, 8*arenaBlock)
			prefault(a.block[:cap(a.block)])
		} else {
			a.block = make([]byte, 0, arenaBlock)
		}
	}
	start := len(a.block)
	a.block = append(a.block, s...)
	return unsafe.String(&a.block[start], len(s))
}

func (a *arena) bytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	s := a.str(unsafe.String(&b[0], len(b)))
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

func (a *arena) intern(s string) string {
	if len(s) == 0 {
		return ""
	}
	slot := &a.recent[(len(s)*7+int(s[0])+int(s[len(s)-1])*3)&31]
	if *slot == s {
		return *slot
	}
	if v, ok := a.interned[s]; ok {
		*slot = v
		return v
	}
	if a.interned == nil {
		a.interned = make(map[string]string, 256)
	}
	v := a.str(s)
	a.interned[v] = v
	*slot = v
	return v
}

func (a *arena) internBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	s := a.intern(unsafe.String(&b[0], len(b)))
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// internKnown returns the constant for the entry types and roles every file repeats,
// so they cost no memory per entry.
func internKnown(s string, a *arena) string {
	switch s {
	case TypeMessage:
		return TypeMessage
	case TypeSession:
		return TypeSession
	case TypeThinkingLevelChange:
		return TypeThinkingLevelChange
	case TypeModelChange:
		return TypeModelChange
	case TypeCompaction:
		return TypeCompaction
	case TypeBranchSummary:
		return TypeBranchSummary
	case TypeCustom:
		return TypeCustom
	case TypeCustomMessage:
		return TypeCustomMessage
	case TypeLabel:
		return TypeLabel
	case TypeSessionInfo:
		return TypeSessionInfo
	case RoleUser:
		return RoleUser
	case RoleAssistant:
		return RoleAssistant
	case RoleToolResult:
		return RoleToolResult
	case RoleBashExecution:
		return RoleBashExecution
	case RoleBranchSummary:
		return RoleBranchSummary
	case RoleCompactionSummary:
		return RoleCompactionSummary
	}
	if a == nil {
		return s
	}
	return a.intern(s)
}

// holdsID reports whether a line's id is id. Pi writes "id" among the first members, so
// the line's start is looked at first; any other line is scanned.
func holdsID(line []byte, id string) bool {
	if id == "" {
		return true // nothing to compare (the entry had no string id)
	}
	head := line[:min(len(line), 96+len(id))]
	if i := bytes.Index(head, []byte(`"id":"`)); i >= 0 {
		rest := head[i+6:]
		if len(rest) > len(id) && string(rest[:len(id)]) == id && rest[len(id)] == '"' {
			return true
		}
	}
	raw, ok := jsjson.LookupField(line, "id")
	if !ok {
		return false
	}
	got, ok := jsjson.StringValue(raw)
	return ok && got == id
}
