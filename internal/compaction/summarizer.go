package compaction

import (
	"context"
	"fmt"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Kind says which summary a request asks for.
type Kind string

const (
	KindHistory    Kind = "history"     // compaction of older history (initial or update)
	KindTurnPrefix Kind = "turn-prefix" // the start of a turn too large to keep
	KindBranch     Kind = "branch"      // a branch being left
)

// Request is one summary to produce.
type Request struct {
	Kind Kind
	// Messages are the AgentMessages to summarize; Conversation is their serialized form.
	Messages     []*session.Message
	Conversation string
	// PreviousSummary, when set, asks for an update of that summary (KindHistory only).
	PreviousSummary     string
	CustomInstructions  string
	ReplaceInstructions bool // KindBranch: the custom instructions replace the prompt
	// ThinkingLevel is the session's thinking level: a reasoning model is asked for that
	// effort (every kind, as Pi 1.6.0 asks).
	ThinkingLevel string
	ReadFiles     []string
	ModifiedFiles []string
	// Pinned are user texts that must be carried verbatim.
	Pinned []string
	// Later are, for the history part of a split turn, the turn-prefix messages that
	// follow it (summarized by the other request): context only, so what they settle (a
	// question answered, a failure fixed) is not written as open. Model summarizers are
	// not sent them (Pi's request has no such part).
	Later []*session.Message
	// Progress, when set, receives streaming progress.
	Progress func(Progress)
}

// Progress is reported while a summary streams, and by a summarizer that retries when
// each request attempt begins.
type Progress struct {
	Tokens  int // output tokens (or an estimate) so far
	Elapsed time.Duration
	// Kind is the summary the report belongs to (a split turn runs two at once).
	Kind Kind
	// Attempt numbers the request attempts of a summarizer that retries (from 1; 0 for
	// one that does not). MaxAttempts is how many it may make: it shrinks after a stall,
	// whose retry is the last attempt.
	Attempt, MaxAttempts int
	// Starting marks the report sent as an attempt begins (Tokens is 0).
	Starting bool
	// Retry says, on the report that starts attempt 2 or later, why the previous attempt
	// failed ("stall", "HTTP 503", ...); Wait is the backoff before it is sent.
	Retry string
	Wait  time.Duration
}

// Note is the line of a report that starts an attempt ("attempt 2 of 2 after stall"),
// or "" for any other report.
func (p Progress) Note() string {
	if !p.Starting || p.Attempt == 0 {
		return ""
	}
	n := fmt.Sprintf("attempt %d of %d", p.Attempt, p.MaxAttempts)
	if p.Retry != "" {
		n += " after " + p.Retry
	}
	if p.Wait > 0 {
		n += ", in " + FormatElapsed(p.Wait)
	}
	return n
}

// Message is a one-line description of the report, as progress UIs show it:
// "summarizing: attempt 2 of 2 after stall (61s)" or "summarizing: 12 tokens streamed, 3.4s".
func (p Progress) Message() string {
	if n := p.Note(); n != "" {
		what := "summarizing"
		if p.Kind == KindTurnPrefix {
			what = "summarizing the turn prefix" // a split turn runs two summaries at once
		}
		return fmt.Sprintf("%s: %s (%s)", what, n, FormatElapsed(p.Elapsed))
	}
	m := fmt.Sprintf("summarizing: %d tokens streamed, %.1fs", p.Tokens, p.Elapsed.Seconds())
	if p.Attempt > 1 {
		m += fmt.Sprintf(" (attempt %d of %d)", p.Attempt, p.MaxAttempts)
	}
	return m
}

// FormatElapsed writes a wait or an elapsed time as progress lines show it: tenths of a
// second below 10 s ("2.1s"), whole seconds above ("61s").
func FormatElapsed(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%.0fs", d.Seconds())
}

// Result is a produced summary.
type Result struct {
	Text  string
	Usage *session.Usage
	Model string
}

// Summarizer produces summaries. Implementations must honour ctx cancellation and
// return an error wrapping context.Canceled when cancelled.
type Summarizer interface {
	Name() string
	Summarize(ctx context.Context, req Request) (Result, error)
}
