package bridge

import (
	"encoding/json"
	"reflect"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The bridge protocol (Protocol 1): newline-delimited JSON over the socket. These types
// are its one source: the client below encodes the requests and decodes the frames with
// them, and `go generate ./internal/rpc` derives the extension's types
// (editors/pi/protocol.ts) and the bridge section of docs/protocol.md from them. The
// generator reads the json tags and the `ts` tags as for internal/rpc's wire types; a
// field with omitempty is a key that may be absent, any other is always there.

// Error codes of a refused or failed request (Error.Code).
const (
	// CodeMalformed: a line that is not a JSON object, has no valid id or type, or is too
	// long.
	CodeMalformed = "malformed"
	// CodeUnauthorized: the first request was not hello with the registry's token (the
	// connection is then closed).
	CodeUnauthorized = "unauthorized"
	// CodeProtocol: hello asked for another protocol version.
	CodeProtocol      = "protocol"
	CodeUnknownType   = "unknownType"
	CodeInvalidParams = "invalidParams"
	// CodeBusy: pi's agent runs, pi compacts, another bridged write runs, or no session
	// is open; nothing was done.
	CodeBusy     = "busy"
	CodeNotFound = "notFound"
	// CodeUnsupported: Pi's extension API cannot do it (contextEdit).
	CodeUnsupported = "unsupported"
	CodeFailed      = "failed"
	// CodeAborted: the request was cancelled (cancel, or the connection closed).
	CodeAborted          = "aborted"
	CodeNothingToCompact = "nothingToCompact"
)

// ErrorCodes lists every Error.Code, in the docs' order.
var ErrorCodes = []string{CodeMalformed, CodeUnauthorized, CodeProtocol, CodeUnknownType, CodeInvalidParams,
	CodeBusy, CodeNotFound, CodeUnsupported, CodeFailed, CodeAborted, CodeNothingToCompact}

// --- requests (pi-lsp -> pi) ---------------------------------------------------------

// HelloRequest must be a connection's first request: it authenticates with the
// registry's token. Any other first request, a wrong token or another protocol is
// refused and the connection closed.
type HelloRequest struct {
	ID       string `json:"id" ts:"RequestID"`
	Type     string `json:"type" ts:"\"hello\""`
	Protocol int    `json:"protocol" ts:"1"`
	Token    string `json:"token"`
}

// StatusRequest asks for pi's state.
type StatusRequest struct {
	ID   string `json:"id" ts:"RequestID"`
	Type string `json:"type" ts:"\"status\""`
}

// PingRequest asks whether pi still serves.
type PingRequest struct {
	ID   string `json:"id" ts:"RequestID"`
	Type string `json:"type" ts:"\"ping\""`
}

// CompactRequest makes pi compact its session (ctx.compact).
type CompactRequest struct {
	ID                 string `json:"id" ts:"RequestID"`
	Type               string `json:"type" ts:"\"compact\""`
	CustomInstructions string `json:"customInstructions,omitempty"`
}

// NavigateRequest moves pi's leaf (navigateTree, in a command handler of the extension:
// the only context Pi gives it), with a branch summary when asked.
type NavigateRequest struct {
	ID                  string `json:"id" ts:"RequestID"`
	Type                string `json:"type" ts:"\"navigate\""`
	TargetID            string `json:"targetId"`
	Summarize           bool   `json:"summarize,omitempty"`
	CustomInstructions  string `json:"customInstructions,omitempty"`
	ReplaceInstructions bool   `json:"replaceInstructions,omitempty"`
	Label               string `json:"label,omitempty"`
}

// LabelRequest sets an entry's label through pi.setLabel; no label clears it.
type LabelRequest struct {
	ID      string `json:"id" ts:"RequestID"`
	Type    string `json:"type" ts:"\"label\""`
	EntryID string `json:"entryId"`
	Label   string `json:"label,omitempty"`
}

// CancelRequest aborts the running compaction or branch summary that the request named
// by its target, on this connection, started (ctx.abort()).
type CancelRequest struct {
	ID     string `json:"id" ts:"RequestID"`
	Type   string `json:"type" ts:"\"cancel\""`
	Target string `json:"target" ts:"RequestID"`
}

// ContextEditRequest is always refused (unsupported): Pi 1.6.0's extension API appends
// context edits only as drafts returned from a running turn's turn_end or
// agent_before_settle handlers.
type ContextEditRequest struct {
	ID   string `json:"id" ts:"RequestID"`
	Type string `json:"type" ts:"\"contextEdit\""`
}

// --- answers (pi -> pi-lsp) ----------------------------------------------------------

// Status is the answer to hello and status.
type Status struct {
	Protocol    int    `json:"protocol"`
	PID         int    `json:"pid"`
	SessionFile string `json:"sessionFile"`
	PiVersion   string `json:"piVersion"`
	// Idle: pi's agent is not running (writes are served only then).
	Idle bool `json:"idle"`
	// Running is the pi-lsp request pi is running, null when none.
	Running *Running `json:"running"`
	// LeafID is pi's leaf, null when it has none.
	LeafID string `json:"leafId" ts:"string | null"`
	// Version is the version of pi-lsp's Pi extension (absent before 0.2.0).
	Version string `json:"version,omitempty"`
}

// Running names the request a bridge runs.
type Running struct {
	ID   json.RawMessage `json:"id" ts:"RequestID"`
	Type string          `json:"type" ts:"\"compact\" | \"navigate\""`
}

// Pong answers ping.
type Pong struct {
	Pong bool `json:"pong" ts:"true"`
}

// CancelResult answers cancel.
type CancelResult struct {
	// Cancelled: the target was running and was asked to abort.
	Cancelled bool `json:"cancelled"`
}

// CompactResult is Pi's answer to a compaction.
type CompactResult struct {
	// Result is Pi's CompactionResult.
	Result *session.CompactionResult `json:"result" ts:"CompactionResult"`
	// Entry is the compaction entry Pi appended (session_compact's compactionEntry),
	// null if Pi did not say.
	Entry  session.Raw[session.CompactionEntry] `json:"entry" ts:"CompactionEntry | null"`
	LeafID string                               `json:"leafId" ts:"string | null"`
}

// NavigateResult is Pi's answer to a navigation.
type NavigateResult struct {
	Cancelled bool   `json:"cancelled"`
	LeafID    string `json:"leafId" ts:"string | null"`
	OldLeafID string `json:"oldLeafId" ts:"string | null"`
	// SummaryEntry is the branch_summary entry Pi wrote (session_tree's), null without
	// one.
	SummaryEntry session.Raw[session.BranchSummaryEntry] `json:"summaryEntry" ts:"BranchSummaryEntry | null"`
}

// LabelResult answers label.
type LabelResult struct {
	EntryID string `json:"entryId"`
	Label   string `json:"label" ts:"string | null"`
	LeafID  string `json:"leafId" ts:"string | null"`
}

// --- frames (pi -> pi-lsp) -----------------------------------------------------------

// OKResponse answers a request that succeeded, with the result of its type (Results).
type OKResponse struct {
	Type   string          `json:"type" ts:"\"response\""`
	ID     json.RawMessage `json:"id" ts:"RequestID"`
	OK     bool            `json:"ok" ts:"true"`
	Result json.RawMessage `json:"result" ts:"unknown"`
}

// ErrorResponse is the answer to a request that was refused or failed; its id is null
// when the request had none that could be read.
type ErrorResponse struct {
	Type  string          `json:"type" ts:"\"response\""`
	ID    json.RawMessage `json:"id" ts:"RequestID | null"`
	OK    bool            `json:"ok" ts:"false"`
	Error Error           `json:"error"`
}

// EventFrame carries one of Pi's events while the request it names runs.
type EventFrame struct {
	Type  string          `json:"type" ts:"\"event\""`
	ID    json.RawMessage `json:"id" ts:"RequestID"`
	Event json.RawMessage `json:"event" ts:"BridgeEvent"`
}

// --- events ----------------------------------------------------------------------------

// CompactionStartEvent is sent when pi starts the compaction (Pi's compaction_start).
type CompactionStartEvent struct {
	Type   string `json:"type" ts:"\"compaction_start\""`
	Reason string `json:"reason" ts:"\"manual\""`
}

// BeforeCompactEvent is Pi's session_before_compact, in short.
type BeforeCompactEvent struct {
	Type               string  `json:"type" ts:"\"session_before_compact\""`
	Reason             string  `json:"reason"`
	CustomInstructions *string `json:"customInstructions"`
	TokensBefore       float64 `json:"tokensBefore,omitempty"`
	FirstKeptEntryID   *string `json:"firstKeptEntryId"`
}

// CompactionEndEvent is sent once when the compaction ends, done, failed or aborted
// (Pi's compaction_end).
type CompactionEndEvent struct {
	Type      string `json:"type" ts:"\"compaction_end\""`
	Reason    string `json:"reason"`
	WillRetry bool   `json:"willRetry"`
	Aborted   bool   `json:"aborted"`
	// Result is Pi's CompactionResult when the compaction was done.
	Result *session.CompactionResult `json:"result,omitempty"`
	// ErrorMessage says why it failed ("Compaction failed: ...").
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// BeforeTreeEvent is Pi's session_before_tree, in short.
type BeforeTreeEvent struct {
	Type             string  `json:"type" ts:"\"session_before_tree\""`
	TargetID         string  `json:"targetId"`
	OldLeafID        *string `json:"oldLeafId"`
	CommonAncestorID *string `json:"commonAncestorId"`
	// Entries counts the entries to summarize.
	Entries          int  `json:"entries"`
	UserWantsSummary bool `json:"userWantsSummary"`
}

// TreeEvent is Pi's session_tree: the navigation is done.
type TreeEvent struct {
	Type         string                                  `json:"type" ts:"\"session_tree\""`
	NewLeafID    *string                                 `json:"newLeafId"`
	OldLeafID    *string                                 `json:"oldLeafId"`
	SummaryEntry session.Raw[session.BranchSummaryEntry] `json:"summaryEntry" ts:"BranchSummaryEntry | null"`
}

// Method is one request type of the protocol with its result.
type Method struct {
	Type    string
	Request reflect.Type
	Result  reflect.Type // nil: always refused
	Summary string
}

// Methods lists the requests of the protocol, in the docs' order.
func Methods() []Method {
	return []Method{
		{"hello", reflect.TypeFor[HelloRequest](), reflect.TypeFor[Status](), "Authenticates; the first request of a connection."},
		{"status", reflect.TypeFor[StatusRequest](), reflect.TypeFor[Status](), "Pi's state."},
		{"ping", reflect.TypeFor[PingRequest](), reflect.TypeFor[Pong](), "Whether pi still serves."},
		{"compact", reflect.TypeFor[CompactRequest](), reflect.TypeFor[CompactResult](), "Compacts pi's session with Pi's model and hooks."},
		{"navigate", reflect.TypeFor[NavigateRequest](), reflect.TypeFor[NavigateResult](), "Moves pi's leaf, with a branch summary when asked."},
		{"label", reflect.TypeFor[LabelRequest](), reflect.TypeFor[LabelResult](), "Sets or clears an entry's label."},
		{"cancel", reflect.TypeFor[CancelRequest](), reflect.TypeFor[CancelResult](), "Aborts the running compaction or branch summary."},
		{"contextEdit", reflect.TypeFor[ContextEditRequest](), nil, "Always refused (unsupported)."},
	}
}

// Frames lists what pi sends: the two answers and the event frame.
func Frames() []reflect.Type {
	return []reflect.Type{reflect.TypeFor[OKResponse](), reflect.TypeFor[ErrorResponse](), reflect.TypeFor[EventFrame]()}
}

// Events lists the events an EventFrame carries.
func Events() []reflect.Type {
	return []reflect.Type{reflect.TypeFor[CompactionStartEvent](), reflect.TypeFor[BeforeCompactEvent](),
		reflect.TypeFor[CompactionEndEvent](), reflect.TypeFor[BeforeTreeEvent](), reflect.TypeFor[TreeEvent]()}
}

// request is a request the client sends: withID gives it its id and its type.
type request interface{ withID(id string) any }

func (r HelloRequest) withID(id string) any   { r.ID, r.Type = id, "hello"; return r }
func (r StatusRequest) withID(id string) any  { r.ID, r.Type = id, "status"; return r }
func (r PingRequest) withID(id string) any    { r.ID, r.Type = id, "ping"; return r }
func (r CompactRequest) withID(id string) any { r.ID, r.Type = id, "compact"; return r }
func (r NavigateRequest) withID(id string) any {
	r.ID, r.Type = id, "navigate"
	return r
}
func (r LabelRequest) withID(id string) any  { r.ID, r.Type = id, "label"; return r }
func (r CancelRequest) withID(id string) any { r.ID, r.Type = id, "cancel"; return r }
func (r ContextEditRequest) withID(id string) any {
	r.ID, r.Type = id, "contextEdit"
	return r
}

// rawRequest is a request as a map (Send), sent with the id the client gives it.
type rawRequest map[string]any

func (r rawRequest) withID(id string) any {
	out := make(map[string]any, len(r)+1)
	for k, v := range r {
		out[k] = v
	}
	out["id"] = id
	return out
}
