package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// How a session reference was resolved (Found.Scope).
const (
	ScopePath     = "path"     // the reference is a path
	ScopeLocal    = "local"    // an id found in the working directory's sessions folder
	ScopeGlobal   = "global"   // an id found in another project's sessions folder
	ScopeContinue = "continue" // the most recent session of the working directory (-c)
)

// Found is a session a reference names.
type Found struct {
	Path  string
	Scope string // ScopePath, ScopeLocal, ScopeGlobal or ScopeContinue
	ID    string // the header's session id ("" for a path)
	Cwd   string // the header's cwd ("" for a path)
}

// Match is one session an id or an id prefix matches.
type Match struct {
	Path     string
	ID       string
	Cwd      string
	Modified time.Time // Pi's list order: the last user or assistant message, else the header's time
	First    string    // the first user message, as Pi's session list shows it
}

// AmbiguousError is a session id prefix (or a duplicated id) that matches more than one
// session of one scope. Matches are in Pi's list order, newest activity first: the
// first is the one `pi --session` would take.
type AmbiguousError struct {
	Ref     string
	Scope   string // ScopeLocal or ScopeGlobal
	Matches []Match
}

// maxListed is how many candidates an AmbiguousError lists.
const maxListed = 10

func (e *AmbiguousError) Error() string {
	where := "this project's sessions"
	if e.Scope == ScopeGlobal {
		where = "the sessions of all projects"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "session %q is ambiguous: %d sessions in %s match; give more of the id or the path:", e.Ref, len(e.Matches), where)
	for i, m := range e.Matches {
		if i == maxListed {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Matches)-maxListed)
			break
		}
		fmt.Fprintf(&b, "\n  %s  %s  %s  %s", m.ID, m.Modified.Local().Format("2006-01-02 15:04"), preview(m.First, 40), m.Path)
	}
	return b.String()
}

// ErrNoSession is the refusal of a reference that names no session (NotFoundError and
// the -c of a project without sessions wrap it).
var ErrNoSession = errors.New("no session found")

// NotFoundError is an id or prefix no session has.
type NotFoundError struct{ Ref string }

func (e *NotFoundError) Error() string {
	// Pi 1.6.0: "No session found matching '<arg>'".
	return fmt.Sprintf("no session found matching '%s' (neither in this project's sessions nor in any other project's)", e.Ref)
}

func (e *NotFoundError) Unwrap() error { return ErrNoSession }

