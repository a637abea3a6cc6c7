package session

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// AgentDir is Pi's agent directory: $PI_CODING_AGENT_DIR (with ~ expanded) or
// ~/.pi/agent.
func AgentDir() (string, error) {
	if d := os.Getenv("PI_CODING_AGENT_DIR"); d != "" {
		return expandHome(d)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("agent dir: %w", err)
	}
	return filepath.Join(home, ".pi", "agent"), nil
}

func expandHome(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("expand ~: %w", err)
		}
		return filepath.Join(home, p[1:]), nil
	}
	return p, nil
}

// SessionsRoot is <agentDir>/sessions.
func SessionsRoot(agentDir string) string { return filepath.Join(agentDir, "sessions") }

// EncodeCwd is Pi's per-cwd folder name: one leading / or \ removed, then every /, \ and
// : replaced by -, wrapped in --. Nothing else is escaped.
func EncodeCwd(cwd string) string {
	s := cwd
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) {
		s = s[1:]
	}
	s = strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(s)
	return "--" + s + "--"
}

// ResolvePath is Pi 1.6.0's resolvePath: ~ expanded, made absolute against the process's
// working directory, and normalized (no trailing separator, . and .. collapsed). Pi keys
// the sessions folder and the header's cwd on it, so "/w/p/", "/w/p/." and "~/p" (with
// HOME=/w) all name one folder.
func ResolvePath(p string) string {
	if e, err := expandHome(p); err == nil {
		p = e
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// SessionDir is the folder Pi uses for cwd's sessions (both paths resolved as Pi resolves
// them). Unlike Pi it does not create it.
func SessionDir(agentDir, cwd string) string {
	return filepath.Join(SessionsRoot(ResolvePath(agentDir)), EncodeCwd(ResolvePath(cwd)))
}

// FileName is Pi's session file name for a header timestamp and session id.
func FileName(isoTimestamp, id string) string {
	return strings.NewReplacer(":", "-", ".", "-").Replace(isoTimestamp) + "_" + id + ".jsonl"
}

// Info describes one session file, as Pi's SessionManager.list does.
type Info struct {
	Path          string
	ID            string
	Cwd           string
	Name          string
	ParentSession string
	Created       time.Time
	Modified      time.Time
	MessageCount  int
	FirstMessage  string
	ModTime       time.Time // file mtime
}

// headerScanLimit is how far Pi 1.6.0's readSessionHeader looks for the header.
const headerScanLimit = 1 << 20

// headerOK is Pi 1.6.0's header discovery (readSessionHeader): within the first MiB,
// blank and malformed lines are skipped and the first parsed value must be a session
// header with a string id. A file whose header does not end within the first MiB is not
// a session to discovery (Pi's bounded scan throws, and discovery treats that as "not a
// session"); opening such a file by path still loads it.
func headerOK(path string) bool {
	_, ok := headerLine(path)
	return ok
}

// headerLine is the line headerOK finds to be the session header of path (without its
// newline), or false.
func headerLine(path string) ([]byte, bool) {
	f, _, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, headerScanLimit+1))
	consumed := 0
	for {
		line, err := r.ReadBytes('\n')
		consumed += len(line)
		if consumed > headerScanLimit {
			return nil, false // the line does not end within the scan
		}
		if err == nil {
			line = line[:len(line)-1]
		}
		switch headerCandidate(line) {
		case candidateHeader:
			return line, true
		case candidateOther:
			return nil, false
		}
		if err != nil {
			return nil, false // the file ended (or could not be read) before a header
		}
	}
}

type candidate int

const (
	candidateSkip   candidate = iota // blank, malformed or falsy: Pi looks at the next line
	candidateOther                   // a parsed value that is not a session header
	candidateHeader                  // a session header with a string id
)

// headerCandidate classifies one physical line the way Pi's parseSessionHeaderCandidate
// does.
func headerCandidate(raw []byte) candidate {
	line := trimJSONSpace(raw)
	if len(line) == 0 || isJSBlank(raw) || jsFalsy(line) || !json.Valid(line) {
		return candidateSkip
	}
	var h struct {
		Type string          `json:"type"`
		ID   json.RawMessage `json:"id"`
	}
	if line[0] != '{' || json.Unmarshal(line, &h) != nil || h.Type != TypeSession {
		return candidateOther
	}
	if _, ok := rawString(h.ID); !ok {
		return candidateOther
	}
	return candidateHeader
}

// resolvesInside reports whether p, with symlinks resolved, is inside realDir (dir with
// symlinks resolved). A session file that is a symlink out of its folder is not a
// session of that folder: pi-lsp reads and writes only inside the sessions folder.
func resolvesInside(realDir, p string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(realDir, real)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

func realDir(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// sessionFiles are the *.jsonl files among ents, the entries of dir, that resolve inside
// dir: a symlink that leads out of it is left out.
func sessionFiles(dir string, ents []os.DirEntry) []string {
	rd := realDir(dir)
	var out []string
	for _, de := range ents {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		if p := filepath.Join(dir, de.Name()); resolvesInside(rd, p) {
			out = append(out, p)
		}
	}
	return out
}

// MostRecent is Pi's findMostRecentSession: the valid *.jsonl file in dir with the newest
// mtime, or "" when there is none. Unlike Pi, a symlink that leads out of dir is
// ignored.
func MostRecent(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	best, bestT := "", time.Time{}
	for _, p := range sessionFiles(dir, ents) {
		if !headerOK(p) {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		if best == "" || st.ModTime().After(bestT) {
			best, bestT = p, st.ModTime()
		}
	}
	return best
}

// List describes every session file in dir, newest activity first (Pi's list order).
// Files that do not load, and symlinks that lead out of dir, are left out.
func List(dir string) ([]Info, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []Info
	for _, p := range sessionFiles(dir, ents) {
		info, err := Describe(p)
		if err != nil {
			continue
		}
		out = append(out, *info)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	return out, nil
}

// Describe loads one session file and summarises it.
func Describe(path string) (*Info, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("describe session: %w", err)
	}
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	ix := NewIndex(f)
	info := &Info{Path: path, ID: f.Header.ID, Cwd: f.Header.Cwd, Name: ix.Name(), ParentSession: f.Header.ParentSession, ModTime: st.ModTime()}
	if ms, ok := ParseJSDate(f.Header.Timestamp); ok {
		info.Created = time.UnixMilli(int64(ms)).UTC()
	}
	var last float64
	for _, e := range f.Entries {
		if e.Type != TypeMessage {
			continue
		}
		info.MessageCount++
		m, err := e.Message()
		if err != nil || (m.Role != RoleUser && m.Role != RoleAssistant) {
			continue
		}
		if info.FirstMessage == "" && m.Role == RoleUser {
			info.FirstMessage = m.Text(" ")
		}
		var ts float64
		if json.Unmarshal(m.Timestamp, &ts) == nil {
			last = max(last, ts)
		} else if ms, ok := e.TimeMillis(); ok {
			last = max(last, ms)
		}
	}
	if info.FirstMessage == "" {
		info.FirstMessage = "(no messages)"
	}
	switch {
	case last > 0:
		info.Modified = time.UnixMilli(int64(last)).UTC()
	case !info.Created.IsZero():
		info.Modified = info.Created
	default:
		info.Modified = st.ModTime()
	}
	return info, nil
}
