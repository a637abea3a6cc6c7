package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// config is what the client may set through initializationOptions and
// workspace/didChangeConfiguration. Secrets are never part of it.
type config struct {
	Session          string `json:"session,omitempty"`
	KeepRecentTokens int    `json:"keepRecentTokens,omitempty"`
	ReserveTokens    int    `json:"reserveTokens,omitempty"`
	compaction.SummarizerConfig
}

// host owns the workspace's sessions: which one is current, its live index, the folder
// watcher and the notifications derived from file changes.
type host struct {
	s *Server

	mu       sync.Mutex
	agentDir string
	cwd      string
	dir      string // the workspace's session folder
	current  string
	live     map[string]*session.Live
	cfg      config
	writeMu  map[string]*sync.Mutex
	debounce map[string]*time.Timer // per session: a change of one must not swallow another's
	// lastNotify is when each session's state was last pushed (see scheduleNotify).
	lastNotify map[string]time.Time
	reads      map[string]readsMemo // by session (see readRecords)
	notifyMu   sync.Mutex           // orders notifyState runs
	stopped    bool
	stopOnce   sync.Once
	cancel     context.CancelFunc
	memos      map[string]*memoEntry // answers per session state (see memo)
	// compacting guards against concurrent automatic compactions per session.
	compacting map[string]bool
	// overflowTried remembers sessions whose overflow recovery ran for the current turn.
	overflowTried map[string]bool
}

func newHost(s *Server) *host {
	return &host{s: s, live: map[string]*session.Live{}, writeMu: map[string]*sync.Mutex{}, debounce: map[string]*time.Timer{}, lastNotify: map[string]time.Time{}, reads: map[string]readsMemo{},
		compacting: map[string]bool{}, overflowTried: map[string]bool{}, memos: map[string]*memoEntry{}}
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

// applyConfigLocked merges a settings object. It accepts the flat form of
// initializationOptions and VS Code's nested {piLsp: {summarizer: {...}, compaction: {...}}}.
func (h *host) applyConfigLocked(raw json.RawMessage) {
	var nested struct {
		PiLsp *struct {
			Summarizer struct {
				Kind          string `json:"kind"`
				BaseURL       string `json:"baseUrl"`
				Model         string `json:"model"`
				APIKeyEnv     string `json:"apiKeyEnv"`
				ContextWindow int    `json:"contextWindow"`
			} `json:"summarizer"`
			Compaction struct {
				ReserveTokens    int `json:"reserveTokens"`
				KeepRecentTokens int `json:"keepRecentTokens"`
			} `json:"compaction"`
		} `json:"piLsp"`
	}
	if json.Unmarshal(raw, &nested) == nil && nested.PiLsp != nil {
		n := nested.PiLsp
		c := config{KeepRecentTokens: n.Compaction.KeepRecentTokens, ReserveTokens: n.Compaction.ReserveTokens,
			SummarizerConfig: compaction.SummarizerConfig{Kind: n.Summarizer.Kind, BaseURL: n.Summarizer.BaseURL, Model: n.Summarizer.Model, APIKeyEnv: n.Summarizer.APIKeyEnv, ContextWindow: n.Summarizer.ContextWindow}}
		h.cfg = c.over(h.cfg)
		return
	}
	var c config
	if err := json.Unmarshal(raw, &c); err != nil {
		h.s.log.Warn("configuration ignored", "err", err)
		return
	}
	h.cfg = c.over(h.cfg)
}

func (c config) over(old config) config {
	if c.Session == "" {
		c.Session = old.Session
	}
	if c.KeepRecentTokens == 0 {
		c.KeepRecentTokens = old.KeepRecentTokens
	}
	if c.ReserveTokens == 0 {
		c.ReserveTokens = old.ReserveTokens
	}
	c.SummarizerConfig = c.SummarizerConfig.Over(old.SummarizerConfig)
	return c
}

func (h *host) configure(raw json.RawMessage) {
	h.mu.Lock()
	h.applyConfigLocked(raw)
	h.mu.Unlock()
}

// start begins watching the workspace's session folder.
func (h *host) start() {
	ctx, cancel := context.WithCancel(h.s.baseCtx)
	h.mu.Lock()
	h.cancel = cancel
	dir := h.dir
	h.mu.Unlock()
	go h.s.watchStale(ctx, h.s.opt.WatchInterval)
	go func() {
		// The folder may not exist yet (Pi creates it with the first session): wait for it.
		for {
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(h.s.opt.WatchInterval):
			}
		}
		// Watch makes the first look (h.changed("")) once its watch is in place, so a
		// line appended right after the first state was sent is never missed.
		err := session.Watch(ctx, dir, h.s.opt.WatchInterval, h.changed)
		if err != nil {
			h.s.log.Warn("watch failed", "dir", dir, "err", err)
		}
	}()
}

