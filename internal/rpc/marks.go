package rpc

// The marks a user puts on entries: pins and labels. Both are appended entries that
// change no context, written through the write funnel (write.go).

import (
	"context"

	"github.com/pi-lsp/pi-lsp/internal/service"
)

// handlePin pins (or, with pinned: false, unpins) an entry.
func (s *Server) handlePin(ctx context.Context, p pinParams) (PinResult, error) {
	pinned := p.Pinned == nil || *p.Pinned
	return write(s, ctx, writeJob[PinResult]{target: p.target(), service: true}, func(ctx context.Context, path string, _ *WorkDone) (PinResult, error) {
		if _, err := s.svc().Pin(ctx, service.PinRequest{Path: path, Entry: p.EntryID, Pinned: pinned, Force: p.Force}, jobReporter{s: s, path: path}); err != nil {
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
	return write(s, ctx, writeJob[LabelResult]{target: p.target(), service: true}, func(ctx context.Context, path string, _ *WorkDone) (LabelResult, error) {
		out, err := s.svc().Label(ctx, service.LabelRequest{Path: path, Entry: p.EntryID, Label: label, Force: p.Force}, jobReporter{s: s, path: path})
		if err != nil {
			return LabelResult{}, err
		}
		return LabelResult{EntryID: p.EntryID, Label: label, Via: string(out.Via), PID: out.PID}, nil
	})
}
