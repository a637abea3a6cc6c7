package compaction

import (
	"context"
	"errors"
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
	MaxTokens           int
	ThinkingLevel       string
	ReadFiles           []string
	ModifiedFiles       []string
	// Pinned are user texts that must be carried verbatim.
	Pinned []string
	// Progress, when set, receives streaming progress.
	Progress func(Progress)
}

// Progress is reported while a summary streams.
type Progress struct {
	Tokens  int // output tokens (or an estimate) so far
	Elapsed time.Duration
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

// ErrContextTooLong means the model refused the request as larger than its context.
var ErrContextTooLong = errors.New("summary request exceeds the model's context window")
