package rpc

import (
	"context"

	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"net/url"
	"os"
	"path/filepath"

	"strings"
	"sync"
	"time"
)

// host owns the workspace's sessions: which one is current, its live index, the folder
// watcher and the notifications derived from file changes.
type host struct {
	s *Server

	mu       sync.Mutex
	agentDir string
	cwd      string
	dir      string // the workspace's session folder
	current  string
	cfg      config
	// sessions holds what the server keeps per session, by path.
	sessions map[string]*sessionState
	notifyMu sync.Mutex // orders notifyState runs
	stopped  bool
	stopOnce sync.Once
	cancel   context.CancelFunc
}

// sessionState is everything the server keeps about one session: its followed index,
// its locks, its notification timer and its memos. One struct per session, so nothing
// about a session is spread over maps keyed by its path. The locks are its own; the
// other fields are guarded by host.mu.
type sessionState struct {
	// indexMu guards the index and its entries (withIndex); jobMu serializes the jobs
	// that write the session (a compaction holds it across its model call).
	indexMu, jobMu sync.Mutex

	live *session.Live
	// debounce is the pending notification (a change of one session must not swallow
	// another's); lastNotify is when its state was last pushed (see scheduleNotify).
	debounce   *time.Timer
	lastNotify time.Time
	reads      readsMemo             // see readRecords
	memos      map[string]*memoEntry // answers per session state (see memo)
	// compacting guards against concurrent automatic compactions.
	compacting bool
	// overflowTried: the overflow recovery ran for the current turn.
	overflowTried bool
	// loop holds back a threshold compaction that would only repeat the last one.
	loop compaction.LoopGuard
	// notice is the last "model not used" line shown for the session (noteChoice).
	notice string
}

func newHost(s *Server) *host {
	return &host{s: s, sessions: map[string]*sessionState{}}
}

// stateLocked is the state of the session at path, created on first use. Call it with
// h.mu held.
func (h *host) stateLocked(path string) *sessionState {
	st := h.sessions[path]
	if st == nil {
		st = &sessionState{memos: map[string]*memoEntry{}}
		h.sessions[path] = st
	}
	return st
}

// state is stateLocked taking h.mu.
func (h *host) state(path string) *sessionState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stateLocked(path)
}

func uriToPath(u string) string {
	if strings.HasPrefix(u, "file://") {
		if parsed, err := url.Parse(u); err == nil {
			return parsed.Path
		}
	}
	return u
}

func (h *host) initialize(p initializeParams) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.agentDir = h.s.opt.AgentDir
	if h.agentDir == "" {
		if d, err := session.AgentDir(); err == nil {
			h.agentDir = d
		}
	}
	switch {
	case len(p.WorkspaceFolders) > 0:
		h.cwd = uriToPath(p.WorkspaceFolders[0].URI)
	case p.RootURI != nil && *p.RootURI != "":
		h.cwd = uriToPath(*p.RootURI)
	case p.RootPath != nil:
		h.cwd = *p.RootPath
	default:
		h.cwd, _ = os.Getwd()
	}
	if h.cwd != "/" {
		h.cwd = strings.TrimRight(h.cwd, "/")
	}
	h.dir = session.SessionDir(h.agentDir, h.cwd)
	if len(p.InitializationOptions) > 0 {
		h.applyConfigLocked(p.InitializationOptions)
	}
	if h.cfg.Session != "" {
		if path, err := h.resolveLocked(h.cfg.Session); err == nil {
			h.current = path
		} else {
			h.s.log.Warn("initializationOptions.session refused", "err", err)
		}
	}
	if h.current == "" {
		h.current = session.MostRecent(h.dir)
	}
}

var errOutside = errors.New("outside the Pi sessions folder")

// resolveLocked checks that p names a .jsonl file inside the Pi sessions folder (after
// resolving symlinks and ..) and returns its clean path.
func (h *host) resolveLocked(p string) (string, error) {
	tooLong := func() error {
		return &Error{Code: CodeInvalidParams, Kind: KindOutsideSessions, Msg: fmt.Sprintf("session path of %d bytes: no path is longer than %d", len(p), maxPathBytes)}
	}
	if len(p) > 3*maxPathBytes+len("file://") { // even percent-encoded
		return "", tooLong()
	}
	p = uriToPath(p)
	if len(p) > maxPathBytes {
		return "", tooLong()
	}
	if !filepath.IsAbs(p) {
		return "", &Error{Code: CodeInvalidParams, Kind: KindOutsideSessions, Msg: fmt.Sprintf("session path %q must be absolute", p)}
	}
	if filepath.Ext(p) != ".jsonl" {
		return "", &Error{Code: CodeInvalidParams, Kind: KindOutsideSessions, Msg: fmt.Sprintf("session path %q is not a .jsonl file", p)}
	}
	root := session.SessionsRoot(h.agentDir)
	outside := func() error {
		return &Error{Code: CodeInvalidParams, Kind: KindOutsideSessions, Msg: fmt.Sprintf("refusing %s: %v (%s)", p, errOutside, root), Err: errOutside}
	}
	// The folder is checked on the path as written before anything is looked up, so
	// the answer never tells whether a file outside the folder exists.
	if rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(p)); err != nil || rel == "." || strings.HasPrefix(rel, "..") || strings.ContainsRune(p, 0) {
		return "", outside()
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = filepath.Clean(root)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", &Error{Code: CodeRequestFailed, Kind: KindNotFound, Msg: fmt.Sprintf("session %s not found", p), Err: err}
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", outside() // a symlink out of the folder
	}
	return filepath.Clean(p), nil
}

// maxPathBytes is Linux's PATH_MAX: a longer session parameter names no file, and is
// refused before it is copied about.
const maxPathBytes = 4096

// sessionFor resolves an optional session parameter to a session path.
func (h *host) sessionFor(p string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p != "" {
		return h.resolveLocked(p)
	}
	if h.current == "" {
		h.current = session.MostRecent(h.dir)
	}
	if h.current == "" {
		return "", &Error{Code: CodeRequestFailed, Kind: KindNoSession, Msg: fmt.Sprintf("no Pi session for this workspace (looked in %s)", h.dir)}
	}
	return h.current, nil
}

func (h *host) select_(p string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	path, err := h.resolveLocked(p)
	if err != nil {
		return "", err
	}
	if _, err := session.Load(path); err != nil {
		return "", badSession(err)
	}
	h.current = path
	return path, nil
}
