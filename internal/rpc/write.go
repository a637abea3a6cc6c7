package rpc

import (
	"context"

	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/bridge"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// writeJob names the session a command writes and how.
type writeJob struct {
	session string // the session param ("" for the current session)
	entry   string // an entry that must exist in it ("" for none)
	force   bool   // write even though a running pi holds the session
	// viaPi, when set and not forced, hands the write to a live pi with pi-lsp's
	// bridge instead (Pi then writes its own file, as it would for its user).
	viaPi func(ctx context.Context, path string, reg *bridge.Registration) (any, error)
}

// write is the one sequence of a command that appends to a session: resolve the session
// (and the entry it names), hand it to a live pi when the command can, refuse a session
// a running pi writes unless forced, take the session's job lock (so the write never
// interleaves with a compaction or another write of this server), write, and refresh
// the index and schedule pi/sessionChanged, pi/fileOps and pi/contextUsage. Nothing is
// refreshed after a failed write: the domain packages write whole lines or nothing.
func (s *Server) write(ctx context.Context, job writeJob, fn func(path string) (any, error)) (any, error) {
	path, cwd, err := s.sessionWithEntry(job.session, job.entry)
	if err != nil {
		return nil, err
	}
	if job.viaPi != nil && !job.force {
		if reg := s.liveBridge(ctx, path); reg != nil {
			return job.viaPi(ctx, path, reg)
		}
	}
	if err := s.checkOwner(path, cwd, job.force); err != nil {
		return nil, err
	}
	mu := s.jobLock(path)
	mu.Lock()
	defer mu.Unlock()
	out, err := fn(path)
	if err != nil {
		return nil, err
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

// sessionWithEntry resolves a session, checks that entryID (when not "") exists in it,
// and returns the session's path and header cwd.
func (s *Server) sessionWithEntry(param, entryID string) (string, string, error) {
	var cwd string
	path, err := s.withSession(param, func(_ string, ix *session.Index) error {
		if entryID != "" && ix.Entry(entryID) == nil {
			return &Error{Code: CodeRequestFailed, Kind: KindNotFound, Msg: fmt.Sprintf("entry %s not found", entryID)}
		}
		cwd = ix.File.Header.Cwd
		return nil
	})
	return path, cwd, err
}
