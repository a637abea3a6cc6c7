package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// DefaultSoftThreshold is the share of the compaction trigger (contextWindow -
// reserveTokens) past which a summary draft is prepared in the background.
const DefaultSoftThreshold = 0.7

// drafter prepares compaction drafts in the background for the sessions the server
// follows, so that a compaction commits without waiting for a model. Drafts never run
// while a user's own job is using the summarizer: starting one cancels a running draft.
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

// maybeDraft schedules a draft of the session's next compaction when its context has
// passed the soft threshold.
func (s *Server) maybeDraft(path string) {
	d := s.drafts
	if d == nil || s.opt.SoftThreshold < 0 || s.bgCtx.Err() != nil {
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
	s.notify("pi/draftReady", map[string]any{"session": path, "firstKeptEntryId": dr.Outcome.FirstKeptEntryID,
		"tokensBefore": prep.TokensBefore, "incremental": dr.Incremental, "current": current})
}

type previewParams struct {
	Session       string          `json:"session"`
	Instructions  string          `json:"instructions"`
	WorkDoneToken json.RawMessage `json:"workDoneToken"`
}

// handlePreviewCompaction answers what a compaction would do now, with its summary (the
// draft when one matches, otherwise freshly generated and kept as the draft), without
// writing anything.
func (s *Server) handlePreviewCompaction(ctx context.Context, raw json.RawMessage) (any, error) {
	var p previewParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	path, err := s.host.sessionFor(p.Session)
	if err != nil {
		return nil, err
	}
	summarizer, settings, err := s.summarizerFor(path)
	if err != nil {
		return nil, err
	}
	var prep *compaction.Preparation
	var pinned []string
	if _, err := s.withSession(path, func(_ string, ix *session.Index) error {
		leafPath := ix.Path(ix.LeafID())
		pp, err := compaction.Prepare(leafPath, settings)
		prep, pinned = pp, ix.PinnedTexts(leafPath)
		return err
	}); err != nil {
		if errors.Is(err, compaction.ErrAlreadyCompacted) || errors.Is(err, compaction.ErrEmptyPath) {
			return map[string]any{"nothingToCompact": true, "reason": err.Error()}, nil
		}
		return nil, err
	}
	if prep.NothingToSummarize() {
		return map[string]any{"nothingToCompact": true, "reason": compaction.ErrNothingToCompact.Error()}, nil
	}
	opt := compaction.Options{CustomInstructions: p.Instructions, Pinned: pinned}
	out := s.drafts.store.Lookup(path, prep, p.Instructions, pinned)
	fromDraft := out != nil
	if out == nil {
		done := s.drafts.userJob()
		defer done()
		jctx, cancel := context.WithCancel(ctx)
		defer cancel()
		wd := s.tracker.Start(ctx, p.WorkDoneToken, "Previewing compaction", "summarizing", cancel)
		opt.Progress = func(pr compaction.Progress) {
			wd.Report(pr.Message(), 10+uint32(min(80, pr.Tokens*80/400)))
		}
		d, err := s.drafts.store.Refresh(jctx, path, prep, summarizer, opt)
		if err != nil {
			wd.End("Failed: " + err.Error())
			return nil, err
		}
		wd.End("Summary ready")
		o := *d.Outcome
		out = &o
	}
	return map[string]any{
		"session": path, "spanKey": compaction.SpanKey(prep, p.Instructions, pinned),
		"firstKeptEntryId": prep.FirstKeptEntryID, "isSplitTurn": prep.IsSplitTurn,
		"messagesToSummarize": len(prep.MessagesToSummarize) + len(prep.TurnPrefixMessages),
		"keptMessages":        len(prep.KeptMessages()), "tokensBefore": prep.TokensBefore, "tokensAfter": out.TokensAfter,
		"summary": out.Summary, "audit": out.Audit, "fromDraft": fromDraft, "pinned": pinned,
	}, nil
}

type commitParams struct {
	Session           string `json:"session"`
	Summary           string `json:"summary"`
	SpanKey           string `json:"spanKey"`
	Instructions      string `json:"instructions"`
	AcceptDroppedPins bool   `json:"acceptDroppedPins"`
	Force             bool   `json:"force"`
}

// handleCommitCompaction writes a previewed (and possibly edited) summary as the
// compaction, provided the session still has the previewed span.
func (s *Server) handleCommitCompaction(ctx context.Context, raw json.RawMessage) (any, error) {
	var p commitParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Summary == "" || p.SpanKey == "" {
		return nil, invalidParams("summary and spanKey (from pi/previewCompaction) are required")
	}
	var cwd string
	path, err := s.withSession(p.Session, func(_ string, ix *session.Index) error { cwd = ix.File.Header.Cwd; return nil })
	if err != nil {
		return nil, err
	}
	if err := s.checkOwner(path, cwd, p.Force); err != nil {
		return nil, err
	}
	return s.compact(ctx, path, compactJob{reason: "manual", instructions: p.Instructions, editedSummary: p.Summary,
		spanKey: p.SpanKey, acceptDroppedPins: p.AcceptDroppedPins})
}

// editedOutcome builds the outcome of a user-written summary for a preparation.
func editedOutcome(text string, p *compaction.Preparation, pinned []string, draft *compaction.Outcome) *compaction.Outcome {
	read, mod := p.FileOps.Lists()
	o := &compaction.Outcome{Summary: text, FirstKeptEntryID: p.FirstKeptEntryID, TokensBefore: p.TokensBefore,
		Details: compaction.Details{ReadFiles: read, ModifiedFiles: mod}}
	o.Details.Edited = draft == nil || draft.Summary != text
	if draft != nil {
		o.Usage = draft.Usage
	}
	o.TokensAfter = compaction.TokensAfter(text, p)
	o.Audit = compaction.AuditSummary(text, mod, pinned)
	return o
}

type previewBranchParams struct {
	Session       string          `json:"session"`
	TargetID      string          `json:"targetId"`
	Instructions  string          `json:"instructions"`
	WorkDoneToken json.RawMessage `json:"workDoneToken"`
}

// handlePreviewBranchSummary generates the summary of the branch a navigation to
// targetId would leave, without writing; pi/navigate with `summary` commits it.
func (s *Server) handlePreviewBranchSummary(ctx context.Context, raw json.RawMessage) (any, error) {
	var p previewBranchParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.TargetID == "" {
		return nil, invalidParams("targetId is required")
	}
	path, err := s.host.sessionFor(p.Session)
	if err != nil {
		return nil, err
	}
	summarizer, _, err := s.summarizerFor(path)
	if err != nil {
		return nil, err
	}
	var col branch.Collected
	var leaf string
	if _, err := s.withSession(path, func(_ string, ix *session.Index) error {
		if ix.Entry(p.TargetID) == nil {
			return &Error{Code: CodeRequestFailed, Kind: KindNotFound, Msg: fmt.Sprintf("entry %s not found", p.TargetID)}
		}
		leaf = ix.LeafID()
		col = branch.Collect(ix, leaf, p.TargetID)
		return nil
	}); err != nil {
		return nil, err
	}
	done := s.drafts.userJob()
	defer done()
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wd := s.tracker.Start(ctx, p.WorkDoneToken, "Previewing branch summary", "summarizing", cancel)
	sum, err := branch.Generate(jctx, col.Entries, summarizer, branch.SummaryOptions{
		CustomInstructions: p.Instructions, ReserveTokens: s.branchReserve(path), ContextWindow: s.host.window(),
	})
	if err != nil {
		wd.End("Failed: " + err.Error())
		return nil, err
	}
	wd.End("Summary ready")
	return map[string]any{"session": path, "targetId": p.TargetID, "leafId": nullable(leaf), "commonAncestorId": nullable(col.CommonAncestorID),
		"entries": len(col.Entries), "summary": sum.Text}, nil
}

type pinParams struct {
	Session string `json:"session"`
	EntryID string `json:"entryId"`
	Pinned  *bool  `json:"pinned"`
	Force   bool   `json:"force"`
}

// handlePin pins (or, with pinned: false, unpins) an entry.
func (s *Server) handlePin(ctx context.Context, raw json.RawMessage) (any, error) {
	var p pinParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.EntryID == "" {
		return nil, invalidParams("entryId is required")
	}
	pinned := p.Pinned == nil || *p.Pinned
	var cwd string
	path, err := s.withSession(p.Session, func(_ string, ix *session.Index) error {
		cwd = ix.File.Header.Cwd
		if ix.Entry(p.EntryID) == nil {
			return &Error{Code: CodeRequestFailed, Kind: KindNotFound, Msg: fmt.Sprintf("entry %s not found", p.EntryID)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.checkOwner(path, cwd, p.Force); err != nil {
		return nil, err
	}
	mu := s.jobLock(path)
	mu.Lock()
	defer mu.Unlock()
	if _, err := branch.SetPin(path, p.EntryID, pinned); err != nil {
		return nil, err
	}
	s.afterWrite(path)
	return map[string]any{"entryId": p.EntryID, "pinned": pinned}, nil
}

// afterWrite refreshes the session and schedules its notifications.
func (s *Server) afterWrite(path string) {
	_ = s.host.withIndex(path, func(*session.Index) error { return nil })
	s.host.scheduleNotify(path)
}

// watchStale pushes pi/fileOps when files the agent read change on disk (the session
// file itself may not change at all meanwhile).
func (s *Server) watchStale(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		path, err := s.host.sessionFor("")
		if err != nil {
			continue
		}
		var ops map[string]any
		var key string
		var leafPath []*session.Entry
		var cwd, state string
		if s.host.withIndex(path, func(ix *session.Index) error {
			leafPath, cwd, state = ix.LeafPath(), ix.File.Header.Cwd, stateKey(ix)
			return nil
		}) == nil {
			// Outside the session's lock: stat and hash on disk, the path's records kept.
			stale := staleFiles(cwd, s.host.readRecords(path, state, leafPath))
			b, _ := json.Marshal(stale)
			key = string(b)
			read, mod := fileops.ForPath(leafPath)
			ops = map[string]any{"session": path, "readFiles": read, "modifiedFiles": mod, "stale": stale, "current": true}
		}
		if ops == nil {
			continue
		}
		s.drafts.mu.Lock()
		changed := s.drafts.lastStale[path] != key
		s.drafts.lastStale[path] = key
		s.drafts.mu.Unlock()
		if changed {
			s.notify("pi/fileOps", ops)
		}
	}
}
