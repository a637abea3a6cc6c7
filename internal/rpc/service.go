package rpc

import (
	"context"
	"errors"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Every job's rules (settings, summarizer, where a write goes, what a live pi is asked)
// are the session service's (internal/service), the same the CLI applies; this file
// gives it the server's configuration, its sessions (the followed index, one job lock
// per session) and its reporter, and maps its errors to the wire.

// svc is the session service with the client's configuration.
func (s *Server) svc() service.Config {
	s.host.mu.Lock()
	defer s.host.mu.Unlock()
	c := service.Config{AgentDir: s.host.agentDir, SummarizerConfig: s.host.cfg.SummarizerConfig,
		KeepRecentTokens: s.host.cfg.KeepRecentTokens, ReserveTokens: s.host.cfg.ReserveTokens,
		Sessions: serverSessions{s}}
	if s.opt.BridgeDir != "" {
		c.BridgeDirs = []string{s.opt.BridgeDir}
	}
	return c
}

// serverSessions are the server's sessions as the service's jobs read them: the
// followed index (nothing is parsed again for a job) and the session's job lock, so a
// job never interleaves with a compaction or another write of this server.
type serverSessions struct{ s *Server }

func (ss serverSessions) Cwd(path string) string { return ss.s.host.cwdOf(path) }

func (ss serverSessions) Snapshot(path string) (*session.Snapshot, error) {
	return ss.s.host.snapshot(path)
}

func (ss serverSessions) Lock(ctx context.Context, path string) (func(), error) {
	mu := ss.s.jobLock(path)
	if err := lockCtx(ctx, mu); err != nil {
		return nil, err
	}
	return mu.Unlock, nil
}

// jobReporter reports a job of the service on the server: its steps as $/progress,
// its notices once per session as window/showMessage, a compaction's start and end as
// pi/compactionStart, pi/compactionEnd and pi/compactionFailed.
type jobReporter struct {
	s      *Server
	path   string
	reason string // of a compaction
	wd     *WorkDone
}

func (r jobReporter) Report(message string, pct int) { r.wd.Report(message, uint32(max(pct, 0))) }
func (r jobReporter) Tick(message string, pct int)   { r.Report(message, pct) }

// Notice shows the client, once per session and text, the line saying that the wanted
// model could not be used and the extractive summary is used instead.
func (r jobReporter) Notice(message string) {
	r.s.host.mu.Lock()
	st := r.s.host.stateLocked(r.path)
	shown := st.notice == message
	st.notice = message
	r.s.host.mu.Unlock()
	if !shown {
		r.s.notify("window/showMessage", showMessageParams{Type: msgWarning, Message: "pi-lsp: " + message})
	}
}

func (r jobReporter) CompactionStart(via service.Via) {
	r.s.notify("pi/compactionStart", CompactionStart{Session: r.path, Reason: r.reason, Via: string(via)})
}

func (r jobReporter) CompactionEnd(e service.CompactionEnd) {
	r.s.notify("pi/compactionEnd", CompactionEnd{Session: r.path, Reason: r.reason, Result: e.Result, Aborted: e.Aborted,
		WillRetry: e.WillRetry, ErrorMessage: e.ErrorMessage, Via: string(e.Via)})
	if e.Via == service.ViaFile && e.Result == nil && !e.Quiet {
		// Pi's session_compact_failed: every failed or cancelled compaction.
		r.s.notify("pi/compactionFailed", CompactionFailed{Session: r.path, Reason: r.reason, Aborted: e.Aborted, ErrorMessage: e.ErrorMessage})
	}
}

// liveBridge is the registration of a live pi with the bridge that holds path, or nil.
func (s *Server) liveBridge(ctx context.Context, path string) *bridge.Registration {
	return s.svc().Bridge(ctx, path)
}

// serviceError maps the session service's refusals to the wire.
func serviceError(err error) error {
	var r *service.Refusal
	var pe *service.PiError
	var mapped *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mapped):
		return err
	case errors.As(err, &r):
		return &Error{Code: CodeRequestFailed, Kind: KindOwnedByPi, Msg: r.Error() + " (force: true)", Err: err}
	case errors.Is(err, service.ErrNotViaPi):
		return &Error{Code: CodeInvalidParams, Kind: KindInvalidParams, Msg: err.Error(), Err: err}
	case errors.As(err, &pe):
		return bridgeError(pe)
	case errors.Is(err, service.ErrInvalidSettings):
		return &Error{Code: CodeRequestFailed, Kind: KindInvalidSettings, Msg: err.Error(), Err: err}
	case errors.Is(err, service.ErrSummarizer):
		return &Error{Code: CodeRequestFailed, Kind: KindSummarizerFailed, Msg: err.Error(), Err: err}
	}
	return err
}