func (h *host) stop() {
	h.stopOnce.Do(func() {
		h.mu.Lock()
		if h.cancel != nil {
			h.cancel()
		}
		h.stopped = true
		for _, t := range h.debounce {
			t.Stop()
		}
		h.mu.Unlock()
	})
}

// changed is called by the watcher for a file of the session folder.
func (h *host) changed(path string) {
	h.mu.Lock()
	if h.current == "" {
		h.current = session.MostRecent(h.dir)
	}
	cur := h.current
	h.mu.Unlock()
	if cur == "" || (path != "" && path != cur) {
		return
	}
	if err := h.refresh(cur); err != nil {
		h.s.log.Debug("refresh failed", "session", cur, "err", err)
		return
	}
	h.scheduleNotify(cur)
}

// scheduleNotify sends pi/sessionChanged and friends for a changed session: at once when
// none was sent within the last interval (Options.Debounce), else once at the end of it.
// An isolated append reaches the editor without waiting; a burst (Pi writes a turn as
// several lines) gives two notifications, not one per line. The notification reads the
// state when it runs, so none is lost by coalescing.
func (h *host) scheduleNotify(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped || h.debounce[path] != nil {
		return // one is due already
	}
	wait := max(0, h.s.opt.Debounce-time.Since(h.lastNotify[path]))
	h.debounce[path] = time.AfterFunc(wait, func() {
		h.mu.Lock()
		delete(h.debounce, path)
		h.lastNotify[path] = time.Now()
		h.mu.Unlock()
		h.notifyState(path)
	})
}

// notifyState pushes pi/sessionChanged, pi/fileOps and pi/contextUsage for a session.
func (h *host) notifyState(path string) {
	// One at a time: a state read later must not be sent before one read earlier.
	h.notifyMu.Lock()
	defer h.notifyMu.Unlock()
	// pi/sessionChanged first: it is cheap, and what editors refresh their views on; the
	// file lists and the context figure, which walk the whole path, follow.
	var changed, ops, usage map[string]any
	var cwd string
	err := h.withIndex(path, func(ix *session.Index) error {
		cwd = ix.File.Header.Cwd
		changed = map[string]any{"session": path, "leafId": nullable(ix.LeafID()), "entries": len(ix.Entries())}
		return nil
	})
	if err != nil {
		return
	}
	if pid := ownerPID(path, cwd); pid > 0 {
		changed["owner"] = map[string]int{"pid": pid}
	}
	h.mu.Lock()
	current := path == h.current
	h.mu.Unlock()
	changed["current"] = current
	h.s.notify("pi/sessionChanged", changed)
	var leafPath []*session.Entry
	var key string
	err = h.withIndex(path, func(ix *session.Index) error {
		leafPath, key = ix.LeafPath(), stateKey(ix)
		return nil
	})
	if err != nil {
		return
	}
	// The context figure projects the whole path: like the file lists, it is read from
	// the path's entries outside the session's lock, so requests do not wait for it.
	tokens, window, pct := h.usage(leafPath)
	usage = map[string]any{"session": path, "tokens": tokens, "contextWindow": window, "percent": pct, "current": current}
	// The file lists walk the whole path and read the last read of every file: done on
	// the path's entries (which never change) without holding the session, so requests
	// are not kept waiting.
	read, mod := fileops.ForPath(leafPath)
	ops = map[string]any{"session": path, "readFiles": read, "modifiedFiles": mod,
		"stale": staleFiles(cwd, h.readRecords(path, key, leafPath)), "current": current}
	h.s.notify("pi/fileOps", ops)
	h.s.notify("pi/contextUsage", usage)
	h.s.maybeDraft(path)
}

// staleFiles lists the files the agent read that changed on disk since.
func staleFiles(cwd string, recs []fileops.ReadRecord) []fileops.StaleFile {
	out := fileops.Stale(cwd, recs)
	if out == nil {
		out = []fileops.StaleFile{}
	}
	return out
}

// usage is Pi 1.6.0's getContextUsage (session.ContextUsage) for the configured window:
// nil tokens and percent after a compaction until a projected reply reports usage again.
func (h *host) usage(path []*session.Entry) (any, int, any) {
	window := h.window()
	tokens, percent := session.ContextUsage(path, window)
	return figures(tokens, percent, window)
}

// contextUsage is usage for a built context, from the projection it holds.
func (h *host) contextUsage(c *session.Context) (any, int, any) {
	window := h.window()
	tokens, percent := c.Usage(window)
	return figures(tokens, percent, window)
}

func figures(tokens, percent *float64, window int) (any, int, any) {
	if tokens == nil {
		return nil, window, nil
	}
	return *tokens, window, *percent
}

func (h *host) window() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg.SummarizerConfig.Window()
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// withIndex runs fn on the session's followed index, first brought up to date with
// the file, under the session's lock. The index and its entries (which cache what they
// decode) are not safe for concurrent use, so they are only ever touched inside fn.
// fn may be nil (refresh only); it must not call back into withIndex.
// memoEntry is a request answer computed for one state of a session.
type memoEntry struct {
	key string
	raw json.RawMessage
}

