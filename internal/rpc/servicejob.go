package rpc

import (
	"context"

	"github.com/pi-lsp/pi-lsp/internal/service"
)

// reporter is a job's service.Reporter over its progress.
type reporter struct {
	wd      *WorkDone
	notices []string
}

func (r *reporter) Report(msg string, pct int) { r.wd.Report(msg, uint32(max(pct, 0))) }
func (r *reporter) Notice(msg string)          { r.notices = append(r.notices, msg) }

// runReporting calls a job of the session service with a reporter over the job's
// progress, and returns the notices the job gave. A failed job ends the progress with
// refused and the error (the caller maps the error to the wire): every long service
// job says the same thing the same way when it fails.
func runReporting[Req, Out any](ctx context.Context, wd *WorkDone, refused string,
	job func(context.Context, Req, service.Reporter) (Out, error), req Req) (Out, []string, error) {
	rep := &reporter{wd: wd}
	out, err := job(ctx, req, rep)
	if err != nil {
		wd.End(refused + err.Error())
	}
	return out, rep.notices, err
}

// readOnlyJob runs fn as a long, cancellable job on the session named, for a job that
// writes no session (a preview, a code rewind): it needs neither the write funnel's
// route check nor the session's job lock, only the progress the client may cancel.
func readOnlyJob[R any](s *Server, ctx context.Context, session string, progress jobProgress,
	fn func(ctx context.Context, path string, wd *WorkDone) (R, error)) (R, error) {
	path, err := s.host.sessionFor(session)
	if err != nil {
		var zero R
		return zero, err
	}
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return fn(jctx, path, s.tracker.Start(ctx, progress.token, progress.title, progress.message, cancel))
}
