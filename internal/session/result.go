package session

import "encoding/json"

// CompactionResult is Pi 1.6.0's CompactionResult: what a compaction answers, whoever
// made it. It is the one type of the three answers pi-lsp sees: Pi's own (a live pi's
// compaction_end event and its answer through pi-lsp's bridge) and pi-lsp's (the
// result of pi/compactionEnd).
type CompactionResult struct {
	Summary          string  `json:"summary"`
	FirstKeptEntryID string  `json:"firstKeptEntryId"`
	TokensBefore     float64 `json:"tokensBefore"`
	// EstimatedTokensAfter is the estimate of the context after the compaction (absent
	// when a live pi did not say).
	EstimatedTokensAfter *float64 `json:"estimatedTokensAfter,omitempty"`
	// Usage is the summary calls' usage.
	Usage *Usage `json:"usage,omitempty"`
	// Details are the file lists of Pi's own compaction, or an extension's details.
	Details json.RawMessage `json:"details,omitempty" ts:"unknown"`
}
