package rpc

// The marks a user puts on entries: pins and labels. Both are appended entries that
// change no context, written through the write funnel (write.go).

import (
	"context"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/bridge"
)

// handlePin pins (or, with pinned: false, unpins) an entry.
func (s *Server) handlePin(ctx context.Context, p pinParams) (any, error) {
	pinned := p.Pinned == nil || *p.Pinned
	return s.write(ctx, p.job(), func(_ context.Context, path string, _ *WorkDone) (any, error) {
		if _, err := branch.SetPin(path, p.EntryID, pinned); err != nil {
			return nil, err
		}
		return PinResult{EntryID: p.EntryID, Pinned: pinned}, nil
	})
}

// handleLabel sets, or with an empty label clears, the label of an entry (through
// pi.setLabel when a live pi with pi-lsp's bridge holds the session).
func (s *Server) handleLabel(ctx context.Context, p labelParams) (any, error) {
	label := ""
	if p.Label != nil {
		label = *p.Label
	}
	viaPi := func(ctx context.Context, path string, reg *bridge.Registration, _ *WorkDone) (any, error) {
		return s.labelViaPi(ctx, path, reg, p.EntryID, label)
	}
	job := p.job()
	job.viaPi = viaPi
	return s.write(ctx, job, func(_ context.Context, path string, _ *WorkDone) (any, error) {
		if _, err := branch.SetLabel(path, p.EntryID, label); err != nil {
			return nil, err
		}
		return LabelResult{EntryID: p.EntryID, Label: label}, nil
	})
}
