package session

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// The shapes of the entries pi-lsp writes, as Pi 1.6.0 writes them (session-manager's
// SessionEntry types), for the wire: answers pass written entries through as their
// bytes (Raw), and `go generate ./internal/rpc` documents them from these types. Nothing
// encodes or decodes an entry through them: the writer (encodeEntry) writes Pi's keys in
// Pi's order, and a test holds every entry pi-lsp writes to these types, key by key.
//
// A field with omitempty is a key that may be absent (Pi's `key?:`); any other is always
// there. The `ts` tags are read by the generator as in internal/rpc.

// Raw is JSON passed through as it was written (an entry read back from the file, the
// answer of a live pi) and documented as a T: the docs and the editors' types show T,
// and the shape tests hold the JSON to T.
type Raw[T any] json.RawMessage

// MarshalJSON writes the bytes as they are (null when empty).
func (r Raw[T]) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of the bytes.
func (r *Raw[T]) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// WireType is the type the JSON is documented as.
func (Raw[T]) WireType() reflect.Type { return reflect.TypeFor[T]() }

// EntryEnvelope is what every entry starts with (Pi's SessionEntryBase).
type EntryEnvelope struct {
	Type string `json:"type" ts:"EntryType"`
	// ID is 8 hex digits, unique in the file.
	ID string `json:"id"`
	// ParentID is the entry this one follows in the tree, null for a root.
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`
}

// MessageEntry is a message entry (pi/append writes them): one of Pi's AgentMessages.
type MessageEntry struct {
	EntryEnvelope
	Type    string          `json:"type" ts:"\"message\""`
	Message json.RawMessage `json:"message" ts:"AgentMessage"`
}

// CompactionEntry is a compaction entry (Pi's CompactionEntry): pi-lsp's
// (compaction.Outcome.EntryFields) or one a live pi wrote through the bridge.
type CompactionEntry struct {
	EntryEnvelope
	Type string `json:"type" ts:"\"compaction\""`
	// Summary replaces the history before firstKeptEntryId in the context.
	Summary string `json:"summary"`
	// FirstKeptEntryID is the first entry kept verbatim (the compaction's own id when
	// nothing is kept: Pi 1.6.0's retain-none compaction).
	FirstKeptEntryID string  `json:"firstKeptEntryId"`
	TokensBefore     float64 `json:"tokensBefore"`
	// Details are the file lists pi-lsp and Pi's own compaction store; a hook's summary
	// may store other details of its own (Pi's `details?: unknown`).
	Details *SummaryDetails `json:"details,omitempty"`
	// Usage is the usage of the summary calls, when a model wrote the summary.
	Usage *Usage `json:"usage,omitempty"`
	// FromHook: a hook (pi/beforeCompact, or an extension of a live pi) supplied the
	// summary. pi-lsp always writes it; Pi leaves it out for its own summaries.
	FromHook bool `json:"fromHook,omitempty"`
	// SystemMessage is the checkpoint Pi 1.6.0 stores: the system messages of the
	// context replayed into one (absent for a session that has none).
	SystemMessage *SystemMessage `json:"systemMessage,omitempty"`
}

// BranchSummaryEntry is a branch_summary entry (Pi's BranchSummaryEntry): the summary
// of the branch a navigation left.
type BranchSummaryEntry struct {
	EntryEnvelope
	Type string `json:"type" ts:"\"branch_summary\""`
	// FromID is the leaf the navigation left ("root" when there was none).
	FromID  string `json:"fromId"`
	Summary string `json:"summary"`
	// Details are the file lists of the branch; a hook's summary stores the details
	// it gave (Pi's `details?: unknown`).
	Details *SummaryDetails `json:"details,omitempty"`
	Usage   *Usage          `json:"usage,omitempty"`
	// FromHook: a hook (pi/beforeTree, or an extension of a live pi) supplied the
	// summary.
	FromHook bool `json:"fromHook,omitempty"`
}

// SummaryDetails are the details of a compaction or branch summary that pi-lsp writes
// (compaction.Details, branch.Details), as Pi's own summaries write them.
type SummaryDetails struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
	// Edited marks a summary the user edited before it was committed (pi-lsp only).
	Edited bool `json:"edited,omitempty"`
}

// SystemMessage is pi-ai's SystemMessage as a compaction stores it (CurrentSystemMessage).
type SystemMessage struct {
	Role    string          `json:"role" ts:"\"system\""`
	Content json.RawMessage `json:"content" ts:"string | { type: \"text\"; text: string }[]"`
	// Sections are named prompt sections by name (null removes one).
	Sections json.RawMessage `json:"sections,omitempty" ts:"Record<string, string | null>"`
	// ToolsAdded are the complete definitions of the tools available.
	ToolsAdded   []json.RawMessage `json:"toolsAdded,omitempty" ts:"unknown[]"`
	ToolsRemoved []json.RawMessage `json:"toolsRemoved,omitempty" ts:"unknown[]"`
	// Timestamp is in milliseconds (the compaction's own time).
	Timestamp float64 `json:"timestamp"`
}

// ContextEditEntry is a context_edit entry (Pi 0.87+; contextedit writes them): it hides
// or replaces the content of an earlier message in the context.
type ContextEditEntry struct {
	EntryEnvelope
	Type     string `json:"type" ts:"\"context_edit\""`
	TargetID string `json:"targetId"`
	// Replacement is null to omit the target, or its new content.
	Replacement *ContextReplacement `json:"replacement"`
}

// ContextReplacement is the content a context edit puts in place of the target's.
type ContextReplacement struct {
	Content json.RawMessage `json:"content" ts:"unknown"`
}

// LabelEntry is a label entry (Pi's LabelEntry): the label of the target, cleared when
// absent.
type LabelEntry struct {
	EntryEnvelope
	Type     string `json:"type" ts:"\"label\""`
	TargetID string `json:"targetId"`
	Label    string `json:"label,omitempty"`
}

// CustomEntry is a custom entry (Pi's CustomEntry): pi-lsp writes its navigation markers
// and pins as these; they are not part of the context.
type CustomEntry struct {
	EntryEnvelope
	Type       string          `json:"type" ts:"\"custom\""`
	CustomType string          `json:"customType"`
	Data       json.RawMessage `json:"data,omitempty" ts:"unknown"`
}

// ID is the id of the entry r holds ("" for null): what a front end names an entry
// another process wrote by. An entry that does not decode is an error.
func (r Raw[T]) ID() (string, error) {
	if len(r) == 0 || string(r) == "null" {
		return "", nil
	}
	var e EntryEnvelope
	if err := json.Unmarshal(r, &e); err != nil {
		return "", fmt.Errorf("its entry does not decode: %w", err)
	}
	return e.ID, nil
}
