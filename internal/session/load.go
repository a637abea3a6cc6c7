package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
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
	Skipped []Skipped
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
}

// Load reads and parses a session file, migrating v1/v2 entries in memory.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

var bom = []byte("\xef\xbb\xbf")

// isJSSpace reports bytes that String.prototype.trim removes at the ASCII level.
func isJSSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// Parse parses session file content with Pi's rules: the content is trimmed and split on
// '\n', blank lines are skipped and lines that are not JSON objects are skipped (and
// reported). The first parsed object must be a session header. Large files are parsed
// on every core: lines are independent once the header is found.
func Parse(data []byte) (*File, error) {
	f := &File{Size: int64(len(data)), EndsWithNewline: len(data) == 0 || data[len(data)-1] == '\n'}
	f.CompleteSize = int64(bytes.LastIndexByte(data, '\n') + 1)
	content := bytes.TrimPrefix(data, bom)
	// Phase 1: up to and including the header, in order.
	pos, lineNo := 0, 0
	for pos < len(content) {
		end := bytes.IndexByte(content[pos:], '\n')
		last := end < 0
		if last {
			end = len(content)
		} else {
			end += pos
		}
		line := trimJSSpace(content[pos:end])
		lineNo++
		next := end + 1
		if len(line) == 0 {
			pos = next
			continue
		}
		e, err := parseLine(line)
		if err != nil {
			f.Skipped = append(f.Skipped, Skipped{Line: lineNo, Reason: err.Error()})
			if last && !f.EndsWithNewline {
				f.Torn = true
			}
			pos = next
			continue
		}
		if e.Type != TypeSession {
			return nil, fmt.Errorf("%w: line %d is a %q entry", ErrNoHeader, lineNo, e.Type)
		}
		if err := f.setHeader(line); err != nil {
			return nil, err
		}
		pos = next
		break
	}
	if f.Header.Raw == nil {
		return nil, fmt.Errorf("%w: the file holds no parseable session header", ErrNoHeader)
	}
	// Phase 2: the remaining lines, in chunks parsed concurrently.
	if pos < len(content) {
		chunks := splitChunks(content, pos, lineNo)
		results := make([]chunkResult, len(chunks))
		var wg sync.WaitGroup
		for i := range chunks {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				results[i] = parseChunk(content, chunks[i], !f.EndsWithNewline)
			}(i)
		}
		wg.Wait()
		n := 0
		for _, r := range results {
			n += len(r.entries)
		}
		f.Entries = make([]*Entry, 0, n)
		for _, r := range results {
			f.Entries = append(f.Entries, r.entries...)
			f.Skipped = append(f.Skipped, r.skipped...)
			f.Torn = f.Torn || r.torn
		}
	}
	if err := migrate(f); err != nil {
		return nil, err
	}
	return f, nil
}

var errNotObject = errors.New("not a JSON object")

// parseLine decodes one non-blank line, or says why Pi would skip it.
func parseLine(line []byte) (*Entry, error) {
	if line[0] != '{' {
		return nil, errNotObject
	}
	e, err := decodeEntry(line)
	if err != nil {
		return nil, errors.New("invalid JSON")
	}
	return e, nil
}

func trimJSSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isJSSpace(b[i]) {
		i++
	}
	for j > i && isJSSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

type chunk struct {
	start, end int // byte range, starting at a line start
	firstLine  int // line number of the first line, 1-based
}

type chunkResult struct {
	entries []*Entry
	skipped []Skipped
	torn    bool
}

// parallelThreshold is the size below which one goroutine parses everything.
const parallelThreshold = 4 << 20

func splitChunks(content []byte, pos, linesBefore int) []chunk {
	n := runtime.GOMAXPROCS(0)
	if len(content)-pos < parallelThreshold || n < 2 {
		return []chunk{{pos, len(content), linesBefore + 1}}
	}
	size := (len(content) - pos) / n
	var out []chunk
	start, line := pos, linesBefore+1
	for i := 0; i < n && start < len(content); i++ {
		end := len(content)
		if i < n-1 {
			cut := start + size
			if cut >= len(content) {
				cut = len(content)
			} else if nl := bytes.IndexByte(content[cut:], '\n'); nl >= 0 {
				cut += nl + 1
			} else {
				cut = len(content)
			}
			end = cut
		}
		out = append(out, chunk{start, end, line})
		line += bytes.Count(content[start:end], []byte{'\n'})
		start = end
	}
	return out
}

// parseChunk parses the lines of one chunk. Entries are allocated in one slab.
func parseChunk(content []byte, c chunk, unterminated bool) chunkResult {
	var r chunkResult
	data := content[c.start:c.end]
	lineNo := c.firstLine
	for pos := 0; pos < len(data); lineNo++ {
		end := bytes.IndexByte(data[pos:], '\n')
		last := end < 0
		if last {
			end = len(data)
		} else {
			end += pos
		}
		line := trimJSSpace(data[pos:end])
		pos = end + 1
		if len(line) == 0 {
			continue
		}
		e, err := parseLine(line)
		if err != nil {
			reason := err.Error()
			if last && unterminated && c.end == len(content) {
				r.torn = true
				reason = "torn last line (no newline, incomplete JSON)"
			}
			r.skipped = append(r.skipped, Skipped{Line: lineNo, Reason: reason})
			continue
		}
		if e.Type == TypeSession {
			continue // later headers are not entries (Pi filters them out)
		}
		e.Line = lineNo
		r.entries = append(r.entries, e)
	}
	return r
}

func (f *File) setHeader(raw []byte) error {
	var h struct {
		ID            json.RawMessage `json:"id"`
		Version       json.RawMessage `json:"version"`
		Timestamp     json.RawMessage `json:"timestamp"`
		Cwd           json.RawMessage `json:"cwd"`
		ParentSession json.RawMessage `json:"parentSession"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return fmt.Errorf("%w: %v", ErrNoHeader, err)
	}
	id, ok := rawString(h.ID)
	if !ok {
		return fmt.Errorf("%w: header has no string id", ErrNoHeader)
	}
	f.Header.ID = id
	f.Header.Raw = raw
	if len(h.Version) > 0 {
		_ = json.Unmarshal(h.Version, &f.Header.Version)
	}
	f.Header.Timestamp, _ = rawString(h.Timestamp)
	f.Header.Cwd, _ = rawString(h.Cwd)
	f.Header.ParentSession, _ = rawString(h.ParentSession)
	return nil
}