// LooksLikePath is Pi 1.6.0's test in resolveSessionPath (main.ts): an argument with a
// / or a \, or ending in .jsonl, is a path; anything else is a session id or a prefix of
// one.
func LooksLikePath(ref string) bool {
	return strings.ContainsAny(ref, `/\`) || strings.HasSuffix(ref, ".jsonl")
}

// ResolveAgainst is Pi 1.6.0's resolvePath(p, base): a file:// URL made a path, ~ and ~/
// expanded, and a relative path made absolute against base, normalized.
func ResolveAgainst(p, base string) string {
	if strings.HasPrefix(p, "file://") {
		if u, err := url.Parse(p); err == nil && (u.Host == "" || u.Host == "localhost") {
			p = u.Path
		}
	}
	if e, err := expandHome(p); err == nil {
		p = e
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(ResolvePath(base), p)
}

// FindSession resolves a session reference as Pi 1.6.0's `pi --session <ref>` does
// (resolveSessionPath in main.ts), in the sessions folders of agentDir for the working
// directory cwd:
//
//  1. a path (LooksLikePath) is resolved against cwd; whether it exists is the loader's
//     business;
//  2. an exact id among the sessions of cwd's folder (SessionManager.findById);
//  3. an id prefix among them (SessionManager.list, then find by startsWith);
//  4. across every project's folder under <agentDir>/sessions (SessionManager.listAll):
//     an exact id first, then a prefix.
//
// The first step that matches decides. Where Pi takes the newest of several matches
// (list order), pi-lsp refuses with an AmbiguousError listing them: a command that may
// write must not pick a session by a guess. Pi asks before it forks a session found in
// another project into the current one; pi-lsp works on that file in place (Scope says
// so). No match is a NotFoundError.
//
// An id is taken from the session header as Pi's discovery reads it (within the first
// MiB, blank and malformed lines skipped, the first value a session header with a string
// id). As everywhere in pi-lsp, a file that is a symlink out of its folder is no session
// of that folder.
func FindSession(ref, cwd, agentDir string) (Found, error) {
	if ref == "" {
		return Found{}, errors.New("empty session reference")
	}
	if LooksLikePath(ref) {
		return Found{Path: ResolveAgainst(ref, cwd), Scope: ScopePath}, nil
	}
	local := SessionDir(agentDir, cwd)
	heads := readHeaders([]string{local})
	if f, err := pick(ref, ScopeLocal, heads, false); f.Path != "" || err != nil {
		return f, err
	}
	if f, err := pick(ref, ScopeLocal, heads, true); f.Path != "" || err != nil {
		return f, err
	}
	root := SessionsRoot(ResolvePath(agentDir))
	ents, _ := os.ReadDir(root)
	var dirs []string
	for _, de := range ents {
		// Pi's listAll takes directories and symlinks (to directories) below the root.
		if de.IsDir() || de.Type()&os.ModeSymlink != 0 {
			dirs = append(dirs, filepath.Join(root, de.Name()))
		}
	}
	all := readHeaders(dirs)
	if f, err := pick(ref, ScopeGlobal, all, false); f.Path != "" || err != nil {
		return f, err
	}
	if f, err := pick(ref, ScopeGlobal, all, true); f.Path != "" || err != nil {
		return f, err
	}
	return Found{}, &NotFoundError{Ref: ref}
}

// ContinueRecent is the session `pi -c` continues in cwd (SessionManager.continueRecent
// with Pi's default sessions folder): the *.jsonl file of cwd's folder with the newest
// mtime among those with a valid header (findMostRecentSession, see MostRecent). Where
// Pi would start a new session, this is an error wrapping ErrNoSession.
func ContinueRecent(cwd, agentDir string) (Found, error) {
	dir := SessionDir(agentDir, cwd)
	p := MostRecent(dir)
	if p == "" {
		return Found{}, fmt.Errorf("%w to continue in %s (pi -c would start a new one)", ErrNoSession, dir)
	}
	h, _ := readHeader(p)
	return Found{Path: p, Scope: ScopeContinue, ID: h.id, Cwd: h.cwd}, nil
}

type header struct {
	path, id, cwd string
}

// readHeaders reads the headers of the *.jsonl files of dirs (Pi's discovery rules).
func readHeaders(dirs []string) []header {
	var out []header
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, p := range sessionFiles(dir, ents) {
			if h, ok := readHeader(p); ok {
				out = append(out, h)
			}
		}
	}
	return out
}

// pick is one step of FindSession: the headers whose id equals ref (or, with prefix,
// starts with it). Nothing is Found{} and no error.
func pick(ref, scope string, heads []header, prefix bool) (Found, error) {
	var hit []header
	for _, h := range heads {
		if h.id == ref || (prefix && strings.HasPrefix(h.id, ref)) {
			hit = append(hit, h)
		}
	}
	switch len(hit) {
	case 0:
		return Found{}, nil
	case 1:
		return Found{Path: hit[0].path, Scope: scope, ID: hit[0].id, Cwd: hit[0].cwd}, nil
	}
	ms := make([]Match, 0, len(hit))
	for _, h := range hit {
		m := Match{Path: h.path, ID: h.id, Cwd: h.cwd}
		if info, err := Describe(h.path); err == nil {
			m.Modified, m.First = info.Modified, info.FirstMessage
		} else if st, err := os.Stat(h.path); err == nil {
			m.Modified = st.ModTime()
		}
		ms = append(ms, m)
	}
	// Pi's list order (sortSessionInfos): newest activity first; the path keeps the
	// order of equal times fixed.
	sort.SliceStable(ms, func(i, j int) bool {
		if !ms[i].Modified.Equal(ms[j].Modified) {
			return ms[i].Modified.After(ms[j].Modified)
		}
		return ms[i].Path < ms[j].Path
	})
	return Found{}, &AmbiguousError{Ref: ref, Scope: scope, Matches: ms}
}

// readHeader is Pi 1.6.0's readSessionHeaderForDiscovery as headerOK reads it, giving the
// header's id and cwd.
func readHeader(path string) (header, bool) {
	line, ok := headerLine(path)
	if !ok {
		return header{}, false
	}
	var h struct {
		ID  json.RawMessage `json:"id"`
		Cwd json.RawMessage `json:"cwd"`
	}
	if json.Unmarshal(trimJSONSpace(line), &h) != nil {
		return header{}, false
	}
	id, _ := rawString(h.ID)
	cwd, _ := rawString(h.Cwd)
	return header{path: path, id: id, cwd: cwd}, true
}

func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// HeaderCwd is the cwd of the header of the session at path, read from its header line
// alone ("" when the file has no readable header): what deciding where a write goes
// needs, without parsing the session.
func HeaderCwd(path string) string {
	h, _ := readHeader(path)
	return h.cwd
}
