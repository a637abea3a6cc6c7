package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

type compactParams struct {
	Session      string `json:"session"`
	Instructions string `json:"instructions"`
	// LeafID compacts the path to this entry instead of the leaf's.
	LeafID string `json:"leafId"`
	// KeepFrom keeps the context verbatim from this entry on ("summarize up to here"),
	// in place of Pi's keepRecentTokens cut; refused where Pi could not cut, with the
	// nearest valid cuts named.
	KeepFrom      string          `json:"keepFrom"`
	Force         bool            `json:"force"`
	WorkDoneToken json.RawMessage `json:"workDoneToken" ts:"ProgressToken"`
}

func (s *Server) handleCompact(ctx context.Context, p compactParams) (CompactResult, error) {
	viaPi := func(ctx context.Context, path string, reg *bridge.Registration, wd *WorkDone) (CompactResult, error) {
		if p.KeepFrom != "" {
			err := invalidParams(fmt.Sprintf("a live pi (pid %d) holds this session: it compacts where its settings cut, not from %s", reg.PID, p.KeepFrom))
			wd.End("Not compacted: " + err.Error())
			return nil, err
		}
		if p.LeafID != "" {
			var leaf string
			_ = s.host.withIndex(path, func(ix *session.Index) error { leaf = ix.LeafID(); return nil })
			if p.LeafID != leaf {
				err := invalidParams(fmt.Sprintf("a live pi (pid %d) holds this session: it compacts at its own leaf %s, not %s", reg.PID, leaf, p.LeafID))
				wd.End("Not compacted: " + err.Error())
				return nil, err
			}
		}
		return s.compactViaPi(ctx, path, reg, p.Instructions, wd)
	}
	// Progress begins before anything else, so the editor shows the job at once.
	job := writeJob[CompactResult]{target: target{session: p.Session, force: p.Force}, viaPi: viaPi, lock: lockInJob,
		progress: jobProgress{token: p.WorkDoneToken, title: "Compacting session", message: "manual", early: true, refused: "Not compacted: "}}
	res, err := write(s, ctx, job, func(ctx context.Context, path string, wd *WorkDone) (CompactResult, error) {
		c, err := s.compact(ctx, path, compactJob{reason: "manual", instructions: p.Instructions, leaf: p.LeafID, keepFrom: p.KeepFrom, token: p.WorkDoneToken, wd: wd})
		if err != nil {
			return nil, err
		}
		s.resetLoop(path)
		return *c, nil
	})
	if compaction.NothingToDo(err) {
		return nothingToCompact(err.Error()), nil
	}
	return res, err
}

type compactJob struct {
	reason       string // manual, threshold, overflow
	instructions string
	leaf         string
	keepFrom     string
	token        json.RawMessage
	willRetry    bool
	// editedSummary, with spanKey, commits a previewed (possibly edited) summary.
	editedSummary     string
	spanKey           string
	acceptDroppedPins bool
	// wd, when set, is the progress the caller already began.
	wd *WorkDone
}

// compact runs one compaction with progress and Pi's start/end events; the caller
// refreshes the session after it (the write funnel, or autoStart).
func (s *Server) compact(ctx context.Context, path string, job compactJob) (*Compacted, error) {
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wd := job.wd
	if wd == nil {
		wd = s.tracker.Start(ctx, job.token, "Compacting session", job.reason, cancel)
	}
	defer wd.End("Failed") // a safety net: End is idempotent, and every path below ends it
	s.notify("pi/compactionStart", CompactionStart{Session: path, Reason: job.reason})
	res, err := s.compactLocked(jctx, path, job, wd)
	end := CompactionEnd{Session: path, Reason: job.reason}
	if err != nil {
		aborted := errors.Is(err, context.Canceled) || errors.Is(err, compaction.ErrCancelled) || jctx.Err() != nil
		end.Aborted = aborted
		quiet := compaction.NothingToDo(err)
		if !aborted && !(quiet && job.reason != "manual") {
			prefix := map[string]string{"manual": "Compaction failed: ", "threshold": "Auto-compaction failed: ", "overflow": "Context overflow recovery failed: "}[job.reason]
			end.ErrorMessage = prefix + err.Error()
		}
		s.notify("pi/compactionEnd", end)
		if !(quiet && job.reason != "manual") {
			// Pi's session_compact_failed: every failed or cancelled compaction.
			s.notify("pi/compactionFailed", CompactionFailed{Session: path, Reason: job.reason, Aborted: aborted, ErrorMessage: end.ErrorMessage})
		}
		return nil, endFailed(wd, err, aborted, "Cancelled; nothing was written", "Not compacted: ")
	}
	o := res.Outcome
	firstKept := o.FirstKeptEntryID
	if o.RetainNone {
		firstKept = res.Entry.ID
	}
	result, err := json.Marshal(CompactionEndResult{Summary: o.Summary, FirstKeptEntryID: firstKept, TokensBefore: o.TokensBefore,
		EstimatedTokensAfter: o.TokensAfter, Details: o.Details, Usage: o.Usage})
	if err != nil {
		return nil, err
	}
	end.Result = session.Raw[CompactionEndResult](result)
	end.WillRetry = job.willRetry
	s.notify("pi/compactionEnd", end)
	wd.End(fmt.Sprintf("Compacted: %d → ~%d tokens", int(o.TokensBefore), int(o.TokensAfter)))
	return &Compacted{Entry: session.Raw[session.CompactionEntry](res.Entry.Raw()), TokensBefore: o.TokensBefore, TokensAfter: o.TokensAfter, Audit: o.Audit}, nil
}

