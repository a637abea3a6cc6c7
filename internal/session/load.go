package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// ErrNoHeader means the first parsed line of a file is not a session header. Pi treats
// such a file as empty and overwrites it; pi-lsp refuses to touch it.
var ErrNoHeader = errors.New("no session header")

// Header is the first line of a session file.
type Header struct {
	ID            string
	Version       float64 // 0 when absent (a v1 file)
	Timestamp     string
	Cwd           string
	ParentSession string
	Raw           []byte
}

// ErrTooDense refuses a file holding more entries than its size allows a genuine
// session: past DenseFloor entries, entries must average at least MinEntryBytes bytes.
// Pi's smallest entry is about 90 bytes (a real session averages several hundred), while
// each entry costs a few hundred bytes of memory however small its line: a file of
// millions of "{}" lines would take hundreds of times its size. The load stops, before
// its memory grows, once the count passes the limit.
var ErrTooDense = errors.New("session file too dense")

const (
	// MinEntryBytes is the average size an entry must have past DenseFloor entries.
	MinEntryBytes = 64
	// DenseFloor is the number of entries a file may hold whatever its size (their
	// records take about a megabyte at most).
	DenseFloor = 1 << 12
	// MaxReported is how many skipped lines a File and problems an Index keep records
	// of; past it they only count (a hostile file can have millions).
	MaxReported = 1000
)

// maxEntries is the number of entries a file of size bytes may hold (see ErrTooDense).
func maxEntries(size int64) int64 { return max(DenseFloor, size/MinEntryBytes) }

// Skipped is a line Pi would silently skip on load.
type Skipped struct {
	Line   int
	Reason string
}

// File is a parsed session file.
type File struct {
	Path    string
	Header  Header
	Entries []*Entry // non-header entries in file order
	// Skipped are the first MaxReported lines Pi would skip, in file order;
	// SkippedLines counts all of them.
	Skipped      []Skipped
	SkippedLines int
	// Torn is true when the last line has no newline and does not parse: a writer
	// crashed mid-line. It is skipped, as Pi skips it.
	Torn bool
	// EndsWithNewline reports whether the file's last byte is '\n' (or the file is empty).
	EndsWithNewline bool
	// MigratedFrom is the on-disk version when entries were migrated in memory (1 or 2).
	MigratedFrom int
	Size         int64
	// CompleteSize is the length of the file through its last newline.
	CompleteSize int64

	src *source // the file entries are re-read from (nil when parsed from memory)
}

