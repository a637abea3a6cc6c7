package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// JSON-RPC and LSP error codes. Code 0 is never sent.
const (
	CodeParseError           = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeInternalError        = -32603
	CodeServerNotInitialized = -32002
	CodeUnknownError         = -32001
	CodeRequestFailed        = -32803
	CodeServerCancelled      = -32802
	CodeContentModified      = -32801
	CodeRequestCancelled     = -32800
)

// Error kinds carried in error.data.kind, for editors to react to.
const (
	KindInvalidParams    = "invalidParams"
	KindNotFound         = "notFound"
	KindNoSession        = "noSession"
	KindCancelled        = "cancelled"
	KindNothingToCompact = "nothingToCompact"
	KindAlreadyCompacted = "alreadyCompacted"
	KindPinnedDropped    = "pinnedDropped"
	KindSummarizerFailed = "summarizerFailed"
	KindContextTooLong   = "contextTooLong"
	KindSessionChanged   = "sessionChanged"
	KindOwnedByPi        = "ownedByPi"
	KindOutsideSessions  = "outsideSessions"
	KindBadSession       = "badSession"
	KindInvalidSettings  = "invalidSettings" // a settings value Pi 1.6.0 refuses
	KindInternal         = "internal"
	KindShutdown         = "shutdown"
	// Refused context edits (pi/editContext).
	KindNotOnBranch  = "notOnBranch"
	KindNotEditable  = "notEditable"
	KindSummarized   = "summarized"
	KindNotEdited    = "notEdited"
	KindPiBusy       = "piBusy"       // the live pi's agent (or another bridged write) is running
	KindPiGone       = "piGone"       // the live pi went away during a bridged request
	KindBridgeFailed = "bridgeFailed" // the live pi refused or failed a bridged request
)

// Error is a typed error a handler returns to choose the wire code and kind.
type Error struct {
	Code int64
	Kind string
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func errorf(code int64, kind, msg string) *Error { return &Error{Code: code, Kind: kind, Msg: msg} }

func invalidParams(msg string) *Error { return errorf(CodeInvalidParams, KindInvalidParams, msg) }

// badSession is a session file that does not load.
func badSession(err error) *Error {
	return &Error{Code: CodeRequestFailed, Kind: KindBadSession, Msg: err.Error(), Err: err}
}

// wireError maps any error to a JSON-RPC error with a real code and data.kind.
func wireError(err error) *respError {
	var e *Error
	code, kind, msg := int64(CodeRequestFailed), KindInternal, err.Error()
	var se *compaction.SummaryError
	switch {
	case errors.As(err, &e):
		code, kind, msg = e.Code, e.Kind, e.Msg
	case errors.Is(err, context.Canceled), errors.Is(err, compaction.ErrCancelled):
		code, kind = CodeRequestCancelled, KindCancelled
	case errors.Is(err, compaction.ErrNothingToCompact), errors.Is(err, compaction.ErrEmptyPath):
		kind = KindNothingToCompact
	case errors.Is(err, compaction.ErrAlreadyCompacted):
		kind = KindAlreadyCompacted
	case errors.Is(err, compaction.ErrNotACut), errors.Is(err, compaction.ErrNotOnPath):
		code, kind = CodeInvalidParams, KindInvalidParams
	case errors.Is(err, compaction.ErrPinnedDropped):
		kind = KindPinnedDropped
	case errors.Is(err, branch.ErrCancelled):
		code, kind = CodeRequestCancelled, KindCancelled
	case errors.Is(err, branch.ErrNotFound), errors.Is(err, branch.ErrNoCompaction):
		kind = KindNotFound
	case errors.Is(err, compaction.ErrSessionChanged), errors.Is(err, session.ErrRewritten):
		code, kind = CodeContentModified, KindSessionChanged
	case errors.Is(err, compaction.ErrContextTooLong):
		kind = KindContextTooLong
	case errors.As(err, &se):
		kind = KindSummarizerFailed
	case errors.Is(err, session.ErrNoHeader), errors.Is(err, session.ErrTooDense), errors.Is(err, session.ErrNewerVersion):
		kind = KindBadSession
	case errors.As(err, new(*bridge.ProtocolError)):
		kind = KindBridgeFailed
	case errors.Is(err, os.ErrNotExist):
		kind = KindNotFound
	}
	if code == 0 {
		code = CodeRequestFailed
	}
	out := &respError{Code: code, Message: capMessage(msg)}
	data, _ := json.Marshal(map[string]string{"kind": kind})
	raw := json.RawMessage(data)
	out.Data = &raw
	return out
}

// maxErrorMessage bounds an error message on the wire: one can quote a parameter, and a
// hostile one can be megabytes long.
const maxErrorMessage = 4 << 10

// capMessage cuts msg to maxErrorMessage bytes (at a rune boundary), saying how long it
// was.
func capMessage(msg string) string {
	if len(msg) <= maxErrorMessage {
		return msg
	}
	cut := maxErrorMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", msg[:cut], len(msg))
}
