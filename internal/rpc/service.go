package rpc

import (
	"context"
	"errors"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/service"
)

// The policy of a job (settings, summarizer, where a write goes) is the session
// service's (internal/service), the same the CLI applies; this file only gives it the
// server's configuration and maps its errors to the wire.

// svc is the session service with the client's configuration.
func (s *Server) svc() service.Config {
	s.host.mu.Lock()
	defer s.host.mu.Unlock()
	c := service.Config{AgentDir: s.host.agentDir, SummarizerConfig: s.host.cfg.SummarizerConfig,
		KeepRecentTokens: s.host.cfg.KeepRecentTokens, ReserveTokens: s.host.cfg.ReserveTokens}
	if s.opt.BridgeDir != "" {
		c.BridgeDirs = []string{s.opt.BridgeDir}
	}
	return c
}

// liveBridge is the registration of a live pi with the bridge that holds path, or nil.
func (s *Server) liveBridge(ctx context.Context, path string) *bridge.Registration {
	return s.svc().Bridge(ctx, path)
}

// serviceError maps the session service's refusals to the wire.
func serviceError(err error) error {
	var r *service.Refusal
	switch {
	case err == nil:
		return nil
	case errors.As(err, &r):
		return &Error{Code: CodeRequestFailed, Kind: KindOwnedByPi, Msg: r.Error() + " (force: true)", Err: err}
	case errors.Is(err, service.ErrInvalidSettings):
		return &Error{Code: CodeRequestFailed, Kind: KindInvalidSettings, Msg: err.Error(), Err: err}
	case errors.Is(err, service.ErrSummarizer):
		return &Error{Code: CodeRequestFailed, Kind: KindSummarizerFailed, Msg: err.Error(), Err: err}
	}
	return err
}
