package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// target names the session a command writes.
type target struct {
	session string // the session param ("" for the current session)
	entry   string // an entry that must exist in it ("" for none)
	force   bool   // write even though a running pi holds the session
	// create starts a new session for the workspace when no session is named and the
	// workspace has none.
	create bool
}

// writeJob is a write to a target and how it runs; R is the command's answer.
type writeJob[R any] struct {
	target
	// service: the write is a job of the session service, which decides where it goes
	// (the file, a live pi with pi-lsp's bridge, or a refusal) and takes the session's
	// job lock itself (serverSessions); the funnel resolves, reports and refreshes.
	service bool
	// progress, when it has a title, is the $/progress of a long job.
	progress jobProgress
	// lock is how the write takes the session's job lock.
	lock lockMode
}

// jobProgress is the $/progress a long write reports.
type jobProgress struct {
	token          json.RawMessage // the client's workDoneToken
	title, message string          // of the begin report ("" title: no progress)
	// early begins the progress before the session is resolved, so that the editor
	// shows the job at once; otherwise it begins once the write is allowed.
	early bool
	// refused prefixes the error that ends the progress when the write is refused
	// before it ran ("Not compacted: ").
	refused string
}

// lockMode is how a write waits for the session's job lock.
type lockMode int

const (
	lockWait        lockMode = iota // a short write waits
	lockCancellable                 // a long job stops waiting when it is cancelled
	lockInJob                       // the job takes it itself (a service job: after its route)
)

// unwritten is returned as the error of a write's function that wrote nothing after
// all (a navigation the client's hook cancelled): its answer is the write's, and
// nothing is refreshed or notified for it.
type unwritten[R any] struct{ answer R }

func (unwritten[R]) Error() string { return "nothing was written" }

// write is the one sequence of a command that appends to a session: begin its progress
// (when the job is long and says so), resolve the session (and the entry it names),
// then either run the session service's job (which routes the write: into the file, to
// a live pi, or refused, and takes the session's job lock) or, for the server's own
// writes, refuse a session a running pi writes unless forced and take the job lock (so
// the write never interleaves with a compaction or another write of this server);
// write, and refresh the index and schedule pi/sessionChanged, pi/fileOps and
// pi/contextUsage. Nothing is refreshed after a failed write (the domain packages
// write whole lines or nothing), except one a live pi failed, which may have written.
// fn runs with a context the progress UI cancels.
func write[R any](s *Server, ctx context.Context, job writeJob[R], fn func(ctx context.Context, path string, wd *WorkDone) (R, error)) (R, error) {
	var zero R
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wd *WorkDone
	begin := func() {
		if wd == nil && job.progress.title != "" {
			wd = s.tracker.Start(ctx, job.progress.token, job.progress.title, job.progress.message, cancel)
		}
	}
	defer func() { wd.End("Failed") }() // a safety net: End is idempotent, and the paths below end it with their own message
	refuse := func(err error) (R, error) {
		wd.End(job.progress.refused + err.Error())
		return zero, err
	}
	if job.progress.early {
		begin()
	}
	path, cwd, err := s.writeTarget(job.target)
	if err != nil {
		return refuse(err)
	}
	if !job.service {
		if _, err := s.svc().RouteWrite(jctx, path, cwd, job.force, false); err != nil {
			return refuse(serviceError(err))
		}
	}
	begin()
	lock := job.lock
	if job.service {
		lock = lockInJob
	}
	switch mu := s.jobLock(path); lock {
	case lockWait:
		mu.Lock()
		defer mu.Unlock()
	case lockCancellable:
		if err := lockCtx(jctx, mu); err != nil {
			wd.End("Cancelled; nothing was written")
			return zero, err
		}
		defer mu.Unlock()
	}
	out, err := fn(jctx, path, wd)
	var u unwritten[R]
	if errors.As(err, &u) {
		return u.answer, nil
	}
	if err != nil {
		if viaPiFailed(err) {
			s.afterWrite(path)
		}
		return zero, serviceError(err)
	}
	s.afterWrite(path)
	return out, nil
}

// afterWrite brings the session's index up to date with what was written and schedules
// its notifications.
func (s *Server) afterWrite(path string) {
	if err := s.host.refresh(path); err == nil {
		s.host.scheduleNotify(path)
	}
}

// writeTarget resolves the session of a write (creating one when the job may), checks
// that the entry it names exists in it, and returns the session's path and header cwd.
func (s *Server) writeTarget(job target) (string, string, error) {
	path, err := s.host.sessionFor(job.session)
	if err != nil && job.create && job.session == "" {
		path, err = s.createSession()
	}
	if err != nil {
		return "", "", err
	}
	var cwd string
	found := true
	if err := s.host.withIndex(path, func(ix *session.Index) error {
		found = job.entry == "" || ix.Entry(job.entry) != nil
		cwd = ix.File.Header.Cwd
		return nil
	}); err != nil {
		return "", "", badSession(err)
	}
	if !found {
		return "", "", &Error{Code: CodeRequestFailed, Kind: KindNotFound, Msg: fmt.Sprintf("entry %s not found", job.entry)}
	}
	return path, cwd, nil
}

// jobLock serializes the jobs that write one session.
func (s *Server) jobLock(path string) *sync.Mutex { return &s.host.state(path).jobMu }

// lockCtx takes mu unless ctx ends first, so a cancelled job that waits behind another
// one is answered at once instead of when the other finishes.
func lockCtx(ctx context.Context, mu *sync.Mutex) error {
	for wait := time.Millisecond; !mu.TryLock(); wait = min(2*wait, 20*time.Millisecond) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	return nil
}

// endFailed ends the progress of a job that failed and returns its error: as cancelled
// when the job was aborted (the error then wraps context.Canceled, so that the answer is
// RequestCancelled), otherwise with failed and the error.
func endFailed(wd *WorkDone, err error, aborted bool, cancelled, failed string) error {
	if !aborted {
		wd.End(failed + err.Error())
		return err
	}
	wd.End(cancelled)
	if !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("%w: %w", context.Canceled, err)
	}
	return err
}
