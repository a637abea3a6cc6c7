package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// isJSWhitespace reports bytes that String.prototype.trim removes at the ASCII level.
func isJSSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// Parse parses session file content with Pi's rules: the content is trimmed and split on
// '\n', blank lines are skipped and lines that are not JSON objects are skipped (and
// reported). The first parsed object must be a session header.
func Parse(data []byte) (*File, error) {
	f := &File{Size: int64(len(data)), EndsWithNewline: len(data) == 0 || data[len(data)-1] == '\n'}
	f.CompleteSize = int64(bytes.LastIndexByte(data, '\n') + 1)
	content := data
	leading := 0
	if bytes.HasPrefix(content, bom) {
		content, leading = content[len(bom):], len(bom)
	}
	_ = leading
	lineNo := 0
	var headers int
	for start := 0; start <= len(content); {
		end := bytes.IndexByte(content[start:], '\n')
		last := end < 0
		if last {
			end = len(content)
		} else {
			end += start
		}
		line := content[start:end]
		lineNo++
		start = end + 1
		trimmed := bytes.TrimFunc(line, func(r rune) bool { return r < 0x80 && isJSSpace(byte(r)) })
		if len(trimmed) == 0 {
			if last {
				break
			}
			continue
		}
		if trimmed[0] != '{' {
			f.Skipped = append(f.Skipped, Skipped{Line: lineNo, Reason: "not a JSON object"})
			if last && !f.EndsWithNewline {
				f.Torn = true
			}
			if last {
				break
			}
			continue
		}
		e, err := decodeEntry(trimmed)
		if err != nil {
			reason := "invalid JSON"
			if last && !f.EndsWithNewline {
				f.Torn = true
				reason = "torn last line (no newline, incomplete JSON)"
			}
			f.Skipped = append(f.Skipped, Skipped{Line: lineNo, Reason: reason})
			if last {
				break
			}
			continue
		}
		e.Line = lineNo
		if e.Type == TypeSession {
			if headers == 0 && len(f.Entries) == 0 {
				if err := f.setHeader(trimmed); err != nil {
					return nil, err
				}
			}
			headers++
			if last {
				break
			}
			continue
		}
		if headers == 0 {
			return nil, fmt.Errorf("%w: line %d is a %q entry", ErrNoHeader, lineNo, e.Type)
		}
		f.Entries = append(f.Entries, e)
		if last {
			break
		}
	}
	if headers == 0 {
		return nil, fmt.Errorf("%w: the file holds no parseable session header", ErrNoHeader)
	}
	if err := migrate(f); err != nil {
		return nil, err
	}
	return f, nil
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
