package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// beforeCompactAnswer is the client's answer to pi/beforeCompact (Pi's
// session_before_compact result).
type beforeCompactAnswer struct {
	Cancel  bool    `json:"cancel"`
	Summary *string `json:"summary"`
	// FirstKeptEntryID: absent keeps the preparation's; null keeps nothing (Pi 1.6.0's
	// retain-none compaction, whose firstKeptEntryId is its own id).
	FirstKeptEntryID json.RawMessage     `json:"firstKeptEntryId" ts:"string | null"`
	TokensBefore     *float64            `json:"tokensBefore"`
	Details          *compaction.Details `json:"details"`
	// Usage is the hook's own summary call, stored on the entry as Pi stores it.
	Usage *session.Usage `json:"usage"`
}

// askClient sends a hook request bounded by the hook timeout. A client that does not
// answer in time, or answers with an error, does not block the job: the default runs.
func (s *Server) askClient(ctx context.Context, method string, params, answer any) bool {
	hctx, cancel := context.WithTimeout(ctx, s.opt.HookTimeout)
	defer cancel()
	err := s.call(hctx, method, params, answer)
	switch {
	case err == nil:
		return true
	case errors.Is(hctx.Err(), context.DeadlineExceeded):
		s.log.Warn("hook timed out; continuing", "method", method, "timeout", s.opt.HookTimeout)
		s.logMessage(msgWarning, method+" did not answer within "+s.opt.HookTimeout.String()+"; continuing without it")
	default:
		s.log.Warn("hook failed; continuing", "method", method, "err", err)
	}
	return false
}

func (s *Server) compactHook(path, reason, instructions string, willRetry bool) compaction.Hook {
	if !s.clientHooks() {
		return nil
	}
	return func(ctx context.Context, p *compaction.Preparation) (compaction.HookDecision, error) {
		read, mod := p.FileOps.Lists()
		params := BeforeCompact{
			Session: path, Reason: reason, WillRetry: willRetry, CustomInstructions: instructions,
			Preparation: BeforeCompactPrepared{
				FirstKeptEntryID: p.FirstKeptEntryID, TokensBefore: p.TokensBefore, IsSplitTurn: p.IsSplitTurn,
				MessagesToSummarize: len(p.MessagesToSummarize), TurnPrefixMessages: len(p.TurnPrefixMessages),
				PreviousSummary: nullable(p.PreviousSummary), ReadFiles: read, ModifiedFiles: mod,
				Conversation: compaction.SerializeAgentMessages(p.MessagesToSummarize),
			},
		}
		var ans *beforeCompactAnswer
		if !s.askClient(ctx, "pi/beforeCompact", params, &ans) || ans == nil {
			return compaction.HookDecision{}, nil
		}
		if ans.Cancel {
			return compaction.HookDecision{Cancel: true}, nil
		}
		if ans.Summary == nil {
			return compaction.HookDecision{}, nil
		}
		// What the client leaves out (first kept entry, file lists) and the derived
		// figures are completed by compaction.Run, as for any hook outcome.
		out := &compaction.Outcome{Summary: *ans.Summary, TokensBefore: p.TokensBefore}
		switch id := ans.FirstKeptEntryID; {
		case string(id) == "null":
			out.RetainNone = true
		case len(id) > 0:
			if err := json.Unmarshal(id, &out.FirstKeptEntryID); err != nil {
				return compaction.HookDecision{}, fmt.Errorf("pi/beforeCompact answer: firstKeptEntryId must be a string or null: %s", id)
			}
		}
		out.Usage = ans.Usage
		if ans.TokensBefore != nil {
			out.TokensBefore = *ans.TokensBefore
		}
		if ans.Details != nil {
			out.Details = *ans.Details
		}
		return compaction.HookDecision{Outcome: out}, nil
	}
}

// beforeTreeAnswer is the client's answer to pi/beforeTree (Pi's session_before_tree).
type beforeTreeAnswer struct {
	Cancel  bool `json:"cancel"`
	Summary *struct {
		Summary string          `json:"summary" ts:",required"`
		Details json.RawMessage `json:"details" ts:"unknown"`
	} `json:"summary"`
	CustomInstructions  *string `json:"customInstructions"`
	ReplaceInstructions *bool   `json:"replaceInstructions"`
	Label               *string `json:"label"`
}

var _ = time.Second
