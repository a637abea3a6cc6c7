package rpc

import (
	"context"
	"encoding/json"

	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/session"

	"os"

	"strconv"

	"time"
)

// start begins watching the workspace's session folder.
func (h *host) start() {
	ctx, cancel := context.WithCancel(h.s.baseCtx)
	h.mu.Lock()
	h.cancel = cancel
	dir := h.dir
	h.mu.Unlock()
	go h.s.watchStale(ctx, h.s.opt.WatchInterval)
	go h.watchBridge(ctx, h.s.opt.WatchInterval)
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

// watchBridge pushes pi/sessionChanged when a live pi's bridge attaches to the current
// session or goes away (the session file need not change for that), so editors can show
// "live" at once.
func (h *host) watchBridge(ctx context.Context, every time.Duration) {
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		h.mu.Lock()
		cur := h.current
		h.mu.Unlock()
		if cur == "" {
			continue
		}
		state := cur
		if reg := h.s.liveBridge(ctx, cur); reg != nil {
			state += "\x00" + strconv.Itoa(reg.PID)
		}
		if state != last {
			if last != "" || state != cur {
				h.scheduleNotify(cur)
			}
			last = state
		}
	}
}

func (h *host) stop() {
	h.stopOnce.Do(func() {
		h.mu.Lock()
		if h.cancel != nil {
			h.cancel()
		}
		h.stopped = true
		for _, st := range h.sessions {
			if st.debounce != nil {
				st.debounce.Stop()
			}
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
	st := h.stateLocked(path)
	if h.stopped || st.debounce != nil {
		return // one is due already
	}
	wait := max(0, h.s.opt.Debounce-time.Since(st.lastNotify))
	st.debounce = time.AfterFunc(wait, func() {
		h.mu.Lock()
		st.debounce = nil
		st.lastNotify = time.Now()
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
	var changed SessionChanged
	var usage ContextUsage
	var cwd string
	var atLeaf []*session.Entry
	err := h.withIndex(path, func(ix *session.Index) error {
		cwd = ix.File.Header.Cwd
		changed = SessionChanged{Session: path, LeafID: nullable(ix.LeafID()), Entries: len(ix.Entries())}
		atLeaf = ix.LeafPath()
		return nil
	})
	if err != nil {
		return
	}
	if o := h.s.svc().OwnerOf(context.Background(), path, cwd); o != nil {
		changed.Owner = &SessionOwner{PID: o.PID, Bridge: o.Bridge}
		if o.Bridge {
			changed.Owner.PiVersion = &o.PiVersion
		}
	}
	h.mu.Lock()
	current := path == h.current
	h.mu.Unlock()
	changed.Current = current
	plan := h.s.svc().SummaryPlan(cwd, atLeaf)
	changed.Summarizer = &plan
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
	usage = h.usageNotice(path, leafPath, current)
	// The file lists walk the whole path and read the last read of every file: done on
	// the path's entries (which never change) without holding the session, so requests
	// are not kept waiting.
	read, mod := fileops.ForPath(leafPath)
	ops := FileOps{Session: path, ReadFiles: read, ModifiedFiles: mod,
		Stale: staleFiles(cwd, h.readRecords(path, key, leafPath)), Current: current}
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

// watchStale pushes pi/fileOps when files the agent read change on disk (the session
// file itself may not change at all meanwhile).
func (s *Server) watchStale(ctx context.Context, interval time.Duration) {
	every(ctx, interval, func() bool {
		s.pushStale()
		return true
	})
}

// pushStale sends pi/fileOps for the current session when the stale files it lists have
// changed since the last push.
func (s *Server) pushStale() {
	path, err := s.host.sessionFor("")
	if err != nil {
		return
	}
	var leafPath []*session.Entry
	var cwd, state string
	if s.host.withIndex(path, func(ix *session.Index) error {
		leafPath, cwd, state = ix.LeafPath(), ix.File.Header.Cwd, stateKey(ix)
		return nil
	}) != nil {
		return
	}
	// Outside the session's lock: stat and hash on disk, the path's records kept.
	stale := staleFiles(cwd, s.host.readRecords(path, state, leafPath))
	b, _ := json.Marshal(stale)
	key := string(b)
	read, mod := fileops.ForPath(leafPath)
	ops := &FileOps{Session: path, ReadFiles: read, ModifiedFiles: mod, Stale: stale, Current: true}
	s.drafts.mu.Lock()
	changed := s.drafts.lastStale[path] != key
	s.drafts.lastStale[path] = key
	s.drafts.mu.Unlock()
	if changed {
		s.notify("pi/fileOps", ops)
	}
}

// every calls tick at each interval until ctx ends or tick returns false.
func every(ctx context.Context, interval time.Duration, tick func() bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !tick() {
				return
			}
		}
	}
}