// Load reads and parses a session file, migrating v1/v2 entries in memory. The file is
// streamed, on every core for large files, and not kept: entries hold their envelope,
// their message's metadata and their position, and their bytes are read again when asked
// for (Entry.Raw()), so memory stays a fraction of the file's size.
func Load(path string) (*File, error) {
	src, fd, err := openSource(path)
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	st, err := fd.Stat()
	if err != nil {
		fd.Close()
		return nil, fmt.Errorf("read session: %w", err)
	}
	in := lineSource{r: fd, size: st.Size(), src: src}
	f, mapped, err := loadMapped(in, fd)
	if !mapped {
		f, err = parse(in)
	}
	if err != nil {
		fd.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	src.loaded()
	f.Path = path
	f.src = src
	return f, nil
}

// ReadErr is the first failure to read a loaded entry again (ErrRewritten when the file
// was rewritten behind our back), or nil. Writers check it before acting on what they
// read.
func (f *File) ReadErr() error { return f.src.readErr() }

// isJSONSpace reports the whitespace JSON.parse accepts around a value. Pi 1.6.0 parses
// each line as it is (0.73.1 trimmed the whole content first), so a line that ends in \v
// or \f, or starts with a byte order mark, is malformed.
func isJSONSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// isJSBlank is Pi's `!line.trim()`: the line holds nothing but what
// String.prototype.trim removes (ECMAScript white space and line terminators, the byte
// order mark among them). Pi skips such a line without calling it malformed.
func isJSBlank(line []byte) bool {
	for len(line) > 0 {
		r, n := utf8.DecodeRune(line)
		switch {
		case r == '\t', r == '\n', r == '\v', r == '\f', r == '\r', r == ' ', r == 0xa0, r == 0x1680,
			r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000, r == 0xfeff:
		default:
			return false
		}
		line = line[n:]
	}
	return true
}

// Parse parses session file content held in memory with Pi's rules (see parse). Its
// entries keep views of data, which must not change afterwards; as a loaded file's, their
// messages' bodies are decoded from their lines when asked for.
func Parse(data []byte) (*File, error) {
	return parse(lineSource{mem: data, size: int64(len(data))})
}

// lineSource is what parse reads: bytes in memory, or a file read in blocks (src set:
// entries are re-read from it on demand).
type lineSource struct {
	mem  []byte
	r    io.ReaderAt
	size int64
	src  *source
	// mapped: mem is a mapping of the file src reads (see mapped.go), read under
	// guard and released as its ranges are parsed (see releaser).
	mapped  bool
	release func(start, end int64)
}

// parse applies Pi 1.6.0's loadEntriesFromFile rules: the content is split on '\n', each
// line is parsed as it stands (no trimming of the whole content, no byte order mark
// removed), blank lines are skipped and lines that are not JSON objects are skipped (and
// reported). The first parsed object must be a session header. Large inputs are parsed on every core: lines
// are independent once the header is found.
func parse(in lineSource) (*File, error) {
	f := &File{Size: in.size}
	var warm *warmCores // the other cores' workers, started before the header is read
	if cores := runtime.GOMAXPROCS(0); cores > 1 && in.size >= parallelThreshold {
		warm = wakeCores(cores - 1)
	}
	defer warm.run(nil) // unless they were given the ranges
	var header *lineReader
	lineNo := 0
	err := in.guard(func() (err error) {
		header, lineNo, err = f.readHeader(in)
		return err
	})
	if err != nil {
		return nil, err
	}
	// Phase 2: the remaining lines, in ranges parsed concurrently.
	pos := header.pos
	if pos < in.size {
		if in.size-pos >= gcPauseMin {
			defer pauseGC()()
		}
		ranges := splitRanges(pos, in.size)
		results := make([]chunkResult, len(ranges))
		budget := &entryBudget{max: maxEntries(in.size)}
		// A worker per core takes the ranges in turn, so that a core slowed by
		// anything else hands its share to the others rather than holding up the
		// load; each keeps its decoder and read buffers from one range to the next.
		var wg sync.WaitGroup
		var taken atomic.Int32
		rel := newReleaser(in.release, ranges)
		work := func() {
			rw := &rangeWorker{d: &decoder{inMemory: in.src == nil}}
			for {
				i := int(taken.Add(1)) - 1
				if i >= len(ranges) {
					return
				}
				// The first range knows the lines before it (the header's); the
				// others' entries are renumbered once the ranges before them are
				// counted.
				lineBase := 0
				if i == 0 {
					lineBase = lineNo
				}
				r := ranges[i]
				if err := in.guard(func() error {
					results[i] = parseRange(in, r, pos, lineBase, !f.EndsWithNewline, budget, rw)
					return results[i].err
				}); err != nil {
					results[i].err = err
				}
				rel.parsed(i)
			}
		}
		if warm != nil && len(ranges) > 1 {
			wg.Add(warm.n)
			warm.run(func() { defer wg.Done(); work() })
		}
		work() // this goroutine is a worker too
		wg.Wait()
		if budget.exceeded() {
			return nil, fmt.Errorf("%w: over %d entries in %d bytes (past %d entries, entries must average %d bytes; Pi's smallest is about 90)",
				ErrTooDense, budget.max, in.size, DenseFloor, MinEntryBytes)
		}
		n := 0
		for _, r := range results {
			if r.err != nil {
				return nil, r.err
			}
			n += len(r.entries)
		}
		f.Entries = make([]*Entry, 0, n)
		base := lineNo // the lines before a range
		for i, r := range results {
			shift := base
			if i == 0 {
				shift = 0 // numbered as it was parsed
			}
			if shift != 0 {
				for _, e := range r.entries {
					e.Line += shift
				}
			}
			for _, s := range r.skipped {
				s.Line += shift
				f.skip(s)
			}
			f.SkippedLines += r.skippedLines - len(r.skipped) // f.skip counted the records
			f.Entries = append(f.Entries, r.entries...)
			f.Torn = f.Torn || r.torn
			base += r.lines
		}
	}
	if err := migrate(f); err != nil {
		return nil, err
	}
	return f, nil
}

// readHeader finds the file's end (EndsWithNewline, CompleteSize) and reads it up to
// and including the session header (phase 1 of parse, in order), returning the reader
// after the header and the number of lines read.
func (f *File) readHeader(in lineSource) (*lineReader, int, error) {
	tail, err := in.tail()
	if err != nil {
		return nil, 0, err
	}
	f.EndsWithNewline = in.size == 0 || tail.last == '\n'
	f.CompleteSize = tail.completeSize
	// Phase 1: up to and including the header, in order.
	lr := newLineReader(in, 0, in.size, false)
	lineNo := 0
	for {
		line, off, ok, err := lr.next()
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			break
		}
		last := off+int64(len(line)) >= in.size
		raw := line
		line = trimJSONSpace(line)
		lineNo++
		if len(line) == 0 {
			continue
		}
		e, err := parseLine(line, &decoder{inMemory: true, single: true})
		if err != nil {
			if isJSBlank(raw) || jsFalsy(line) {
				continue // Pi keeps only truthy values: null, false, 0 and "" are no entry
			}
			if errors.Is(err, errNotObject) && json.Valid(line) {
				return nil, 0, fmt.Errorf("%w: line %d is a JSON value that is not an object", ErrNoHeader, lineNo)
			}
			f.skip(Skipped{Line: lineNo, Reason: err.Error()})
			if last && !f.EndsWithNewline {
				f.Torn = true
			}
			continue
		}
		if e.Type != TypeSession {
			return nil, 0, fmt.Errorf("%w: line %d is a %q entry", ErrNoHeader, lineNo, e.Type)
		}
		if err := f.setHeader(bytes.Clone(line)); err != nil {
			return nil, 0, err
		}
		break
	}
	if f.Header.Raw == nil {
		return nil, 0, fmt.Errorf("%w: the file holds no parseable session header", ErrNoHeader)
	}
	if f.Header.Raw == nil {
		return nil, 0, fmt.Errorf("%w: the file holds no parseable session header", ErrNoHeader)
	}
	return lr, lineNo, nil
}

