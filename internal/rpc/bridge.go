package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Writes to a session a live pi holds go through that pi when it loaded pi-lsp's Pi
// extension (editors/pi): Pi writes the entries itself, so its in-memory leaf stays
// right and nothing pi-lsp wrote becomes a dead branch. Answers carry via: "pi".

// bridgeError maps a bridge failure to the wire.
func bridgeError(pid int, err error) error {
	var be *bridge.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &be):
		msg := fmt.Sprintf("pi (pid %d): %s", pid, be.Message)
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
		return &Error{Code: CodeRequestFailed, Kind: KindBridgeFailed, Msg: msg, Err: err}
	case errors.Is(err, bridge.ErrGone):
		return &Error{Code: CodeRequestFailed, Kind: KindPiGone,
			Msg: fmt.Sprintf("pi (pid %d) went away during the request; the session is as pi left it", pid), Err: err}
	}
	return &Error{Code: CodeRequestFailed, Kind: KindBridgeFailed, Msg: fmt.Sprintf("pi (pid %d): %v", pid, err), Err: err}
}

// dialBridge connects to the bridge of reg.
func (s *Server) dialBridge(ctx context.Context, reg *bridge.Registration) (*bridge.Conn, error) {
	c, err := service.DialBridge(ctx, reg)
	if err != nil {
		return nil, bridgeError(reg.PID, err)
	}
	return c, nil
}

// compactViaPi runs pi.compact in the live pi of reg, with the same progress and
// pi/compactionStart/End the editor gets for a compaction pi-lsp writes.
func (s *Server) compactViaPi(ctx context.Context, path string, reg *bridge.Registration, instructions string, wd *WorkDone) (CompactResult, error) {
	conn, err := s.dialBridge(ctx, reg)
	if err != nil {
		wd.End("Not compacted: " + err.Error())
		return nil, err
	}
	defer conn.Close()
	var mu sync.Mutex
	started, ended := false, false
	start := func() {
		if !started {
			started = true
			s.notify("pi/compactionStart", CompactionStart{Session: path, Reason: "manual", Via: "pi"})
		}
	}
	wd.Report("pi is compacting", 5)
	res, err := conn.Compact(ctx, instructions, func(ev bridge.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Type {
		case "compaction_start":
			start()
		case "session_before_compact":
			wd.Report("summarizing (pi's model)", 10)
		case "compaction_end":
			var e bridge.CompactionEndEvent
			_ = json.Unmarshal(ev.Raw, &e)
			start()
			ended = true
			end := CompactionEnd{Session: path, Reason: "manual", Aborted: e.Aborted, WillRetry: e.WillRetry, ErrorMessage: e.ErrorMessage, Via: "pi"}
			if len(e.Result) > 0 && string(e.Result) != "null" {
				end.Result = session.Raw[CompactionEndResult](e.Result)
			}
			s.notify("pi/compactionEnd", end)
		}
	})
	mu.Lock()
	if started && !ended {
		// pi went away (or the request was cancelled) before it said how it ended.
		end := CompactionEnd{Session: path, Reason: "manual", Aborted: ctx.Err() != nil, Via: "pi"}
		if ctx.Err() == nil {
			end.ErrorMessage = "Compaction failed: " + bridgeError(reg.PID, err).Error()
		}
		s.notify("pi/compactionEnd", end)
	}
	mu.Unlock()
	defer s.afterWrite(path)
	if bridge.IsCode(err, bridge.CodeNothingToCompact) {
		var be *bridge.Error
		errors.As(err, &be)
		wd.End("Not compacted: " + be.Message)
		return NothingToCompact{NothingToCompact: true, Reason: be.Message, Via: "pi"}, nil
	}
	if err != nil {
		err = bridgeError(reg.PID, err)
		return nil, endFailed(wd, err, bridgeCancelled(err), "Cancelled; pi wrote nothing", "Not compacted: ")
	}
	var r bridge.CompactionResult
	_ = json.Unmarshal(res.Result, &r)
	s.afterWrite(path) // before the figure below (the deferred one is then a no-op refresh)
	out := CompactedViaPi{Entry: res.Entry, TokensBefore: r.TokensBefore, Via: "pi", PID: reg.PID}
	msg := fmt.Sprintf("Compacted by pi (%d tokens before)", int(r.TokensBefore))
	_ = s.host.withIndex(path, func(ix *session.Index) error {
		// Pi's estimate after a compaction is unknown until the next answer (null).
		if tokens, _, _ := s.host.usage(ix.LeafPath()); tokens != nil {
			out.TokensAfter = tokens
			msg = fmt.Sprintf("Compacted by pi: %d → ~%v tokens", int(r.TokensBefore), tokens)
		}
		return nil
	})
	wd.End(msg)
	return out, nil
}

// navigateViaPi moves the live pi's leaf through ctx.navigateTree.
func (s *Server) navigateViaPi(ctx context.Context, path string, reg *bridge.Registration, p navigateParams, wd *WorkDone) (NavigateResult, error) {
	conn, err := s.dialBridge(ctx, reg)
	if err != nil {
		wd.End("Failed: " + err.Error())
		return nil, err
	}
	defer conn.Close()
	defer s.afterWrite(path)
	res, err := conn.Navigate(ctx, bridge.NavigateRequest{TargetID: p.TargetID, Summarize: p.Summarize,
		CustomInstructions: p.Instructions, ReplaceInstructions: p.ReplaceInstructions, Label: p.Label},
		func(ev bridge.Event) {
			if ev.Type == "session_before_tree" {
				wd.Report("summarizing (pi's model)", 10)
			}
		})
	if err != nil {
		err = bridgeError(reg.PID, err)
		return nil, endFailed(wd, err, bridgeCancelled(err), "Cancelled; pi did not move", "Failed: ")
	}
	if res.Cancelled && ctx.Err() != nil {
		// Pi's navigateTree answers {cancelled: true} when it was aborted.
		wd.End("Cancelled; pi did not move")
		return nil, fmt.Errorf("%w: pi aborted the navigation", context.Canceled)
	}
	wd.End("Done by pi")
	return NavigatedViaPi{LeafID: nullable(res.LeafID), Cancelled: res.Cancelled, SummaryEntry: res.SummaryEntry, Via: "pi", PID: reg.PID}, nil
}

// labelViaPi sets a label through pi.setLabel.
func (s *Server) labelViaPi(ctx context.Context, path string, reg *bridge.Registration, entryID, label string) (LabelResult, error) {
	conn, err := s.dialBridge(ctx, reg)
	if err != nil {
		return LabelResult{}, err
	}
	defer conn.Close()
	defer s.afterWrite(path)
	if err := conn.Label(ctx, entryID, label); err != nil {
		return LabelResult{}, bridgeError(reg.PID, err)
	}
	return LabelResult{EntryID: entryID, Label: label, Via: "pi", PID: reg.PID}, nil
}

// bridgeCancelled reports whether a bridged request (its error mapped by bridgeError)
// ended because it was cancelled, here or in pi.
func bridgeCancelled(err error) bool {
	return errors.Is(err, context.Canceled) || IsKind(err, KindCancelled)
}

// IsKind reports whether err is an *Error of this kind.
func IsKind(err error, kind string) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == kind
}
