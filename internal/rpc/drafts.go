package rpc

import (
	"context"

	"sync"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// DefaultSoftThreshold is the share of the compaction trigger (contextWindow -
// reserveTokens) past which a summary draft is prepared in the background.
const DefaultSoftThreshold = 0.7

// drafter prepares compaction drafts in the background for the sessions the server
// follows, so that a compaction commits without waiting for a model. Drafts run only
// when the client enabled them (initializationOptions or settings `drafts: true`; off
// by default, since a draft sends the conversation to the configured model unasked),
// and never while a user's own job is using the summarizer: starting one cancels a
// running draft.
type drafter struct {
	s     *Server
	store *compaction.DraftStore

	mu        sync.Mutex
	userJobs  int
	running   map[string]context.CancelFunc // session → running draft
	scheduled map[string]*time.Timer
	lastStale map[string]string // session → last stale set sent
}

func newDrafter(s *Server, dir string) *drafter {
	return &drafter{s: s, store: compaction.NewDraftStore(dir), running: map[string]context.CancelFunc{},
		scheduled: map[string]*time.Timer{}, lastStale: map[string]string{}}
}

// userJob marks a user job that needs the summarizer; drafts stop and wait until done.
func (d *drafter) userJob() func() {
	d.mu.Lock()
	d.userJobs++
	for _, cancel := range d.running {
		cancel()
	}
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		d.userJobs--
		d.mu.Unlock()
	}
}

// maybeDraft schedules a draft of the session's next compaction when drafts are enabled
// and its context has passed the soft threshold.
func (s *Server) maybeDraft(path string) {
	d := s.drafts
	if d == nil || s.opt.SoftThreshold < 0 || s.bgCtx.Err() != nil || !s.host.draftsEnabled() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if t := d.scheduled[path]; t != nil {
		t.Stop()
	}
	d.scheduled[path] = time.AfterFunc(s.opt.DraftDelay, func() {
		s.background(func(ctx context.Context) { s.draft(ctx, path) })
	})
}

// draft prepares (or updates) the session's draft if the context is large enough.
func (s *Server) draft(ctx context.Context, path string) {
	d := s.drafts
	if !s.host.draftsEnabled() {
		return // turned off since it was scheduled
	}
	summarizer, settings, err := s.summarizerFor(path)
	if err != nil || !settings.Enabled {
		return
	}
	var prep *compaction.Preparation
	var pinned []string
	var tokens float64
	var leafPath []*session.Entry
	err = s.host.withIndex(path, func(ix *session.Index) error {
		leafPath = ix.Path(ix.LeafID())
		pinned = ix.PinnedTexts(leafPath)
		return nil
	})
	if err != nil {
		return
	}
	// The preparation projects the whole path: made from the path's entries outside the
	// session's lock (as the file lists and the context figure of a notification are),
	// so that requests do not wait for a background draft.
	prep, err = compaction.Prepare(leafPath, settings)
	if err != nil || prep == nil || prep.NothingToSummarize() {
		return
	}
	tokens = prep.TokensBefore // the context figure, from the preparation's projection
	trigger := float64(s.host.window() - settings.ReserveTokens)
	if tokens < s.opt.SoftThreshold*trigger {
		return
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.mu.Lock()
	if d.userJobs > 0 || d.running[path] != nil {
		d.mu.Unlock()
		return // a user job or another draft has the summarizer; a later change retries
	}
	d.running[path] = cancel
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.running, path)
		d.mu.Unlock()
	}()
	start := time.Now()
	dr, err := d.store.Refresh(dctx, path, prep, summarizer, compaction.Options{Pinned: pinned})
	if err != nil {
		s.log.Debug("draft not made", "session", path, "err", err)
		return
	}
	s.log.Info("draft ready", "session", path, "incremental", dr.Incremental, "elapsed", time.Since(start))
	s.host.mu.Lock()
	current := path == s.host.current
	s.host.mu.Unlock()
	s.notify("pi/draftReady", DraftReady{Session: path, FirstKeptEntryID: dr.Outcome.FirstKeptEntryID,
		TokensBefore: prep.TokensBefore, Incremental: dr.Incremental, Current: current})
}