// skip records a skipped line (only the first MaxReported are kept).
func (f *File) skip(s Skipped) {
	f.SkippedLines++
	if len(f.Skipped) < MaxReported {
		f.Skipped = append(f.Skipped, s)
	}
}

// entryBudget is the number of entries the ranges of one load may make together (see
// ErrTooDense). Each range takes from it in batches, so the shared counter is touched
// once every budgetBatch entries.
type entryBudget struct {
	max  int64
	used atomic.Int64
}

const budgetBatch = 256

// take accounts for n more entries and reports whether the budget still holds.
func (b *entryBudget) take(n int) bool { return b.used.Add(int64(n)) <= b.max }

func (b *entryBudget) exceeded() bool { return b.used.Load() > b.max }

type tailInfo struct {
	last         byte
	completeSize int64
}

// tail finds the last byte and the length through the last newline. Reading a file (or
// a mapping of one, through reads: its pages are not faulted in), it looks back at most
// MaxLineBytes+1 bytes: a last line longer than that is ErrTooLarge.
func (in lineSource) tail() (tailInfo, error) {
	if in.size == 0 {
		return tailInfo{}, nil
	}
	if in.r == nil {
		return tailInfo{last: in.mem[len(in.mem)-1], completeSize: int64(bytes.LastIndexByte(in.mem, '\n') + 1)}, nil
	}
	var t tailInfo
	buf := make([]byte, 64<<10)
	floor := max(0, in.size-MaxLineBytes-1)
	for end := in.size; end > 0; {
		if end <= floor {
			return t, fmt.Errorf("%w: no line end in the last %d bytes: the last line is longer than %d bytes (512 MiB), more than Pi can read", ErrTooLarge, in.size-end, MaxLineBytes)
		}
		start := max(0, end-int64(len(buf)))
		b := buf[:end-start]
		if _, err := in.r.ReadAt(b, start); err != nil && err != io.EOF {
			return t, fmt.Errorf("read session: %w", err)
		}
		if end == in.size {
			t.last = b[len(b)-1]
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			t.completeSize = start + int64(i) + 1
			return t, nil
		}
		end = start
	}
	return t, nil
}

// jsFalsy reports a line holding a JSON value JavaScript calls falsy (null, false, a
// zero, the empty string). Pi's line reader drops those as if the line were blank; any
// other value that is not an object is an entry to Pi, so before the header it makes
// the file invalid.
func jsFalsy(line []byte) bool {
	switch string(line) {
	case "null", "false", `""`:
		return true
	}
	if len(line) == 0 || !(line[0] == '-' || line[0] >= '0' && line[0] <= '9') || !json.Valid(line) {
		return false
	}
	var f float64
	return json.Unmarshal(line, &f) == nil && f == 0
}

