package rpc

import (
	"context"

	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// handleContextBreakdown is the context of the session's leaf at a glance, computed on
// the server's index (the path is read under the session's lock, the breakdown after).
func (s *Server) handleContextBreakdown(ctx context.Context, p contextBreakdownParams) (ContextBreakdownResult, error) {
	var leafPath []*session.Entry
	var cwd string
	path, err := s.withSession(p.Session, func(_ string, ix *session.Index) error {
		leafPath, cwd = ix.LeafPath(), ix.File.Header.Cwd
		return nil
	})
	if err != nil {
		return ContextBreakdownResult{}, err
	}
	b, err := s.svc().ContextBreakdown(ctx, service.BreakdownRequest{Cwd: cwd, Path: leafPath, History: p.History}, logReporter{s})
	if err != nil {
		return ContextBreakdownResult{}, err
	}
	out := ContextBreakdownResult{Session: path, LeafID: nullable(b.LeafID), Total: b.Total, UsageTokens: b.UsageTokens,
		ContextWindow: b.ContextWindow, ReserveTokens: b.ReserveTokens, Kinds: b.Kinds, History: b.History}
	if b.CompactionOn {
		t := b.ContextWindow - b.ReserveTokens
		out.Threshold = &t
	}
	return out, nil
}

// logReporter shows a read's notices in the client's log (a read reports no progress).
type logReporter struct{ s *Server }

func (r logReporter) Report(string, int) {}
func (r logReporter) Notice(msg string)  { r.s.logMessage(2, msg) }
