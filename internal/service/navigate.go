package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// NavigateRequest moves the leaf of the session at Path to Target (Pi's navigateTree).
type NavigateRequest struct {
	Path, Target string
	// FromLeaf navigates from this entry ("" for Pi's leaf); a live pi navigates from
	// its own leaf: another one is refused, that one accepted.
	FromLeaf            string
	Summarize           bool
	Instructions        string
	ReplaceInstructions bool
	Label               string
	// Budget, when non-zero, replaces the token budget of the summarized messages
	// (negative: no limit).
	Budget int
	// Summary, with Summarize, is the user's previewed (maybe edited) summary, written as
	// given; ExpectLeaf refuses the navigation when the leaf is no longer this one (the
	// leaf the preview was made from). Only pi-lsp can honour them.
	Summary, ExpectLeaf string
	// Hook is asked before the branch is summarized (the client's pi/beforeTree).
	Hook   branch.Hook
	Force  bool
	DryRun bool
	// Asked names the request's own choices a live pi cannot honour (see CompactRequest).
	Asked []string
}

// NavigateOutcome is what a navigation did, whoever did it.
type NavigateOutcome struct {
	Via Via
	PID int
	// LeafID is the session's leaf afterwards ("" for the root).
	LeafID string
	// Cancelled: a hook (the client's, or an extension of the live pi) cancelled the
	// navigation; nothing was written.
	Cancelled bool
	// SummaryEntry is the branch_summary entry written (null without one).
	SummaryEntry session.Raw[session.BranchSummaryEntry]
	// Result is pi-lsp's navigation (nil through a live pi, or cancelled).
	Result *branch.NavigateResult
	// Pi is the live pi's answer.
	Pi *bridge.NavigateResult
}

// LeafMoved refuses a navigation whose previewed summary was made from another leaf.
type LeafMoved struct{ Expected, Leaf string }

func (e *LeafMoved) Error() string {
	return fmt.Sprintf("the session's leaf moved from %s to %s since the preview; preview again", e.Expected, e.Leaf)
}

// Unwrap makes it a concurrent change of the session.
func (e *LeafMoved) Unwrap() error { return compaction.ErrSessionChanged }

// Navigate moves a session's leaf, summarizing the branch left when asked, where
// RouteWrite sends the write (a dry run writes nothing and goes nowhere). The summary's
// model is that of the path navigated from, as Pi's navigateTree summarizes with the
// model the session has at its leaf; its budget is that model's window less Pi's
// branchSummary.reserveTokens.
func (c Config) Navigate(ctx context.Context, req NavigateRequest, rep Reporter) (NavigateOutcome, error) {
	if rep == nil {
		rep = NoReporter{}
	}
	if !req.DryRun {
		asked := req.Asked
		if req.Summary != "" {
			asked = append(asked, "summary")
		}
		if req.ExpectLeaf != "" {
			asked = append(asked, "expectLeafId")
		}
		r, done, err := c.begin(ctx, req.Path, req.Force, true)
		if err != nil {
			return NavigateOutcome{}, err
		}
		defer done()
		if r.Bridge != nil {
			return c.navigateViaPi(ctx, req, r.Bridge, asked, rep)
		}
	}
	// One snapshot, which refreshes while the summary is generated do not change; the
	// navigation writes only if the file is still the one it read.
	snap, err := c.sessions().Snapshot(req.Path)
	if err != nil {
		return NavigateOutcome{}, err
	}
	ix := snap.Index()
	if req.ExpectLeaf != "" && ix.LeafID() != req.ExpectLeaf {
		return NavigateOutcome{}, &LeafMoved{Expected: req.ExpectLeaf, Leaf: ix.LeafID()}
	}
	cwd := ix.File.Header.Cwd
	opt := branch.NavigateOptions{
		FromLeaf:            req.FromLeaf,
		Summarize:           req.Summarize,
		CustomInstructions:  req.Instructions,
		ReplaceInstructions: req.ReplaceInstructions,
		EditedSummary:       req.Summary,
		Label:               req.Label,
		Budget:              req.Budget,
		ReserveTokens:       c.BranchReserve(cwd),
		ContextWindow:       c.SummarizerConfig.Window(), // a dry run asks no model
		Hook:                req.Hook,
		DryRun:              req.DryRun,
	}
	if req.Summarize && !req.DryRun {
		sum, cfg, choice, err := c.Summarizer(cwd, ix.Path(leafOr(ix, req.FromLeaf)))
		if err != nil {
			return NavigateOutcome{}, err
		}
		if choice.Notice != "" {
			rep.Notice(choice.Notice)
		}
		opt.Summarizer, opt.ContextWindow = sum, cfg.Window()
		opt.Phase, opt.Progress = phaseReport(rep), summaryProgress(rep)
	}
	res, err := branch.Navigate(ctx, snap, req.Target, opt)
	if errors.Is(err, branch.ErrCancelled) && ctx.Err() == nil {
		// The client's hook cancelled: an answer, as Pi's navigateTree returns
		// {cancelled: true}.
		return NavigateOutcome{LeafID: ix.LeafID(), Cancelled: true}, nil
	}
	if err != nil {
		return NavigateOutcome{}, err
	}
	out := NavigateOutcome{LeafID: res.LeafID, Result: res}
	if res.SummaryEntry != nil {
		out.SummaryEntry = session.Raw[session.BranchSummaryEntry](res.SummaryEntry.Raw())
	}
	return out, nil
}

// navigateViaPi moves the live pi's leaf through its navigateTree.
func (c Config) navigateViaPi(ctx context.Context, req NavigateRequest, reg *bridge.Registration, asked []string, rep Reporter) (NavigateOutcome, error) {
	pi, err := dialPi(ctx, reg, req.FromLeaf, asked)
	if err != nil {
		return NavigateOutcome{}, err
	}
	defer pi.close()
	res, err := pi.conn.Navigate(ctx, bridge.NavigateRequest{TargetID: req.Target, Summarize: req.Summarize,
		CustomInstructions: req.Instructions, ReplaceInstructions: req.ReplaceInstructions, Label: req.Label},
		func(ev bridge.Event) {
			if ev.Type == "session_before_tree" {
				rep.Report("summarizing (pi's model)", 10)
			}
		})
	if err != nil {
		return NavigateOutcome{}, pi.fail(err)
	}
	if res.Cancelled && ctx.Err() != nil {
		// Pi's navigateTree answers {cancelled: true} when it was aborted.
		return NavigateOutcome{}, fmt.Errorf("%w: pi aborted the navigation", context.Canceled)
	}
	return NavigateOutcome{Via: ViaPi, PID: reg.PID, LeafID: res.LeafID, Cancelled: res.Cancelled, SummaryEntry: res.SummaryEntry, Pi: res}, nil
}
