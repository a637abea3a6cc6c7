package rpc

import (
	"context"

	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/service"
)

// clearToolOutputParams are pi/clearToolOutput's params.
type clearToolOutputParams struct {
	Session string `json:"session"`
	// KeepRecentTokens is the recent part of the context left alone (0: Pi's
	// keepRecentTokens, 20000).
	KeepRecentTokens int `json:"keepRecentTokens"`
	// MinTokens: only results larger than this many tokens are cleared (0: 200).
	MinTokens int `json:"minTokens"`
	// DryRun answers what would be cleared and the tokens saved, and writes nothing.
	DryRun bool `json:"dryRun"`
	// Restore brings back every tool result a clear replaced, instead of clearing.
	Restore bool `json:"restore"`
	Force   bool `json:"force"`
}

func (p *clearToolOutputParams) validate() error {
	if p.KeepRecentTokens < 0 || p.MinTokens < 0 {
		return invalidParams("keepRecentTokens and minTokens must not be negative")
	}
	if p.Restore && (p.DryRun || p.KeepRecentTokens != 0 || p.MinTokens != 0) {
		return invalidParams("restore takes no dryRun, keepRecentTokens or minTokens")
	}
	return nil
}

// ClearToolOutputResult is what pi/clearToolOutput cleared (or, with dryRun, would
// clear; with restore, brought back). Nothing to clear is an empty cleared list.
type ClearToolOutputResult struct {
	Session string  `json:"session"`
	LeafID  *string `json:"leafId"`
	// Cleared are the tool results, oldest first: tokens is each one's estimate before,
	// tokensAfter its placeholder's (restored: the other way round).
	Cleared []contextedit.Cleared `json:"cleared"`
	// Saved is the tokens the clear takes out of the context (restore: puts back, as a
	// negative number).
	Saved int `json:"saved"`
	// TokensBefore and TokensAfter are the projected context figure (after: estimated
	// for a dry run).
	TokensBefore float64 `json:"tokensBefore"`
	TokensAfter  float64 `json:"tokensAfter"`
	DryRun       bool    `json:"dryRun"`
	Restored     bool    `json:"restored"`
}

// handleClearToolOutput clears old tool output without a model: each tool result older
// than the recent window and larger than the minimum is replaced by a placeholder (one
// context_edit entry each, in one write; nothing is deleted). A dry run reads the
// server's index and writes nothing.
func (s *Server) handleClearToolOutput(ctx context.Context, p clearToolOutputParams) (ClearToolOutputResult, error) {
	req := service.ClearRequest{KeepRecentTokens: p.KeepRecentTokens, MinTokens: p.MinTokens, DryRun: p.DryRun, Restore: p.Restore, Force: p.Force}
	if p.DryRun {
		path, err := s.host.sessionFor(p.Session)
		if err != nil {
			return ClearToolOutputResult{}, err
		}
		req.Path = path
		out, err := s.svc().ClearToolOutput(ctx, req, jobReporter{s: s, path: path})
		if err != nil {
			return ClearToolOutputResult{}, serviceError(err)
		}
		return clearResult(path, out.ClearResult), nil
	}
	return write(s, ctx, writeJob[ClearToolOutputResult]{target: target{session: p.Session, force: p.Force}, service: true}, func(ctx context.Context, path string, _ *WorkDone) (ClearToolOutputResult, error) {
		req.Path = path
		out, err := s.svc().ClearToolOutput(ctx, req, jobReporter{s: s, path: path})
		if err != nil {
			return ClearToolOutputResult{}, editError(err)
		}
		if out.Nothing {
			return unwrittenClear(path, out.ClearResult, p.Restore)
		}
		s.resetLoop(path)
		r := clearResult(path, out.ClearResult)
		r.Restored = p.Restore
		return r, nil
	})
}

// unwrittenClear is the answer of a clear (or restore) with nothing to do: nothing was
// written, so nothing is refreshed or notified.
func unwrittenClear(path string, res *contextedit.ClearResult, restore bool) (ClearToolOutputResult, error) {
	out := clearResult(path, res)
	out.Restored = restore
	return out, unwritten[ClearToolOutputResult]{answer: out}
}

func clearResult(path string, r *contextedit.ClearResult) ClearToolOutputResult {
	return ClearToolOutputResult{Session: path, LeafID: nullable(r.LeafID), Cleared: r.Cleared, Saved: r.Saved,
		TokensBefore: r.TokensBefore, TokensAfter: r.TokensAfter, DryRun: r.DryRun}
}

// ToolOutputCleared is sent when the first tier of automatic compaction (the
// clearToolOutput setting) cleared old tool output of a hosted session.
type ToolOutputCleared struct {
	ClearToolOutputResult
	// Reason is what asked for a compaction: "threshold".
	Reason string `json:"reason" ts:"\"threshold\""`
	// Compacting: the context is still above the threshold, and a compaction follows.
	Compacting bool `json:"compacting"`
}