var (
	errNotObject   = errors.New("not a JSON object")
	errInvalidJSON = errors.New("invalid JSON")
)

// parseLine decodes one non-blank line, or says why Pi would skip it.
func parseLine(line []byte, d *decoder) (*Entry, error) {
	if line[0] != '{' {
		return nil, errNotObject
	}
	e, err := decodeEntry(line, d)
	if err != nil {
		return nil, errInvalidJSON
	}
	return e, nil
}

func trimJSONSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isJSONSpace(b[i]) {
		i++
	}
	for j > i && isJSONSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

type byteRange struct{ start, end int64 }

type chunkResult struct {
	entries      []*Entry
	skipped      []Skipped // the first MaxReported skipped lines of the range
	skippedLines int       // all of them
	lines        int       // lines in the range, for numbering the next one
	torn         bool
	err          error
}

// typicalLine is the size of line a range's entry list is first made for: under most
// assistant messages with usage, over most tool results.
const typicalLine = 512

// parallelThreshold is the size below which one goroutine parses everything.
const parallelThreshold = 1 << 20

// minRange and maxRange bound the ranges of a parallel load. Each range is a share of
// what is left (guided scheduling): large ranges first, so that finding their first
// lines costs nothing beside them, then smaller and smaller ones, so that the cores
// finish together (a core that takes the last range has at most minRange left to do
// while the others wait). maxRange keeps the pages of the ranges being parsed a small
// part of a mapped load's resident memory.
const (
	minRange = 512 << 10
	maxRange = 4 << 20
)

// splitRanges cuts [pos, size) into ranges for the cores to share, in the order they are
// taken. Range boundaries are byte offsets; a range owns the lines that start inside it.
func splitRanges(pos, size int64) []byteRange {
	cores := int64(runtime.GOMAXPROCS(0))
	if size-pos < parallelThreshold || cores < 2 {
		return []byteRange{{pos, size}}
	}
	var out []byteRange
	for start := pos; start < size; {
		left := size - start
		n := min(max(left/(2*cores), minRange), maxRange)
		if left-n < minRange {
			n = left // no sliver at the end
		}
		out = append(out, byteRange{start, start + n})
		start += n
	}
	return out
}

// rangeWorker is what one goroutine of a load keeps from range to range: its decoder
// (arena and entry blocks) and its read buffers.
type rangeWorker struct {
	d          *decoder
	buf, probe []byte
}

// parseRange parses the lines that start in r. Line numbers are lineBase plus the line's
// number in the range (the caller adds the lines before a range it could not know). It
// stops early once the load's entries exceed budget.
func parseRange(in lineSource, r byteRange, first int64, lineBase int, unterminated bool, budget *entryBudget, rw *rangeWorker) chunkResult {
	var res chunkResult
	// Room for the range's entries at a common size of line, so that the list is not
	// regrown from nothing in every range (its pages are touched only as it fills).
	res.entries = make([]*Entry, 0, max(16, (r.end-r.start)/typicalLine))
	lr := newLineReaderWith(in, r.start, in.size, r.start > first, rw.buf, rw.probe)
	defer func() { rw.buf, rw.probe = lr.buf, lr.probe }()
	d := rw.d
	taken := 0 // entries of this range accounted for in budget
	for {
		if lr.pos >= r.end {
			break
		}
		if len(res.entries)-taken >= budgetBatch {
			if !budget.take(len(res.entries) - taken) {
				return res
			}
			taken = len(res.entries)
		}
		line, off, ok, err := lr.next()
		if err != nil {
			res.err = err
			return res
		}
		if !ok {
			break
		}
		last := off+int64(len(line)) >= in.size
		res.lines++
		t := trimJSONSpace(line)
		if len(t) == 0 {
			continue
		}
		e, err := parseLine(t, d)
		if err != nil {
			if isJSBlank(line) {
				continue
			}
			reason := err.Error()
			if last && unterminated {
				res.torn = true
				reason = "torn last line (no newline, incomplete JSON)"
			}
			res.skippedLines++
			if len(res.skipped) < MaxReported {
				res.skipped = append(res.skipped, Skipped{Line: lineBase + res.lines, Reason: reason})
			}
			continue
		}
		if e.Type == TypeSession {
			continue // later headers are not entries (Pi filters them out)
		}
		if in.src != nil {
			if len(t) <= math.MaxInt32 {
				e.src, e.off, e.n = in.src, off+int64(len(line)-len(trimLeft(line))), int32(len(t))
			} else {
				e.setRaw(bytes.Clone(t)) // a line of 2 GB or more: too long to locate, kept
			}
		}
		e.Line = lineBase + res.lines
		res.entries = append(res.entries, e)
	}
	budget.take(len(res.entries) - taken)
	return res
}