// autoPreparable reports why an automatic compaction of the session at leaf ("" for
// the leaf) has nothing to do, or nil when Pi's prepareCompaction would prepare one.
func (s *Server) autoPreparable(path, leaf string) error {
	settings, err := s.settingsFor(path)
	if err != nil {
		return err
	}
	_, err = s.withSession(path, func(_ string, ix *session.Index) error {
		from := leaf
		if from == "" {
			from = ix.LeafID()
		}
		leafPath, proj := ix.ProjectedPath(from)
		p, err := compaction.PrepareProjected(leafPath, proj, settings)
		if err == nil && p.NothingToSummarize() {
			err = compaction.ErrNothingToCompact
		}
		return err
	})
	return err
}

func (s *Server) compactLocked(ctx context.Context, path string, job compactJob, wd *WorkDone) (*compaction.RunResult, error) {
	mu := s.jobLock(path)
	if err := lockCtx(ctx, mu); err != nil {
		return nil, err
	}
	defer mu.Unlock()
	summarizer, _, err := s.summarizerFor(path)
	if err != nil {
		return nil, err
	}
	settingsFor := s.svc().SettingsFor(s.host.cwdOf(path))
	// The job computes on a snapshot of the session: refreshes of the followed index
	// while it runs (the model call can take minutes) do not change what it sees, and it
	// writes only if the file is still the one the snapshot read.
	snap, err := s.host.snapshot(path)
	if err != nil {
		return nil, err
	}
	ix := snap.Index()
	leaf := job.leaf
	if leaf == "" {
		leaf = ix.LeafID()
	}
	pinned := ix.PinnedTexts(ix.Path(leaf))
	done := s.drafts.userJob()
	defer done()
	opt := compaction.RunOptions{
		Options: compaction.Options{
			CustomInstructions: job.instructions,
			Pinned:             pinned,
			AllowDroppedPins:   job.acceptDroppedPins,
			Progress:           wd.reportSummary,
		},
		LeafID:   job.leaf,
		KeepFrom: job.keepFrom,
		// The settings of the path compacted: with a leafId, that leaf's model overrides.
		SettingsFor: func(provider, model string) (session.CompactionSettings, error) {
			st, err := settingsFor(provider, model)
			return st, serviceError(err)
		},
		Summarizer: summarizer,
		Hook:       s.compactHook(path, job.reason, job.instructions, job.willRetry),
		Phase:      wd.reportPhase,
	}
	if job.editedSummary != "" {
		// A previewed summary: committed only for the span it was previewed on.
		opt.Hook = nil
		opt.Reuse = func(ctx context.Context, p *compaction.Preparation) (*compaction.Outcome, error) {
			if compaction.SpanKey(p, job.instructions, pinned) != job.spanKey {
				return nil, &Error{Code: CodeContentModified, Kind: KindSessionChanged, Msg: "the session changed since the preview; preview again"}
			}
			return editedOutcome(job.editedSummary, p, pinned, s.drafts.store.Lookup(path, p, job.instructions, pinned)), nil
		}
	} else {
		opt.Reuse = s.drafts.store.ReuseFrom(path, summarizer, opt.Options)
	}
	res, err := compaction.Run(ctx, snap, opt)
	if err == nil {
		s.drafts.store.Drop(path) // a draft of a compacted span is stale
	}
	return res, err
}

// summarizerFor builds the summarizer of a job on a session (the session service's rules,
// the CLI's too: with nothing configured, the session's current model when its credential
// resolves) and the compaction settings at its current leaf. When a wanted model cannot
// be used, the client is told once, in one line, why and what fixes it.
func (s *Server) summarizerFor(path string) (compaction.Summarizer, session.CompactionSettings, error) {
	c := s.svc()
	var settings session.CompactionSettings
	var serr error
	var leafPath []*session.Entry
	if _, err := s.withSession(path, func(_ string, ix *session.Index) error {
		settings, serr = c.SettingsAt(ix, "")
		leafPath = ix.Path(ix.LeafID())
		return nil
	}); err != nil {
		return nil, session.CompactionSettings{}, err
	}
	if serr != nil {
		return nil, settings, serviceError(serr)
	}
	sum, _, choice, err := c.Summarizer(s.host.cwdOf(path), leafPath)
	if err != nil {
		return nil, settings, serviceError(err)
	}
	s.noteChoice(path, choice)
	return sum, settings, nil
}

// settingsFor are the compaction settings of a session at its current leaf, without a
// summarizer (no credential is resolved).
func (s *Server) settingsFor(path string) (session.CompactionSettings, error) {
	c := s.svc()
	var settings session.CompactionSettings
	var serr error
	if _, err := s.withSession(path, func(_ string, ix *session.Index) error {
		settings, serr = c.SettingsAt(ix, "")
		return nil
	}); err != nil {
		return session.CompactionSettings{}, err
	}
	return settings, serviceError(serr)
}

// noteChoice shows the client, once per session and reason, the line saying that the
// wanted model could not be used and the extractive summary is used instead.
func (s *Server) noteChoice(path string, choice service.SummarizerChoice) {
	n := choice.Notice
	s.host.mu.Lock()
	st := s.host.stateLocked(path)
	shown := st.notice == n
	st.notice = n
	s.host.mu.Unlock()
	if n != "" && !shown {
		s.notify("window/showMessage", showMessageParams{Type: msgWarning, Message: "pi-lsp: " + n})
	}
}

// resetLoop lets automatic compaction run again after the user changed the context.
func (s *Server) resetLoop(path string) {
	st := s.host.state(path)
	s.host.mu.Lock()
	st.loop.Reset()
	s.host.mu.Unlock()
}
