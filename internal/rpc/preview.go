package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// handlePreviewCompaction answers what a compaction would do now, with its summary (the
// draft when one matches, otherwise freshly generated and kept as the draft), without
// writing anything.
func (s *Server) handlePreviewCompaction(ctx context.Context, p previewCompactionParams) (PreviewCompactionResult, error) {
	path, summarizer, settings, err := s.previewed(p.Session)
	if err != nil {
		return nil, err
	}
	var prep *compaction.Preparation
	var pinned []string
	if _, err := s.withSession(path, func(_ string, ix *session.Index) error {
		leafPath, proj := ix.ProjectedPath(ix.LeafID())
		pp, err := compaction.PrepareProjected(leafPath, proj, settings)
		prep, pinned = pp, ix.PinnedTexts(leafPath)
		return err
	}); err != nil {
		if errors.Is(err, compaction.ErrAlreadyCompacted) || errors.Is(err, compaction.ErrEmptyPath) {
			return nothingToCompact(err.Error()), nil
		}
		return nil, err
	}
	if prep.NothingToSummarize() {
		return nothingToCompact(compaction.ErrNothingToCompact.Error()), nil
	}
	opt := compaction.Options{CustomInstructions: p.Instructions, Pinned: pinned}
	out := s.drafts.store.Lookup(path, prep, p.Instructions, pinned)
	fromDraft := out != nil
	if out == nil {
		if err := s.previewJob(ctx, p.WorkDoneToken, "Previewing compaction", func(ctx context.Context, wd *WorkDone) error {
			opt.Progress = wd.reportSummary
			d, err := s.drafts.store.Refresh(ctx, path, prep, summarizer, opt)
			if err == nil {
				o := *d.Outcome
				out = &o
			}
			return err
		}); err != nil {
			return nil, err
		}
	}
	coverage, err := compaction.CheckCoverage(ctx, prep, out.Summary)
	if err != nil {
		return nil, err
	}
	return CompactionPreview{
		Session: path, SpanKey: compaction.SpanKey(prep, p.Instructions, pinned),
		FirstKeptEntryID: prep.FirstKeptEntryID, IsSplitTurn: prep.IsSplitTurn,
		MessagesToSummarize: len(prep.MessagesToSummarize) + len(prep.TurnPrefixMessages),
		KeptMessages:        len(prep.KeptMessages()), TokensBefore: prep.TokensBefore, TokensAfter: out.TokensAfter,
		Summary: out.Summary, Audit: out.Audit, FromDraft: fromDraft, Pinned: pinned,
		Coverage: coverage,
	}, nil
}

// handleCommitCompaction writes a previewed (and possibly edited) summary as the
// compaction, provided the session still has the previewed span.
func (s *Server) handleCommitCompaction(ctx context.Context, p commitCompactionParams) (Compacted, error) {
	job := writeJob[Compacted]{target: target{session: p.Session, force: p.Force}, service: true}
	return write(s, ctx, job, func(ctx context.Context, path string, _ *WorkDone) (Compacted, error) {
		out, err := s.compact(ctx, path, compactJob{reason: "manual", instructions: p.Instructions, editedSummary: p.Summary,
			spanKey: p.SpanKey, acceptDroppedPins: p.AcceptDroppedPins, force: p.Force})
		if err != nil {
			return Compacted{}, err
		}
		if out.Nothing != nil {
			return Compacted{}, out.Nothing // a previewed summary has nothing to commit to
		}
		return compacted(out), nil
	})
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

// handlePreviewBranchSummary generates the summary of the branch a navigation to
// targetId would leave, without writing; pi/navigate with `summary` commits it.
func (s *Server) handlePreviewBranchSummary(ctx context.Context, p previewBranchSummaryParams) (BranchSummaryPreview, error) {
	path, summarizer, _, err := s.previewed(p.Session)
	if err != nil {
		return BranchSummaryPreview{}, err
	}
	var col branch.Collected
	var leaf, level string
	if _, err := s.withSession(path, func(_ string, ix *session.Index) error {
		if ix.Entry(p.TargetID) == nil {
			return &Error{Code: CodeRequestFailed, Kind: KindNotFound, Msg: fmt.Sprintf("entry %s not found", p.TargetID)}
		}
		leaf = ix.LeafID()
		level = session.ContextOfPath(ix.Path(leaf)).Level()
		col = branch.Collect(ix, leaf, p.TargetID)
		return nil
	}); err != nil {
		return BranchSummaryPreview{}, err
	}
	var sum *branch.Summary
	if err := s.previewJob(ctx, p.WorkDoneToken, "Previewing branch summary", func(ctx context.Context, _ *WorkDone) error {
		var err error
		sum, err = branch.Generate(ctx, col.Entries, summarizer, branch.SummaryOptions{
			CustomInstructions: p.Instructions, ReserveTokens: s.branchReserve(path), ContextWindow: s.host.window(),
			ThinkingLevel: level,
		})
		return err
	}); err != nil {
		return BranchSummaryPreview{}, err
	}
	return BranchSummaryPreview{Session: path, TargetID: p.TargetID, LeafID: nullable(leaf), CommonAncestorID: nullable(col.CommonAncestorID),
		Entries: len(col.Entries), Summary: sum.Text}, nil
}

// previewed resolves the session of a preview and builds its summarizer.
func (s *Server) previewed(param string) (string, compaction.Summarizer, session.CompactionSettings, error) {
	path, err := s.host.sessionFor(param)
	if err != nil {
		return "", nil, session.CompactionSettings{}, err
	}
	summarizer, settings, err := s.summarizerFor(path)
	return path, summarizer, settings, err
}

// previewJob runs the summary of a preview as a user's job (background drafts yield to
// it) with its progress, which the client may cancel.
func (s *Server) previewJob(ctx context.Context, token json.RawMessage, title string, summarize func(ctx context.Context, wd *WorkDone) error) error {
	done := s.drafts.userJob()
	defer done()
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wd := s.tracker.Start(ctx, token, title, "summarizing", cancel)
	if err := summarize(jctx, wd); err != nil {
		wd.End("Failed: " + err.Error())
		return err
	}
	wd.End("Summary ready")
	return nil
}
