package rpc

import (
	"context"
	"errors"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/service"
)

// Writes to a session a live pi holds go through that pi when it loaded pi-lsp's Pi
// extension (editors/pi): the session service asks it (internal/service), Pi writes the
// entries itself, so its in-memory leaf stays right and nothing pi-lsp wrote becomes a
// dead branch. Answers carry via: "pi". This file maps pi's failures to the wire.

// bridgeError maps a live pi's failure to the wire.
func bridgeError(pe *service.PiError) error {
	var be *bridge.Error
	err, msg := pe.Err, pe.Error()
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &be):
		switch be.Code {
		case bridge.CodeBusy:
			return &Error{Code: CodeRequestFailed, Kind: KindPiBusy, Msg: msg, Err: err}
		case bridge.CodeNotFound:
			return &Error{Code: CodeRequestFailed, Kind: KindNotFound, Msg: msg, Err: err}
		case bridge.CodeAborted:
			return &Error{Code: CodeRequestCancelled, Kind: KindCancelled, Msg: msg, Err: err}
		case bridge.CodeInvalidParams:
			return &Error{Code: CodeInvalidParams, Kind: KindInvalidParams, Msg: msg, Err: err}
		case bridge.CodeNothingToCompact:
			return &Error{Code: CodeRequestFailed, Kind: KindNothingToCompact, Msg: msg, Err: err}
		}
	case errors.Is(err, bridge.ErrGone):
		return &Error{Code: CodeRequestFailed, Kind: KindPiGone, Msg: msg, Err: err}
	}
	return &Error{Code: CodeRequestFailed, Kind: KindBridgeFailed, Msg: msg, Err: err}
}

// viaPiFailed reports whether err is a live pi's failure: pi may have written even
// then, so the session is refreshed.
func viaPiFailed(err error) bool {
	var pe *service.PiError
	return errors.As(err, &pe)
}

// jobCancelled reports whether a job's error (mapped by serviceError) says it was
// cancelled, here or in pi.
func jobCancelled(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, compaction.ErrCancelled) || IsKind(err, KindCancelled)
}

// IsKind reports whether err is an *Error of this kind.
func IsKind(err error, kind string) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == kind
}

// jobFailed ends the progress of a service job that failed and maps its error: a live
// pi's failure refreshes the session first (pi may have written even then); a cancelled
// job ends with cancelled (piCancelled when pi was asked), any other with failed and
// the error.
func (s *Server) jobFailed(ctx context.Context, path string, wd *WorkDone, err error, failed, piCancelled string) error {
	cancelled := "Cancelled; nothing was written"
	if viaPiFailed(err) {
		s.afterWrite(path)
		cancelled = piCancelled
	}
	err = serviceError(err)
	return endFailed(wd, err, jobCancelled(ctx, err), cancelled, failed)
}