func trimLeft(b []byte) []byte {
	i := 0
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return b[i:]
}

// lineReader yields the lines of a lineSource from a position, with their offsets. A
// line is valid until the next call. Reading a file, it reuses one buffer (grown only
// for a line longer than it).
type lineReader struct {
	in    lineSource
	pos   int64 // offset of the next line
	buf   []byte
	bOff  int64 // file offset of buf[0]
	bLen  int
	probe []byte // reads ahead for the end of a line longer than buf
}

const readBlock = 256 << 10

// newLineReader starts at pos; with skipPartial it first skips to the next line start
// (pos is then a range boundary inside some line, which belongs to the previous range).
func newLineReader(in lineSource, pos, end int64, skipPartial bool) *lineReader {
	return newLineReaderWith(in, pos, end, skipPartial, nil, nil)
}

// newLineReaderWith is newLineReader reading into buffers of an earlier reader (nil:
// allocated when first needed).
func newLineReaderWith(in lineSource, pos, end int64, skipPartial bool, buf, probe []byte) *lineReader {
	lr := &lineReader{in: in, pos: pos, buf: buf, probe: probe}
	if skipPartial {
		// The line containing byte pos-1 belongs to the previous range: start after
		// the first newline at or after pos-1.
		nl, err := lr.lineEnd(pos-1, pos-1)
		switch {
		case err != nil:
			lr.pos = end
		case nl < in.size:
			lr.pos = nl + 1
		default:
			lr.pos = in.size
		}
	}
	return lr
}

// memLook is how far a line's end is looked for in a mapping before the rest is read
// in blocks (see lineEnd).
var memLook int64 = 1 << 20

// lineEnd is the offset of the first newline at or after from, or the size when there
// is none, in the line that starts at start. Reading a file, it reads ahead in blocks
// without keeping them, so that a long line is found without holding it; in a mapping
// it looks memLook bytes ahead and then reads the same way, so that a long line's pages
// are not all faulted in. A file's line longer than MaxLineBytes is ErrTooLarge, found
// without reading past the limit (bytes parsed from memory have no limit: they are held
// already).
func (lr *lineReader) lineEnd(start, from int64) (int64, error) {
	in := lr.in
	limit := in.size
	if in.r != nil {
		limit = min(limit, start+MaxLineBytes+1) // the newline may follow MaxLineBytes bytes
	}
	if in.mem != nil {
		look := limit
		if in.r != nil {
			look = min(limit, max(from, start+memLook))
		}
		if i := bytes.IndexByte(in.mem[from:look], '\n'); i >= 0 {
			return from + int64(i), nil
		}
		from = look
	}
	if from < limit && lr.probe == nil {
		// Most lines are a few KB: a small probe finds their end, and it grows for a
		// long one (memory a load takes is memory it first has to fault in).
		lr.probe = make([]byte, 16<<10)
	}
	for from < limit {
		b := lr.probe[:min(int64(len(lr.probe)), limit-from)]
		if _, err := in.r.ReadAt(b, from); err != nil && err != io.EOF {
			return 0, fmt.Errorf("read session: %w", err)
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return from + int64(i), nil
		}
		from += int64(len(b))
		if len(lr.probe) < readBlock {
			lr.probe = make([]byte, min(2*len(lr.probe), readBlock))
		}
	}
	if from >= in.size {
		return in.size, nil
	}
	return 0, tooLongLine(start)
}

// tooLongLine refuses a line, at byte start, longer than MaxLineBytes.
func tooLongLine(start int64) error {
	return fmt.Errorf("%w: the line at byte %d is longer than %d bytes (512 MiB), more than Pi can read", ErrTooLarge, start, MaxLineBytes)
}

