package service

import (
	"context"
	"errors"

	"github.com/pi-lsp/pi-lsp/internal/contextedit"
)

// EditContextRequest hides, replaces or restores one message of the context.
type EditContextRequest struct {
	Path  string
	Edit  contextedit.Edit
	Force bool
}

// EditContext applies one context edit (a live pi's bridge cannot: refused while a
// running pi holds the session, unless forced).
func (c Config) EditContext(ctx context.Context, req EditContextRequest, _ Reporter) (*contextedit.Result, error) {
	_, done, err := c.begin(ctx, req.Path, req.Force, false)
	if err != nil {
		return nil, err
	}
	defer done()
	return contextedit.Apply(ctx, req.Path, req.Edit)
}

// ClearRequest clears old tool output without a model (or, with Restore, brings every
// cleared result back).
type ClearRequest struct {
	Path string
	// KeepRecentTokens (0: Pi's compaction.keepRecentTokens for the path's model) and
	// MinTokens (0: the default) bound what is cleared.
	KeepRecentTokens, MinTokens int
	DryRun, Restore, Force      bool
}

// ClearOutcome is what a clear did (or, dry, would do). Nothing: there was nothing to
// clear or restore, and nothing was written.
type ClearOutcome struct {
	*contextedit.ClearResult
	Nothing bool
}

// ClearToolOutput clears (or restores) old tool output: one context_edit entry per
// result, in one write; a dry run reads the session once and writes nothing.
func (c Config) ClearToolOutput(ctx context.Context, req ClearRequest, _ Reporter) (ClearOutcome, error) {
	opt := contextedit.ClearOptions{KeepRecentTokens: req.KeepRecentTokens, MinTokens: req.MinTokens, Settings: c.SettingsOfPath}
	if req.DryRun {
		snap, err := c.sessions().Snapshot(req.Path)
		if err != nil {
			return ClearOutcome{}, err
		}
		res, err := contextedit.PreviewClear(snap.Index(), opt)
		if err != nil {
			return ClearOutcome{}, err
		}
		return ClearOutcome{ClearResult: res, Nothing: len(res.Cleared) == 0}, nil
	}
	_, done, err := c.begin(ctx, req.Path, req.Force, false)
	if err != nil {
		return ClearOutcome{}, err
	}
	defer done()
	if req.Restore {
		return clearOutcome(contextedit.RestoreCleared(ctx, req.Path))
	}
	return clearOutcome(contextedit.ClearToolOutput(ctx, req.Path, opt))
}

func clearOutcome(res *contextedit.ClearResult, err error) (ClearOutcome, error) {
	if errors.Is(err, contextedit.ErrNothingToClear) {
		return ClearOutcome{ClearResult: res, Nothing: true}, nil
	}
	return ClearOutcome{ClearResult: res}, err
}
