package main

import (
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The --json answers of the writing commands, one type each: what a script reads.
// A job done by a live pi says so (via "pi", its pid). Where an answer is the server's
// too, it is the server's type (rpc.NothingToCompact, rpc.CompactedViaPi), documented
// in docs/protocol.md.

// CompactPlan is `compact --dry-run --json`: the cut a compaction would make.
type CompactPlan struct {
	FirstKeptEntryID    string   `json:"firstKeptEntryId"`
	IsSplitTurn         bool     `json:"isSplitTurn"`
	TokensBefore        float64  `json:"tokensBefore"`
	MessagesToSummarize int      `json:"messagesToSummarize"`
	TurnPrefixMessages  int      `json:"turnPrefixMessages"`
	PreviousSummary     bool     `json:"previousSummary"`
	ReadFiles           []string `json:"readFiles"`
	ModifiedFiles       []string `json:"modifiedFiles"`
	TokensAfterEstimate float64  `json:"tokensAfterEstimate"`
}

// CompactCoverage is `compact --dry-run --coverage --json`: the summary a compaction
// would write and what of the summarized range it does not carry.
type CompactCoverage struct {
	FirstKeptEntryID string              `json:"firstKeptEntryId"`
	Summary          string              `json:"summary"`
	TokensBefore     float64             `json:"tokensBefore"`
	TokensAfter      float64             `json:"tokensAfter"`
	Coverage         compaction.Coverage `json:"coverage"`
}

// Navigated is `navigate --json`.
type Navigated struct {
	LeafID       *string                                 `json:"leafId"`
	SummaryEntry session.Raw[session.BranchSummaryEntry] `json:"summaryEntry,omitempty"`
	EditorText   *string                                 `json:"editorText,omitempty"`
	AlreadyThere bool                                    `json:"alreadyThere,omitempty"`
	Cancelled    bool                                    `json:"cancelled,omitempty"`
	Via          string                                  `json:"via,omitempty"`
	PID          int                                     `json:"pid,omitempty"`
}

// NavigatePlan is `navigate --dry-run --json`: the branch a navigation would leave.
type NavigatePlan struct {
	CommonAncestorID *string  `json:"commonAncestorId"`
	Entries          []string `json:"entries"`
	Messages         int      `json:"messages"`
	TotalTokens      int      `json:"totalTokens"`
	ReadFiles        []string `json:"readFiles"`
	ModifiedFiles    []string `json:"modifiedFiles"`
}

// UndoneCompaction is `undo-compaction --json`.
type UndoneCompaction struct {
	LeafID       *string                          `json:"leafId"`
	CompactionID string                           `json:"compactionId"`
	Position     *string                          `json:"position"`
	SideBranch   []sideEntry                      `json:"sideBranch"`
	MarkerEntry  session.Raw[session.CustomEntry] `json:"markerEntry,omitempty"`
}

// LabelledByPi is `label --json` when the live pi set the label (pi-lsp's own answers
// the label entry it wrote).
type LabelledByPi struct {
	EntryID string  `json:"entryId"`
	Label   *string `json:"label"`
	Via     string  `json:"via"`
	PID     int     `json:"pid"`
}

// ContextEdited is `edit-context --json`.
type ContextEdited struct {
	Entry        session.Raw[session.ContextEditEntry] `json:"entry"`
	TokensBefore float64                               `json:"tokensBefore"`
	TokensAfter  float64                               `json:"tokensAfter"`
}

// orNull is s, or null when s is "".
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
