package fileops

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// ReadRecord is what the agent last saw of a file: when its read tool call returned,
// and a hash and size of the text it returned.
type ReadRecord struct {
	Path   string
	ReadAt time.Time
	Hash   string // sha256 of the returned text ("" when the result had no text)
	Size   int    // bytes of the returned text
}

// LastReads returns, for every file read through a `read` tool call on a root-first
// path, what the agent last knew of it, in order of first appearance: the last
// successful read (its time and a hash of the returned text), or, when the agent wrote or
// edited the file after reading it, the time of that change (with no hash: the agent
// knows it changed the file, not its exact bytes).
func LastReads(path []*session.Entry) []ReadRecord {
	type call struct{ name, path string }
	pending := map[string]call{} // toolCallId → tool and path
	recs := map[string]*ReadRecord{}
	// The text of a read result is hashed only for the last read of each file (a
	// session reads the same files again and again; each text is read from the file).
	result := map[string]*session.Message{}
	var order []string
	for _, e := range path {
		if e.Type != session.TypeMessage {
			continue
		}
		m, err := e.Message()
		if err != nil {
			continue
		}
		switch m.Role {
		case session.RoleAssistant:
			for _, c := range m.ToolCalls() {
				if (c.Name == "read" || c.Name == "write" || c.Name == "edit") && c.Path != "" {
					pending[c.ID] = call{c.Name, c.Path}
				}
			}
		case session.RoleToolResult:
			c, ok := pending[m.ToolCallID]
			if !ok || m.IsError {
				continue
			}
			delete(pending, m.ToolCallID)
			var at time.Time
			if ms, ok := e.TimeMillis(); ok {
				at = time.UnixMilli(int64(ms)).UTC()
			}
			if c.name != "read" {
				if r := recs[c.path]; r != nil { // a change by the agent after its read
					r.ReadAt, r.Hash, r.Size = at, "", 0
					delete(result, c.path)
				}
				continue
			}
			if _, seen := recs[c.path]; !seen {
				order = append(order, c.path)
			}
			recs[c.path] = &ReadRecord{Path: c.path, ReadAt: at}
			result[c.path] = m
		}
	}
	out := make([]ReadRecord, 0, len(order))
	for _, p := range order {
		r := recs[p]
		if m := result[p]; m != nil {
			text := m.Text("")
			r.Size = len(text)
			if text != "" {
				r.Hash = hashOf([]byte(text))
			}
		}
		out = append(out, *r)
	}
	return out
}

// StaleFile is a file that changed on disk after the agent last read it.
type StaleFile struct {
	Path       string     `json:"path"`
	ReadAt     time.Time  `json:"readAt"`
	ModifiedAt *time.Time `json:"modifiedAt,omitempty"` // absent for a deleted file
	Reason     string     `json:"reason"`               // "modified" or "deleted"
}

// Stale compares the files the agent read (relative paths are taken from cwd) with the
// disk: a file is stale when it was deleted, or modified after the read and its content
// no longer matches what the read returned (when the read returned the whole file, an
// unchanged content after a touch is not stale).
func Stale(cwd string, recs []ReadRecord) []StaleFile {
	var out []StaleFile
	for _, r := range recs {
		p := r.Path
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		} else if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		st, err := os.Stat(p)
		if err != nil {
			if os.IsNotExist(err) {
				out = append(out, StaleFile{Path: r.Path, ReadAt: r.ReadAt, Reason: "deleted"})
			}
			continue
		}
		if st.IsDir() || r.ReadAt.IsZero() || !st.ModTime().After(r.ReadAt) {
			continue
		}
		if r.Hash != "" && st.Size() == int64(r.Size) && st.Size() < 64<<20 {
			if data, err := os.ReadFile(p); err == nil {
				sum := sha256.Sum256(data)
				if hex.EncodeToString(sum[:]) == r.Hash {
					continue // touched, same content
				}
			}
		}
		mt := st.ModTime().UTC()
		out = append(out, StaleFile{Path: r.Path, ReadAt: r.ReadAt, ModifiedAt: &mt, Reason: "modified"})
	}
	return out
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
