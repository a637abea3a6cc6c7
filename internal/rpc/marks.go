package rpc

// The marks a user puts on entries: pins and labels. Both are appended entries that
// change no context, written through the write funnel (write.go).

import (
	"context"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/bridge"
)

// handlePin pins (or, with pinned: false, unpins) an entry.
func (s *Server) handlePin(ctx context.Context, p pinParams) (PinResult, error) {
	pinned := p.Pinned == nil || *p.Pinned
	return write(s, ctx, writeJob[PinResult]{target: p.target()}, func(_ context.Context, path string, _ *WorkDone) (PinResult, error) {
		if _, err := branch.SetPin(path, p.EntryID, pinned); err != nil {
			return PinResult{}, err
		}
		return PinResult{EntryID: p.EntryID, Pinned: pinned}, nil
	})
}

// handleLabel sets, or with an empty label clears, the label of an entry (through
// pi.setLabel when a live pi with pi-lsp's bridge holds the session).
func (s *Server) handleLabel(ctx context.Context, p labelParams) (LabelResult, error) {
	label := ""
	if p.Label != nil {
		label = *p.Label
	}
	viaPi := func(ctx context.Context, path string, reg *bridge.Registration, _ *WorkDone) (LabelResult, error) {
		return s.labelViaPi(ctx, path, reg, p.EntryID, label)
	}
	return write(s, ctx, writeJob[LabelResult]{target: p.target(), viaPi: viaPi}, func(_ context.Context, path string, _ *WorkDone) (LabelResult, error) {
		if _, err := branch.SetLabel(path, p.EntryID, label); err != nil {
			return LabelResult{}, err
		}
		return LabelResult{EntryID: p.EntryID, Label: label}, nil
	})
}
