package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// ErrCondenseUsage: a request the job cannot take as asked (errors.Is).
var ErrCondenseUsage = errors.New("invalid condense request")

// CondenseRequest condenses a range of a session's context, or restores one.
type CondenseRequest struct {
	Session      string
	FromID, ToID string
	Instructions string
	// DryRun summarizes and reports, and writes nothing.
	DryRun bool
	// Restore puts back every message of the condensed range starting at FromID.
	Restore bool
	// Force writes even though a running pi holds the session.
	Force bool
}

// CondenseOutcome is what a condense did, or would do.
type CondenseOutcome struct {
	Plan *contextedit.CondensePlan
	// Text is what the range's first message holds afterwards (the summary).
	Text string
	// Written are the context_edit entries appended (none on a dry run).
	Written []*session.Entry
	// TokensBefore and TokensAfter are the projected context figure before and after
	// (after: estimated on a dry run).
	TokensBefore, TokensAfter float64
	Summarizer                string
	// Coverage is what the summary carries of the range's critical entities (files,
	// commands, errors, ids, the latest request), as a compaction preview reports it.
	Coverage compaction.Coverage
}

// Condense replaces the context messages from req.FromID to req.ToID by a summary (the
// first one's content) and hides the others, as context_edit entries written in one
// write; or with Restore puts them back. The history is untouched; a failed or
// cancelled condense writes nothing.
func (c Config) Condense(ctx context.Context, req CondenseRequest, rep Reporter) (CondenseOutcome, error) {
	if rep == nil {
		rep = NoReporter{}
	}
	var out CondenseOutcome
	f, err := session.Load(req.Session)
	if err != nil {
		return out, err
	}
	cwd := f.Header.Cwd
	branch := session.NewIndex(f).LeafPath()
	out.TokensBefore = session.ProjectedContextTokens(branch).Tokens
	if !req.DryRun {
		if _, err := c.RouteWrite(ctx, req.Session, cwd, req.Force, false); err != nil {
			return out, err
		}
	}
	if req.Restore {
		if req.DryRun {
			return out, fmt.Errorf("%w: a restore has no dry run", ErrCondenseUsage)
		}
		written, err := contextedit.RestoreCondensed(ctx, req.Session, req.FromID)
		if err != nil {
			return out, err
		}
		out.Written = written
		out.TokensAfter = tokensOf(req.Session)
		return out, nil
	}
	if req.ToID == "" {
		return out, fmt.Errorf("%w: the range needs its last entry", ErrCondenseUsage)
	}
	rep.Report("checking the range", -1)
	p, err := contextedit.PlanCondense(req.Session, req.FromID, req.ToID)
	if err != nil {
		return out, err
	}
	out.Plan = p
	s, _, choice, err := c.Summarizer(cwd, branch)
	if err != nil {
		return out, err
	}
	if choice.Notice != "" {
		rep.Notice(choice.Notice)
	}
	out.Summarizer = s.Name()
	rep.Report(fmt.Sprintf("summarizing %d messages", len(p.Targets)), -1)
	text, err := contextedit.SummarizeRange(ctx, p, s, contextedit.CondenseOptions{
		CustomInstructions: req.Instructions,
		Progress:           func(pr compaction.Progress) { rep.Report(pr.Message(), -1) },
	})
	if err != nil {
		return out, err
	}
	out.Text = text
	ops := fileops.New()
	ops.AddMessages(p.Messages)
	if out.Coverage, err = compaction.CheckCoverage(ctx, &compaction.Preparation{MessagesToSummarize: p.Messages, Projected: p.Units, FileOps: ops}, text); err != nil {
		return out, err
	}
	if req.DryRun {
		out.TokensAfter = out.TokensBefore - p.TokensRange + float64(session.EstimateTokens(session.NewBlocksMessage(session.RoleUser, []session.Block{{Type: "text", Text: text}})))
		return out, nil
	}
	rep.Report("writing", -1)
	written, err := contextedit.Condense(ctx, req.Session, p, text)
	if err != nil {
		return out, err
	}
	out.Written = written
	out.TokensAfter = tokensOf(req.Session)
	return out, nil
}

// tokensOf is the projected context figure of the session at path now (0 when it
// cannot be read).
func tokensOf(path string) float64 {
	f, err := session.Load(path)
	if err != nil {
		return 0
	}
	return session.ProjectedContextTokens(session.NewIndex(f).LeafPath()).Tokens
}