func (lr *lineReader) next() (line []byte, off int64, ok bool, err error) {
	if lr.pos >= lr.in.size {
		return nil, 0, false, nil
	}
	off = lr.pos
	if lr.in.mem != nil {
		nl, err := lr.lineEnd(off, off)
		if err != nil {
			return nil, 0, false, err
		}
		if nl >= lr.in.size {
			lr.pos = lr.in.size
			return lr.in.mem[off:], off, true, nil
		}
		lr.pos = nl + 1
		return lr.in.mem[off:nl], off, true, nil
	}
	for {
		// The part of the buffer from off on.
		if off >= lr.bOff && off <= lr.bOff+int64(lr.bLen) {
			have := lr.buf[off-lr.bOff : lr.bLen]
			if i := bytes.IndexByte(have, '\n'); i >= 0 {
				lr.pos = off + int64(i) + 1
				return have[:i], off, true, nil
			}
			if lr.bOff+int64(lr.bLen) >= lr.in.size {
				lr.pos = lr.in.size
				return have, off, true, nil
			}
		}
		if err := lr.fill(off); err != nil {
			return nil, 0, false, err
		}
	}
}

// fill reads from off into the buffer, keeping what it already holds from off on and
// growing it when a line does not fit.
func (lr *lineReader) fill(off int64) error {
	keep := 0
	if off >= lr.bOff && off <= lr.bOff+int64(lr.bLen) {
		keep = lr.bLen - int(off-lr.bOff)
	}
	if lr.buf == nil {
		lr.buf = make([]byte, readBlock)
	} else if keep == len(lr.buf) {
		// The line is longer than the buffer: find its end first, so that the buffer
		// grows once, to the line's length and a block, not by doubling (garbage that
		// the paused collector keeps until the load ends).
		nl, err := lr.lineEnd(off, off+int64(keep))
		if err != nil {
			return err
		}
		nb := make([]byte, min(nl-off+readBlock, lr.in.size-off))
		copy(nb, lr.buf[lr.bLen-keep:lr.bLen])
		lr.buf = nb
	} else {
		copy(lr.buf, lr.buf[lr.bLen-keep:lr.bLen])
	}
	want := min(int64(len(lr.buf)-keep), lr.in.size-(off+int64(keep)))
	n, err := lr.in.r.ReadAt(lr.buf[keep:keep+int(want)], off+int64(keep))
	if err != nil && !(err == io.EOF && int64(n) == want) {
		return fmt.Errorf("read session: %w", err)
	}
	if int64(n) < want {
		return fmt.Errorf("read session: %w", io.ErrUnexpectedEOF)
	}
	lr.bOff, lr.bLen = off, keep+n
	return nil
}

// setHeader reads the header's members from its line (already validated as a JSON
// object) as encoding/json decoded them into named fields: a key matches a member's
// name whatever its case (strings.EqualFold is encoding/json's folding), and the last of
// duplicated keys wins. One scan of the line; decoding it with encoding/json cost a
// load more than the rest of a small session's header phase (reflection over the
// struct, built on first use).
func (f *File) setHeader(raw []byte) error {
	var buf [16]jsjson.Field
	fields, err := jsjson.ScanObject(raw, buf[:0])
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoHeader, err)
	}
	var id, version, timestamp, cwd, parentSession []byte
	for _, m := range fields {
		switch k := m.Key; {
		case strings.EqualFold(k, "id"):
			id = m.Value
		case strings.EqualFold(k, "version"):
			version = m.Value
		case strings.EqualFold(k, "timestamp"):
			timestamp = m.Value
		case strings.EqualFold(k, "cwd"):
			cwd = m.Value
		case strings.EqualFold(k, "parentSession"):
			parentSession = m.Value
		}
	}
	str := func(v []byte) string { s, _ := rawString(v); return strings.Clone(s) }
	if _, ok := rawString(id); !ok {
		return fmt.Errorf("%w: header has no string id", ErrNoHeader)
	}
	f.Header.ID = str(id)
	f.Header.Raw = raw
	// A number, as encoding/json sets a float64: any other value, or one out of range,
	// leaves the version 0.
	if len(version) > 0 && (version[0] == '-' || version[0] >= '0' && version[0] <= '9') {
		if v, err := strconv.ParseFloat(string(version), 64); err == nil {
			f.Header.Version = v
		}
	}
	f.Header.Timestamp = str(timestamp)
	f.Header.Cwd = str(cwd)
	f.Header.ParentSession = str(parentSession)
	return nil
}