// stateKey names the state of an index: it changes whenever the index or its leaf does.
func stateKey(ix *session.Index) string {
	return fmt.Sprintf("%p/%d/%s", ix, len(ix.Entries()), ix.LeafID())
}

// readRecords is fileops.LastReads of a session's leaf path in the index state named
// key, computed once per state: the texts it hashes are read back from the session file,
// and the stale-file watcher asks every few seconds.
func (h *host) readRecords(path, key string, leafPath []*session.Entry) []fileops.ReadRecord {
	h.mu.Lock()
	m, ok := h.reads[path]
	h.mu.Unlock()
	if ok && m.key == key {
		return m.recs
	}
	recs := fileops.LastReads(leafPath)
	h.mu.Lock()
	h.reads[path] = readsMemo{key: key, recs: recs}
	h.mu.Unlock()
	return recs
}

type readsMemo struct {
	key  string
	recs []fileops.ReadRecord
}

// encodedJSON is an answer encoded by encoding/json once (so valid), sent as it is.
type encodedJSON []byte

// MarshalJSON is the identity: the bytes are valid JSON already.
func (e encodedJSON) MarshalJSON() ([]byte, error) { return e, nil }

// memo returns the JSON answer named name for the session's current state, computing it
// only when the session changed since: concurrent readers of a large, unchanged session
// share one computation and one encoding. Call it with the session locked (withIndex).
func (h *host) memo(path, name string, ix *session.Index, compute func() (any, error)) (encodedJSON, error) {
	key := stateKey(ix)
	h.mu.Lock()
	m := h.memos[path+"\x00"+name]
	h.mu.Unlock()
	if m != nil && m.key == key {
		return encodedJSON(m.raw), nil
	}
	v, err := compute()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.memos[path+"\x00"+name] = &memoEntry{key: key, raw: raw}
	h.mu.Unlock()
	return encodedJSON(raw), nil
}

func (h *host) withIndex(path string, fn func(ix *session.Index) error) error {
	mu := h.lockFor(path)
	mu.Lock()
	defer mu.Unlock()
	h.mu.Lock()
	l := h.live[path]
	h.mu.Unlock()
	if l == nil {
		var err error
		if l, err = session.OpenLive(path); err != nil {
			return err
		}
		h.mu.Lock()
		h.live[path] = l
		h.mu.Unlock()
	} else if _, err := l.Refresh(); err != nil {
		h.mu.Lock()
		delete(h.live, path)
		h.mu.Unlock()
		return err
	}
	if fn == nil {
		return nil
	}
	return fn(l.Index)
}

// refresh brings a session's index up to date with its file.
func (h *host) refresh(path string) error { return h.withIndex(path, nil) }

// cwdOf is the working directory in a session's header ("" if unreadable).
func (h *host) cwdOf(path string) string {
	cwd := ""
	_ = h.withIndex(path, func(ix *session.Index) error { cwd = ix.File.Header.Cwd; return nil })
	return cwd
}

// lockFor serializes writers (and refreshes) of one session inside this process.
func (h *host) lockFor(path string) *sync.Mutex {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.writeMu[path]
	if m == nil {
		m = &sync.Mutex{}
		h.writeMu[path] = m
	}
	return m
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
		return "", &Error{Code: CodeRequestFailed, Kind: KindBadSession, Msg: err.Error(), Err: err}
	}
	h.current = path
	return path, nil
}

// ownerPID finds a running Pi process that writes this session: a pi process with the
// file open or whose working directory is the session's cwd. It returns 0 when there is none (or /proc is unavailable).
func ownerPID(path, cwd string) int {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		base := filepath.Join("/proc", p.Name())
		// Only a pi process counts: other readers (another pi-lsp, an editor) keep
		// session files open to read entries again, and they append safely.
		cmd, err := os.ReadFile(filepath.Join(base, "cmdline"))
		if err != nil || !isPiCmdline(string(cmd)) {
			continue
		}
		if fds, err := os.ReadDir(filepath.Join(base, "fd")); err == nil {
			for _, fd := range fds {
				if target, err := os.Readlink(filepath.Join(base, "fd", fd.Name())); err == nil && target == path {
					return pid
				}
			}
		}
		if cwd == "" {
			continue
		}
		if pcwd, err := os.Readlink(filepath.Join(base, "cwd")); err == nil && pcwd == cwd {
			return pid
		}
	}
	return 0
}

func isPiCmdline(cmd string) bool {
	args := strings.Split(cmd, "\x00")
	for i, a := range args {
		if i > 2 {
			break
		}
		if filepath.Base(a) == "pi" || strings.Contains(a, "pi-coding-agent") {
			return true
		}
	}
	return false
}

func sessionSettings(agentDir, cwd string) session.Settings {
	return session.LoadSettings(agentDir, cwd)
}
