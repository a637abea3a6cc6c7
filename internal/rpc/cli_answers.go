package rpc

import (
	"reflect"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The --json answers of the CLI's writing commands (cmd/pi-lsp), one type each: what a
// script reads. They are documented here, beside the server's shapes, and in
// docs/protocol.md's CLI section (generated); where an answer is the server's too, the
// CLI answers the server's type (NothingToCompact, CompactedViaPi, NavigatedViaPi's
// fields). A job done by a live pi says so (via "pi", its pid).

// CLIAnswer is one --json answer of a CLI command.
type CLIAnswer struct {
	// Command is the command line that answers it ("compact FILE --dry-run").
	Command string
	Type    reflect.Type
	Summary string
}

// CLIAnswers are the --json answers of the CLI's writing commands, in the docs' order.
func CLIAnswers() []CLIAnswer {
	return []CLIAnswer{
		{"compact FILE", reflect.TypeFor[session.CompactionEntry](), "the compaction entry pi-lsp wrote, as the file holds it"},
		{"compact FILE (a live pi)", reflect.TypeFor[CompactedViaPi](), "the compaction the live pi wrote"},
		{"compact FILE (nothing to do)", reflect.TypeFor[NothingToCompact](), "why there was nothing to compact"},
		{"compact FILE --dry-run", reflect.TypeFor[CompactPlan](), "the cut a compaction would make"},
		{"compact FILE --dry-run --coverage", reflect.TypeFor[CompactCoverage](), "the summary a compaction would write, and what it does not carry"},
		{"navigate FILE ID", reflect.TypeFor[CLINavigated](), "the new leaf, and the branch summary written"},
		{"navigate FILE ID --dry-run", reflect.TypeFor[NavigatePlan](), "the branch a navigation would leave"},
		{"undo-compaction FILE", reflect.TypeFor[UndoneCompaction](), "the compaction made inactive, and its side branch"},
		{"label FILE ID [TEXT]", reflect.TypeFor[session.LabelEntry](), "the label entry pi-lsp wrote"},
		{"label FILE ID [TEXT] (a live pi)", reflect.TypeFor[LabelledByPi](), "the label the live pi set"},
		{"edit-context FILE ID", reflect.TypeFor[ContextEdited](), "the context_edit entry written, and the context figure"},
		{"clear-tool-output FILE", reflect.TypeFor[contextedit.ClearResult](), "the tool results cleared (or, dry, to clear; restored)"},
		{"sessions", reflect.TypeFor[SessionList](), "the project's sessions, newest first (pi/sessions' items)"},
	}
}

// SessionList is `sessions --json`: the sessions folder of the project and its
// sessions, newest first, each as pi/sessions lists it.
type SessionList struct {
	Dir      string        `json:"dir"`
	Sessions []SessionInfo `json:"sessions"`
}

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

// CLINavigated is `navigate --json`.
type CLINavigated struct {
	LeafID       *string                                 `json:"leafId"`
	SummaryEntry session.Raw[session.BranchSummaryEntry] `json:"summaryEntry,omitempty"`
	EditorText   *string                                 `json:"editorText,omitempty"`
	AlreadyThere bool                                    `json:"alreadyThere,omitempty"`
	Cancelled    bool                                    `json:"cancelled,omitempty"`
	Via          string                                  `json:"via,omitempty" ts:"\"pi\""`
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

// UndoneCompaction is `undo-compaction --json`: the new leaf, the compaction made
// inactive, and what it leaves on a side branch.
type UndoneCompaction struct {
	LeafID       *string `json:"leafId"`
	CompactionID string  `json:"compactionId"`
	Position     *string `json:"position"`
	// SideBranch are the entries written after the compaction on the path it undid from,
	// oldest first: the last is where `pi-lsp navigate FILE ID` returns to them.
	SideBranch  []SideEntry                      `json:"sideBranch"`
	MarkerEntry session.Raw[session.CustomEntry] `json:"markerEntry,omitempty"`
}

// LabelledByPi is `label --json` when the live pi set the label (pi-lsp's own answers
// the label entry it wrote).
type LabelledByPi struct {
	EntryID string  `json:"entryId"`
	Label   *string `json:"label"`
	Via     string  `json:"via" ts:"\"pi\""`
	PID     int     `json:"pid"`
}

// ContextEdited is `edit-context --json`.
type ContextEdited struct {
	Entry        session.Raw[session.ContextEditEntry] `json:"entry"`
	TokensBefore float64                               `json:"tokensBefore"`
	TokensAfter  float64                               `json:"tokensAfter"`
}
