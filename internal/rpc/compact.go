package rpc

import (
	"context"
	"encoding/json"
	"fmt"

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
	// Progress begins before anything else, so the editor shows the job at once.
	job := writeJob[CompactResult]{target: target{session: p.Session, force: p.Force}, service: true,
		progress: jobProgress{token: p.WorkDoneToken, title: "Compacting session", message: "manual", early: true, refused: "Not compacted: "}}
	return write(s, ctx, job, func(ctx context.Context, path string, wd *WorkDone) (CompactResult, error) {
		out, err := s.compact(ctx, path, compactJob{reason: "manual", instructions: p.Instructions, leaf: p.LeafID, keepFrom: p.KeepFrom, force: p.Force, token: p.WorkDoneToken, wd: wd})
		switch {
		case err != nil:
			return nil, err
		case out.NothingToCompact != "":
			return nil, unwritten[CompactResult]{NothingToCompact{NothingToCompact: true, Reason: out.NothingToCompact, Via: string(out.Via)}}
		case out.Via == service.ViaPi:
			c := compactedViaPi(out)
			c.TokensAfter = s.tokensNow(path)
			return c, nil
		}
		s.resetLoop(path)
		return compacted(out), nil
	})
}

type compactJob struct {
	reason       string // manual, threshold, overflow
	instructions string
	leaf         string
	keepFrom     string
	force        bool
	token        json.RawMessage
	willRetry    bool
	// editedSummary, with spanKey, commits a previewed (possibly edited) summary.
	editedSummary     string
	spanKey           string
	acceptDroppedPins bool
	// wd, when set, is the progress the caller already began.
	wd *WorkDone
}

// compact runs one compaction (the session service's job: where it goes, the
// summarizer, the run) with its progress, the client's hook, the server's drafts and
// Pi's start/end events; the write funnel refreshes the session after it.
func (s *Server) compact(ctx context.Context, path string, job compactJob) (service.CompactOutcome, error) {
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wd := job.wd
	if wd == nil {
		wd = s.tracker.Start(ctx, job.token, "Compacting session", job.reason, cancel)
	}
	defer wd.End("Failed") // a safety net: End is idempotent, and every path below ends it
	req := service.CompactRequest{Path: path, Leaf: job.leaf, KeepFrom: job.keepFrom, Instructions: job.instructions, Reason: job.reason,
		WillRetry: job.willRetry, Force: job.force, AllowDroppedPins: job.acceptDroppedPins,
		Hook: s.compactHook(path, job.reason, job.instructions, job.willRetry)}
	if job.editedSummary != "" {
		// A previewed summary: committed only for the span it was previewed on.
		req.Previewed, req.Hook = true, nil
		req.Reuse = func(_ compaction.Summarizer, o compaction.Options) func(context.Context, *compaction.Preparation) (*compaction.Outcome, error) {
			return func(ctx context.Context, p *compaction.Preparation) (*compaction.Outcome, error) {
				if compaction.SpanKey(p, job.instructions, o.Pinned) != job.spanKey {
					return nil, &Error{Code: CodeContentModified, Kind: KindSessionChanged, Msg: "the session changed since the preview; preview again"}
				}
				return editedOutcome(job.editedSummary, p, o.Pinned, s.drafts.store.Lookup(path, p, job.instructions, o.Pinned)), nil
			}
		}
	} else {
		req.Reuse = func(sum compaction.Summarizer, o compaction.Options) func(context.Context, *compaction.Preparation) (*compaction.Outcome, error) {
			return s.drafts.store.ReuseFrom(path, sum, o)
		}
	}
	done := s.drafts.userJob()
	defer done()
	out, err := s.svc().Compact(jctx, req, jobReporter{s: s, path: path, reason: job.reason, wd: wd})
	if err != nil {
		return out, s.jobFailed(jctx, path, wd, err, "Not compacted: ", "Cancelled; pi wrote nothing")
	}
	switch {
	case out.Via == service.ViaPi:
		s.afterWrite(path)
		msg := "Compacted by pi"
		if out.Result != nil {
			msg = fmt.Sprintf("Compacted by pi (%d tokens before)", int(out.Result.TokensBefore))
			if tokens := s.tokensNow(path); tokens != nil {
				msg = fmt.Sprintf("Compacted by pi: %d → ~%v tokens", int(out.Result.TokensBefore), tokens)
			}
		}
		wd.End(msg)
	case out.NothingToCompact != "":
		wd.End("Not compacted: " + out.NothingToCompact)
	default:
		s.drafts.store.Drop(path) // a draft of a compacted span is stale
		o := out.Run.Outcome
		wd.End(fmt.Sprintf("Compacted: %d → ~%d tokens", int(o.TokensBefore), int(o.TokensAfter)))
	}
	return out, nil
}

// tokensNow is the session's context figure, nil while Pi's estimate is unknown (after
// a live pi's compaction, until its next answer).
func (s *Server) tokensNow(path string) *float64 {
	var tokens *float64
	_ = s.host.withIndex(path, func(ix *session.Index) error {
		tokens, _, _ = s.host.usage(ix.LeafPath())
		return nil
	})
	return tokens
}

// compacted is the answer of a compaction pi-lsp wrote.
func compacted(out service.CompactOutcome) Compacted {
	o := out.Run.Outcome
	return Compacted{Entry: out.Entry, TokensBefore: o.TokensBefore, TokensAfter: o.TokensAfter, Audit: o.Audit}
}

// compactedViaPi is the answer of a compaction the live pi wrote.
func compactedViaPi(out service.CompactOutcome) CompactedViaPi {
	r := CompactedViaPi{Entry: out.Entry, Via: string(out.Via), PID: out.PID}
	if out.Result != nil {
		r.TokensBefore = out.Result.TokensBefore
	}
	return r
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
	if choice.Notice != "" {
		jobReporter{s: s, path: path}.Notice(choice.Notice)
	}
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

// resetLoop lets automatic compaction run again after the user changed the context.
func (s *Server) resetLoop(path string) {
	st := s.host.state(path)
	s.host.mu.Lock()
	st.loop.Reset()
	s.host.mu.Unlock()
}
