package branch

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Defaults of a branch summary, as Pi's.
const (
	// DefaultReserveTokens is Pi's branchSummary.reserveTokens default.
	DefaultReserveTokens = 16384
	// DefaultContextWindow is what Pi assumes when a model has no context window.
	DefaultContextWindow = 128000
)

// NoContent is the summary text when the branch holds nothing to summarize (no model
// call is made), as Pi writes it.
const NoContent = "No content to summarize"

// SummaryOptions configure one branch summary.
type SummaryOptions struct {
	CustomInstructions  string
	ReplaceInstructions bool
	// ReserveTokens and ContextWindow give the token budget of the summarized messages:
	// ContextWindow - ReserveTokens, where 0 or less means no limit (Pi's rule). Zero
	// values mean DefaultReserveTokens and DefaultContextWindow.
	ReserveTokens int
	ContextWindow int
	// Budget, when non-zero, replaces that budget (negative: no limit).
	Budget int
	// MaxListedFiles bounds each file list in the summary text (0: default, <0: none).
	MaxListedFiles int
	// ThinkingLevel is the session's thinking level, sent to a reasoning model as Pi
	// 1.6.0 sends it for branch summaries too.
	ThinkingLevel string
	Progress      func(compaction.Progress)
}

// TokenBudget is the budget of the summarized messages (0: no limit).
func (o SummaryOptions) TokenBudget() int {
	if o.Budget > 0 {
		return o.Budget
	}
	if o.Budget < 0 {
		return 0
	}
	window, reserve := o.ContextWindow, o.ReserveTokens
	if window <= 0 {
		window = DefaultContextWindow
	}
	if reserve == 0 {
		reserve = DefaultReserveTokens
	}
	if b := window - reserve; b > 0 {
		return b
	}
	return 0
}

// Summary is a produced branch summary.
type Summary struct {
	// Text is the summary as stored: the preamble, the model's text and the file lists.
	Text string
	// ReadFiles and ModifiedFiles are the full lists stored in the entry's details.
	ReadFiles, ModifiedFiles []string
	Usage                    *session.Usage
	Model                    string
	// Request is the request sent to the summarizer (nil when there was nothing to
	// summarize).
	Request *compaction.Request
	// Prepared is what was summarized.
	Prepared Prepared
}

// Details are the details of a branch_summary entry.
type Details struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
	// Edited marks a summary the user edited before it was committed.
	Edited bool `json:"edited,omitempty"`
}

// Generate is Pi's generateBranchSummary with pi-lsp's divergences (compaction details
// accumulate, the file lists in the text are bounded, the call's usage is kept). With no
// message within the branch it returns NoContent without calling the summarizer, with
// empty file lists. A summarizer error or a cancelled ctx returns an error.
func Generate(ctx context.Context, entries []*session.Entry, s Summarizer, opt SummaryOptions) (*Summary, error) {
	prep := PrepareWith(entries, opt.TokenBudget(), PrepareOptions{AccumulateCompactionDetails: true})
	if len(prep.Messages) == 0 {
		return &Summary{Text: NoContent, ReadFiles: []string{}, ModifiedFiles: []string{}, Prepared: prep}, nil
	}
	if s == nil {
		return nil, errors.New("no summarizer configured")
	}
	readFiles, modifiedFiles := prep.FileOps.Lists()
	req := compaction.Request{
		Kind:                compaction.KindBranch,
		Messages:            prep.Messages,
		Conversation:        compaction.SerializeAgentMessages(prep.Messages),
		CustomInstructions:  opt.CustomInstructions,
		ReplaceInstructions: opt.ReplaceInstructions,
		ThinkingLevel:       opt.ThinkingLevel,
		ReadFiles:           readFiles,
		ModifiedFiles:       modifiedFiles,
		Progress:            opt.Progress,
	}
	r, err := s.Summarize(ctx, req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			return nil, fmt.Errorf("branch summary cancelled: %w (%v)", ctxErr, err)
		}
		return nil, compaction.SummaryFailure("Branch summarization", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("branch summary cancelled: %w", err)
	}
	max := opt.MaxListedFiles
	if max == 0 {
		max = fileops.DefaultMaxListed
	}
	// The summary is kept in the file and re-sent on later turns: it never quotes a
	// credential from the branch (the request above stays Pi's own).
	text := redact.String(compaction.BranchSummaryPreamble + r.Text +
		fileops.FormatBounded(readFiles, modifiedFiles, fileops.Recent(prep.Messages), max))
	return &Summary{
		Text: text, ReadFiles: readFiles, ModifiedFiles: modifiedFiles,
		Usage: r.Usage, Model: r.Model, Request: &req, Prepared: prep,
	}, nil
}

// Summarizer produces summaries (compaction.Summarizer).
type Summarizer = compaction.Summarizer
