package rpc

import (
	"encoding/json"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The shapes of the pi/* requests, notifications and hooks, as the server sends and
// reads them. These types are the one source of the wire: the command table refers to
// them, and `go generate ./internal/rpc` derives docs/protocol.md, the VS Code
// extension's protocol.ts, the Neovim command list and the README table from them (a
// test fails when those are stale).
//
// The generator reads the json tags and a `ts` tag:
//   - `ts:"Name"` names the TypeScript type of a field whose Go type says too little
//     (raw JSON: a progress token, an AgentMessage; the names no struct declares are
//     contract.go's Aliases);
//   - a session.Raw[T] is JSON passed through as it was written (an entry as the file
//     holds it, a live pi's answer) and documented as T;
//   - `ts:",required"` marks a params field the handler refuses to go without (every
//     other params field is optional: absent means its zero value);
//   - in results, a field is optional exactly when it has omitempty, and a pointer
//     without omitempty is `T | null`, so the docs say what the encoder does.
//
// Field comments become the documentation of the field.

// --- shared pieces -----------------------------------------------------------------

// nullable is a string that is sent as null when empty (Pi's null leaf, no current
// session).
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// NothingToCompact answers a compaction (or its preview) that had nothing to do.
type NothingToCompact struct {
	NothingToCompact bool   `json:"nothingToCompact" ts:"true"`
	Reason           string `json:"reason"`
	// Via is "pi" when a live pi with pi-lsp's bridge was asked.
	Via string `json:"via,omitempty" ts:"\"pi\""`
}

func nothingToCompact(reason string) NothingToCompact {
	return NothingToCompact{NothingToCompact: true, Reason: reason}
}

// --- pi/compact, pi/commitCompaction, pi/previewCompaction -------------------------

// Compacted is a compaction pi-lsp wrote.
type Compacted struct {
	// Entry is the compaction entry written, as the file holds it.
	Entry        session.Raw[session.CompactionEntry] `json:"entry"`
	TokensBefore float64                              `json:"tokensBefore"`
	TokensAfter  float64                              `json:"tokensAfter"`
	Audit        compaction.Audit                     `json:"audit"`
}

// CompactedViaPi is a compaction a live pi made through the bridge.
type CompactedViaPi struct {
	// Entry is the compaction entry pi wrote, as pi gave it.
	Entry        session.Raw[session.CompactionEntry] `json:"entry"`
	TokensBefore float64                              `json:"tokensBefore"`
	// TokensAfter is absent while Pi's figure after a compaction is unknown (until its
	// next answer).
	TokensAfter *float64 `json:"tokensAfter,omitempty"`
	Via         string   `json:"via" ts:"\"pi\""`
	PID         int      `json:"pid"`
}

type previewCompactionParams struct {
	Session       string          `json:"session"`
	Instructions  string          `json:"instructions"`
	WorkDoneToken json.RawMessage `json:"workDoneToken" ts:"ProgressToken"`
}

// CompactionPreview is what a compaction would do now, written nowhere.
type CompactionPreview struct {
	Session string `json:"session"`
	// SpanKey names the previewed span: pass it back to pi/commitCompaction.
	SpanKey             string           `json:"spanKey"`
	FirstKeptEntryID    string           `json:"firstKeptEntryId"`
	IsSplitTurn         bool             `json:"isSplitTurn"`
	MessagesToSummarize int              `json:"messagesToSummarize"`
	KeptMessages        int              `json:"keptMessages"`
	TokensBefore        float64          `json:"tokensBefore"`
	TokensAfter         float64          `json:"tokensAfter"`
	Summary             string           `json:"summary"`
	Audit               compaction.Audit `json:"audit"`
	// FromDraft: the summary is the background draft (answered at once).
	FromDraft bool `json:"fromDraft"`
	// Pinned are the texts of the pinned messages the summary must quote.
	Pinned []string `json:"pinned" ts:"string[] | null"`
	// Coverage is what the summary carries of the summarized range's critical entities
	// (files modified, commands, error strings, URLs, ids, the user's constraints and
	// latest request), and what it drops: pin a pinnable entity's entry, or name the
	// entity in the instructions and preview again.
	Coverage compaction.Coverage `json:"coverage"`
}

type commitCompactionParams struct {
	Session           string `json:"session"`
	Summary           string `json:"summary" ts:",required"`
	SpanKey           string `json:"spanKey" ts:",required"`
	Instructions      string `json:"instructions"`
	AcceptDroppedPins bool   `json:"acceptDroppedPins"`
	Force             bool   `json:"force"`
}

func (p *commitCompactionParams) validate() error {
	if p.Summary == "" || p.SpanKey == "" {
		return invalidParams("summary and spanKey (from pi/previewCompaction) are required")
	}
	return nil
}

// --- pi/navigate, pi/previewBranchSummary, pi/undoCompaction -----------------------

// Navigated is a navigation pi-lsp wrote (or found already done).
type Navigated struct {
	// LeafID is the session's leaf afterwards: the last entry appended (label,
	// summary or marker), or the position when nothing was written.
	LeafID *string `json:"leafId"`
	// Position is where the active branch now continues from, before the entries the
	// navigation appended: the target, or its parent for a user or custom message
	// (null for the root).
	Position *string `json:"position"`
	// AlreadyThere: the target was the leaf already, nothing was written.
	AlreadyThere bool `json:"alreadyThere,omitempty"`
	// SummaryEntry is the branch_summary entry written, as Pi writes it.
	SummaryEntry session.Raw[session.BranchSummaryEntry] `json:"summaryEntry,omitempty"`
	// EditorText is the text of a user message navigated to, for the editor's input.
	EditorText *string `json:"editorText,omitempty"`
}

// NavigateCancelled answers a navigation the client's pi/beforeTree hook cancelled
// (Pi's navigateTree answers {cancelled: true}).
type NavigateCancelled struct {
	LeafID    *string `json:"leafId"`
	Cancelled bool    `json:"cancelled" ts:"true"`
}

// NavigatedViaPi is a navigation a live pi made through the bridge.
type NavigatedViaPi struct {
	LeafID    *string `json:"leafId"`
	Cancelled bool    `json:"cancelled,omitempty"`
	// SummaryEntry is the branch_summary entry pi wrote, as pi gave it.
	SummaryEntry session.Raw[session.BranchSummaryEntry] `json:"summaryEntry,omitempty"`
	Via          string                                  `json:"via" ts:"\"pi\""`
	PID          int                                     `json:"pid"`
}

// BranchSummaryPreview is the summary of the branch a navigation would leave.
type BranchSummaryPreview struct {
	Session  string `json:"session"`
	TargetID string `json:"targetId"`
	// LeafID is the leaf the preview was made from: pass it back as pi/navigate's
	// expectLeafId.
	LeafID           *string `json:"leafId"`
	CommonAncestorID *string `json:"commonAncestorId"`
	Entries          int     `json:"entries"`
	Summary          string  `json:"summary"`
}

type previewBranchSummaryParams struct {
	Session       string          `json:"session"`
	TargetID      string          `json:"targetId" ts:",required"`
	Instructions  string          `json:"instructions"`
	WorkDoneToken json.RawMessage `json:"workDoneToken" ts:"ProgressToken"`
}

func (p *previewBranchSummaryParams) validate() error { return required("targetId", p.TargetID) }

type undoCompactionParams struct {
	Session string `json:"session"`
	// LeafID: undo the newest compaction on the path of this entry (default: Pi's leaf,
	// the last entry), as the CLI's --leaf.
	LeafID string `json:"leafId"`
	Force  bool   `json:"force"`
}

// UndoCompactionResult names the compaction made inactive, the new leaf, and what the
// undo leaves on a side branch.
type UndoCompactionResult struct {
	LeafID       *string `json:"leafId"`
	CompactionID string  `json:"compactionId"`
	// Position is the entry the new leaf continues from (null: the session's start).
	Position *string `json:"position"`
	// SideBranch are the entries written after the compaction on the path it undid from,
	// oldest first: navigating to the last returns to them.
	SideBranch []SideEntry `json:"sideBranch"`
}

// SideEntry is an entry an undone compaction leaves on a side branch.
type SideEntry struct {
	EntryHead
	Description string `json:"description"`
}

// SideBranchOf is an undo's side branch as both front ends answer it.
func SideBranchOf(side []service.SideEntry) []SideEntry {
	out := make([]SideEntry, 0, len(side))
	for _, s := range side {
		out = append(out, SideEntry{EntryHead: HeadOf(s.Entry), Description: s.Description})
	}
	return out
}

// --- pi/label, pi/pin --------------------------------------------------------------

// entryWrite is what the params of a write to one entry start with: the session, the
// entry, and whether to write although a running pi holds the session.
type entryWrite struct {
	Session string `json:"session"`
	EntryID string `json:"entryId" ts:",required"`
	Force   bool   `json:"force"`
}

func (p *entryWrite) validate() error { return required("entryId", p.EntryID) }

// target is the entry's session, as a write names it.
func (p *entryWrite) target() target {
	return target{session: p.Session, entry: p.EntryID, force: p.Force}
}

type labelParams struct {
	entryWrite
	// Label is the new label; empty or absent clears it.
	Label *string `json:"label"`
}

// LabelResult is the label now set (absent when cleared).
type LabelResult struct {
	EntryID string `json:"entryId"`
	Label   string `json:"label,omitempty"`
	Via     string `json:"via,omitempty" ts:"\"pi\""`
	PID     int    `json:"pid,omitempty"`
}

type pinParams struct {
	entryWrite
	// Pinned false unpins; absent pins.
	Pinned *bool `json:"pinned"`
}

// PinResult is the pin state now recorded.
type PinResult struct {
	EntryID string `json:"entryId"`
	Pinned  bool   `json:"pinned"`
}

// --- pi/editContext, pi/contextBySize, pi/context ----------------------------------

// EditContextResult is the context_edit entry written and the context figure around it.
type EditContextResult struct {
	Session      string                                `json:"session"`
	Entry        session.Raw[session.ContextEditEntry] `json:"entry"`
	TokensBefore float64                               `json:"tokensBefore"`
	TokensAfter  float64                               `json:"tokensAfter"`
}

type contextBySizeParams struct {
	Session string `json:"session"`
	// Limit keeps the largest so many messages (0: all).
	Limit int `json:"limit"`
}

// ContextBySizeResult lists what the context is made of, largest first.
type ContextBySizeResult struct {
	Session string  `json:"session"`
	LeafID  *string `json:"leafId"`
	// Tokens and Percent are pi/contextUsage's figure (null after a compaction until
	// the next answer gives usage).
	Tokens          *float64           `json:"tokens"`
	ContextWindow   int                `json:"contextWindow"`
	Percent         *float64           `json:"percent"`
	ProjectedTokens float64            `json:"projectedTokens"`
	Messages        []contextedit.Item `json:"messages"`
}

type contextBreakdownParams struct {
	Session string `json:"session"`
	// History adds the context's size along the path (a projection per event: ask for
	// it when it is shown).
	History bool `json:"history,omitempty"`
}

// ContextBreakdownResult is the context at a glance: what fills it by kind (the kinds
// add up to total, Pi 1.6.0's estimate of the context), the window it fills and where
// Pi compacts, and with history: true, its size after each reply and event of the path.
type ContextBreakdownResult struct {
	Session string  `json:"session"`
	LeafID  *string `json:"leafId"`
	Total   int     `json:"total"`
	// UsageTokens is Pi's figure resting on the last reply's usage (what the status
	// bar shows), null when that usage is stale (after a compaction or a context edit).
	UsageTokens   *float64 `json:"usageTokens"`
	ContextWindow int      `json:"contextWindow"`
	ReserveTokens int      `json:"reserveTokens"`
	// Threshold is where Pi compacts (contextWindow - reserveTokens); null when the
	// session's settings disable compaction.
	Threshold *int                     `json:"threshold"`
	Kinds     []contextedit.KindTokens `json:"kinds"`
	// History is there when asked for.
	History []contextedit.SizePoint `json:"history,omitempty"`
}

// ContextResult is what the LLM would be sent now.
type ContextResult struct {
	Session       string   `json:"session"`
	LeafID        *string  `json:"leafId"`
	MessageCount  int      `json:"messageCount"`
	Tokens        *float64 `json:"tokens"`
	ContextWindow int      `json:"contextWindow"`
	Percent       *float64 `json:"percent"`
	// Estimate and Source are pi/contextUsage's.
	Estimate       *float64        `json:"estimate"`
	Source         string          `json:"source"`
	LastCompaction *LastCompaction `json:"lastCompaction,omitempty"`
}

// LastCompaction is the newest compaction of the context.
type LastCompaction struct {
	ID               string  `json:"id"`
	Summary          string  `json:"summary"`
	TokensBefore     float64 `json:"tokensBefore"`
	FirstKeptEntryID string  `json:"firstKeptEntryId"`
}

// --- pi/tree -----------------------------------------------------------------------

type treeParams struct {
	Session string `json:"session"`
	// Flat gives the nodes in depth-first order with parent and depth.
	Flat bool `json:"flat"`
	// Offset and Limit page the flat form (a limit of 0 means all).
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

// TreeResult is the nested entry tree.
type TreeResult struct {
	Session string      `json:"session"`
	LeafID  *string     `json:"leafId"`
	Roots   []*TreeNode `json:"roots"`
}

// FlatTreeResult is one page of the tree in depth-first order.
type FlatTreeResult struct {
	Session string     `json:"session"`
	LeafID  *string    `json:"leafId"`
	Total   int        `json:"total"`
	Offset  int        `json:"offset"`
	Nodes   []FlatNode `json:"nodes"`
}

// --- pi/sessions, pi/selectSession, pi/files ---------------------------------------

type sessionsParams struct {
	// Cwd lists the sessions of another working directory.
	Cwd string `json:"cwd"`
}

// SessionsResult lists the sessions of the workspace, newest first.
type SessionsResult struct {
	// Current is the server's current session, null when none is chosen yet.
	Current  *string       `json:"current"`
	Dir      string        `json:"dir"`
	Sessions []SessionInfo `json:"sessions"`
}

// SessionInfo is one session file of a listing (Pi's SessionInfo, as its session
// picker lists them).
type SessionInfo struct {
	Path string `json:"path"`
	ID   string `json:"id"`
	// Cwd is the working directory the header records.
	Cwd  string `json:"cwd"`
	Name string `json:"name,omitempty"`
	// ParentSession is the session this one was forked from, when the header says.
	ParentSession string    `json:"parentSession,omitempty"`
	Created       time.Time `json:"created"`
	Modified      time.Time `json:"modified"`
	MessageCount  int       `json:"messageCount"`
	FirstMessage  string    `json:"firstMessage"`
}

// SessionInfoOf is a listed session as both front ends answer it.
func SessionInfoOf(in session.Info) SessionInfo {
	return SessionInfo{Path: in.Path, ID: in.ID, Cwd: in.Cwd, Name: in.Name, ParentSession: in.ParentSession,
		Created: in.Created, Modified: in.Modified, MessageCount: in.MessageCount, FirstMessage: in.FirstMessage}
}

type selectSessionParams struct {
	Path string `json:"path" ts:",required"`
}

func (p *selectSessionParams) validate() error { return required("path", p.Path) }

// SelectSessionResult is the session now current.
type SelectSessionResult struct {
	Session string `json:"session"`
}

// FilesResult is the files read and modified on the current path.
type FilesResult struct {
	Session       string   `json:"session"`
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
	// Stale lists the files changed on disk since the agent last read them.
	Stale []fileops.StaleFile `json:"stale"`
}

// --- pi/append ---------------------------------------------------------------------

// AppendResult names the entries written.
type AppendResult struct {
	Session  string   `json:"session"`
	EntryIDs []string `json:"entryIds"`
	LeafID   string   `json:"leafId"`
	// AutoCompaction is the reason of the automatic compaction the append started.
	AutoCompaction string `json:"autoCompaction,omitempty" ts:"\"threshold\" | \"overflow\""`
}

// --- notifications -----------------------------------------------------------------

// SessionChanged is sent when a session file changed, by anyone.
type SessionChanged struct {
	Session string  `json:"session"`
	LeafID  *string `json:"leafId"`
	Entries int     `json:"entries"`
	// Owner is the running pi that holds the file.
	Owner *SessionOwner `json:"owner,omitempty"`
	// Current: the server's current session (also on fileOps, contextUsage and
	// draftReady).
	Current bool `json:"current"`
	// Summarizer is the summarizer and model a compaction of the session would use (the
	// session's model, pi-lsp's summaryModel or --summarizer; found without resolving the
	// credential), and, when the extractive summary stands in for the model wanted, why
	// and the fix. Editors show it before a compaction ("Compact with claude-sonnet-4-5
	// via anthropic").
	Summarizer *service.SummarizerChoice `json:"summarizer,omitempty"`
}

// SessionOwner is a running pi that writes a session.
type SessionOwner struct {
	PID int `json:"pid"`
	// Bridge: it loaded pi-lsp's Pi extension, so writes go through it (editors show
	// "live").
	Bridge    bool    `json:"bridge"`
	PiVersion *string `json:"piVersion,omitempty"`
}

// CompactionStart is sent when a compaction begins.
type CompactionStart struct {
	Session string `json:"session"`
	Reason  string `json:"reason" ts:"\"manual\" | \"threshold\" | \"overflow\""`
	Via     string `json:"via,omitempty" ts:"\"pi\""`
}

// CompactionEnd is Pi's compaction_end event.
type CompactionEnd struct {
	Session string `json:"session"`
	Reason  string `json:"reason" ts:"\"manual\" | \"threshold\" | \"overflow\""`
	// Result is Pi's compaction result (the live pi's own when via is "pi").
	Result    *session.CompactionResult `json:"result,omitempty"`
	Aborted   bool                      `json:"aborted"`
	WillRetry bool                      `json:"willRetry"`
	// ErrorMessage is prefixed as Pi prefixes it: "Compaction failed: ",
	// "Auto-compaction failed: " or "Context overflow recovery failed: ".
	ErrorMessage string `json:"errorMessage,omitempty"`
	Via          string `json:"via,omitempty" ts:"\"pi\""`
}

// CompactionFailed is Pi's session_compact_failed: after every failed or cancelled
// compaction.
type CompactionFailed struct {
	Session      string `json:"session"`
	Reason       string `json:"reason" ts:"\"manual\" | \"threshold\" | \"overflow\""`
	Aborted      bool   `json:"aborted"`
	WillRetry    bool   `json:"willRetry" ts:"false"`
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// FileOps is sent with the file lists of the session's path.
type FileOps struct {
	Session       string              `json:"session"`
	ReadFiles     []string            `json:"readFiles"`
	ModifiedFiles []string            `json:"modifiedFiles"`
	Stale         []fileops.StaleFile `json:"stale"`
	Current       bool                `json:"current"`
}

// ContextUsage is Pi 1.6.0's getContextUsage (percent unrounded).
type ContextUsage struct {
	Session string `json:"session"`
	// Tokens is null, as Pi reports it, after a compaction until an answer gives
	// usage again.
	Tokens        *float64 `json:"tokens"`
	ContextWindow int      `json:"contextWindow"`
	Percent       *float64 `json:"percent"`
	Current       bool     `json:"current"`
	// Estimate is Pi's estimate of the context (the sum of its messages' estimates)
	// when tokens is null: what a status shows, marked as an estimate, until the next
	// answer brings usage; null otherwise.
	Estimate *float64 `json:"estimate"`
	// Source says which figure a status shows: "usage" (tokens, resting on the last
	// answer's usage plus estimates of what follows it) or "estimate" (estimate when
	// tokens is null; else tokens with no usage to trust: after a context edit, or in
	// a session without any).
	Source string `json:"source"`
}

// DraftReady says a background draft is ready: the next compaction of this span is
// instant.
type DraftReady struct {
	Session          string  `json:"session"`
	FirstKeptEntryID string  `json:"firstKeptEntryId"`
	TokensBefore     float64 `json:"tokensBefore"`
	Incremental      bool    `json:"incremental"`
	Current          bool    `json:"current"`
}

// --- hooks (server -> client requests) ---------------------------------------------

// BeforeCompact is Pi's session_before_compact event.
type BeforeCompact struct {
	Session            string                `json:"session"`
	Reason             string                `json:"reason" ts:"\"manual\" | \"threshold\" | \"overflow\""`
	WillRetry          bool                  `json:"willRetry"`
	CustomInstructions string                `json:"customInstructions"`
	Preparation        BeforeCompactPrepared `json:"preparation"`
}

// BeforeCompactPrepared is the preparation a hook may replace the summary of.
type BeforeCompactPrepared struct {
	FirstKeptEntryID    string   `json:"firstKeptEntryId"`
	TokensBefore        float64  `json:"tokensBefore"`
	IsSplitTurn         bool     `json:"isSplitTurn"`
	MessagesToSummarize int      `json:"messagesToSummarize"`
	TurnPrefixMessages  int      `json:"turnPrefixMessages"`
	PreviousSummary     *string  `json:"previousSummary"`
	ReadFiles           []string `json:"readFiles"`
	ModifiedFiles       []string `json:"modifiedFiles"`
	// Conversation is the summarized messages serialized as Pi serializes them.
	Conversation string `json:"conversation"`
}

// BeforeTree is Pi's session_before_tree event.
type BeforeTree struct {
	Session             string  `json:"session"`
	TargetID            string  `json:"targetId"`
	OldLeafID           *string `json:"oldLeafId"`
	CommonAncestorID    *string `json:"commonAncestorId"`
	Entries             int     `json:"entries"`
	UserWantsSummary    bool    `json:"userWantsSummary"`
	CustomInstructions  string  `json:"customInstructions"`
	ReplaceInstructions bool    `json:"replaceInstructions"`
	Label               string  `json:"label"`
}
