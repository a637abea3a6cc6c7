package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
)

// A job routed to a live pi is done by that pi (pi-lsp's bridge calls its extension
// API), with its own model and settings, at its own leaf. What a request asks beyond
// that is refused before pi is asked, the same way for both front ends.

// ErrNotViaPi: a live pi holds the session and would do the job itself, but the request
// asks what it cannot honour (errors.Is on a *NotViaPi).
var ErrNotViaPi = errors.New("cannot be done through the live pi")

// NotViaPi refuses a job a live pi would have to do but cannot do as asked.
type NotViaPi struct {
	PID int
	// Asked are what the request asks that pi cannot honour, as the front end named
	// them (--keep-recent, summary); empty with a leaf.
	Asked []string
	// Leaf and PiLeaf: the request names leaf Leaf, pi is at PiLeaf.
	Leaf, PiLeaf string
}

func (e *NotViaPi) Error() string {
	if len(e.Asked) == 0 {
		return fmt.Sprintf("a live pi (pid %d) holds this session: it works at its own leaf %s, not %s", e.PID, e.PiLeaf, e.Leaf)
	}
	return fmt.Sprintf("a live pi (pid %d) holds this session and does this write itself, with its own model and settings at its own leaf: %s cannot be honoured through it; drop it, close pi, or force the write", e.PID, strings.Join(e.Asked, ", "))
}

func (e *NotViaPi) Unwrap() error { return ErrNotViaPi }

// PiError is a live pi's failure to do a job (its bridge's answer, or the connection
// lost): the front ends map Err (a *bridge.Error, bridge.ErrGone, a context error).
type PiError struct {
	PID int
	Err error
}

func (e *PiError) Error() string {
	if errors.Is(e.Err, bridge.ErrGone) {
		return fmt.Sprintf("pi (pid %d) went away during the request; the session is as pi left it", e.PID)
	}
	var be *bridge.Error
	if errors.As(e.Err, &be) {
		return fmt.Sprintf("pi (pid %d): %s", e.PID, be.Message)
	}
	return fmt.Sprintf("pi (pid %d): %v", e.PID, e.Err)
}

func (e *PiError) Unwrap() error { return e.Err }

// Cancelled reports whether the job ended because it was cancelled, here or in pi.
func (e *PiError) Cancelled() bool {
	return errors.Is(e.Err, context.Canceled) || bridge.IsCode(e.Err, bridge.CodeAborted)
}

// livePi is a connection to the live pi of a job, checked against what the request asks.
type livePi struct {
	reg  *bridge.Registration
	conn *bridge.Conn
}

// dialPi connects to the live pi of reg and refuses, before anything is asked of it, a
// request that names what pi cannot honour (asked) or a leaf other than pi's own.
func dialPi(ctx context.Context, reg *bridge.Registration, leaf string, asked []string) (*livePi, error) {
	if len(asked) > 0 {
		return nil, &NotViaPi{PID: reg.PID, Asked: asked}
	}
	conn, err := DialBridge(ctx, reg)
	if err != nil {
		return nil, &PiError{PID: reg.PID, Err: err}
	}
	if leaf != "" {
		st, err := conn.Status(ctx)
		if err != nil {
			conn.Close()
			return nil, &PiError{PID: reg.PID, Err: err}
		}
		if st.LeafID != leaf {
			conn.Close()
			return nil, &NotViaPi{PID: reg.PID, Leaf: leaf, PiLeaf: st.LeafID}
		}
	}
	return &livePi{reg: reg, conn: conn}, nil
}

func (p *livePi) close() { p.conn.Close() }

// fail wraps a failure of pi's.
func (p *livePi) fail(err error) error {
	if err == nil {
		return nil
	}
	return &PiError{PID: p.reg.PID, Err: err}
}

// decodeEvent decodes one of pi's events as T (the zero T when it does not decode: an
// event is a report, never a reason to fail the job).
func decodeEvent[T any](ev bridge.Event) T {
	var v T
	_ = json.Unmarshal(ev.Raw, &v)
	return v
}
