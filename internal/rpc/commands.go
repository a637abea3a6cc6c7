package rpc

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
)

// handlerFunc serves one custom method. params is the raw params object (may be nil).
type handlerFunc func(ctx context.Context, params json.RawMessage) (any, error)

// Command is one row of the command table. The table drives executeCommandProvider,
// the custom pi/* methods, docs/protocol.md, the VS Code palette titles and the Neovim
// user commands; a test keeps them in agreement.
type Command struct {
	ID     string // workspace/executeCommand id ("" for a request without a command)
	Method string // the equivalent custom request
	Title  string // VS Code palette title (in the "Pi" category: the palette shows "Pi: " before it)
	Neovim string // Neovim user command
	// NeovimUsage is how the README shows the Neovim command when it takes arguments
	// or has keys in :PiTree ("" for just the command).
	NeovimUsage string
	Summary     string // one line for docs
	// Params and Result are the Go types of the wire (protocol_types.go); the docs and
	// the editors' types are generated from them. Result is the handler's result type
	// (see handle): the members of a union, named ResultName in TypeScript (the union's
	// Go name unless the row names it).
	Params     reflect.Type
	Result     []reflect.Type
	ResultName string
	// Long marks jobs that report $/progress.
	Long    bool
	handler handler
}

// handler is a row's handler and the result type its signature declares.
type handler struct {
	serve  func(s *Server) handlerFunc
	result reflect.Type
}

// unions maps a union result type (an interface with an unexported marker method that
// only its members have) to its members, in the order the docs list them.
var unions = map[reflect.Type][]reflect.Type{}

// union registers the members of the union U; a member that is not a U does not compile.
func union[U any](members ...U) reflect.Type {
	u := reflect.TypeFor[U]()
	for _, m := range members {
		unions[u] = append(unions[u], reflect.TypeOf(m))
	}
	return u
}

// wireTyped is a result whose wire shape is another type's (Encoded[T]: T's).
type wireTyped interface{ wireType() reflect.Type }

// resultTypes are the wire types of a handler's result type r.
func resultTypes(r reflect.Type) ([]reflect.Type, string) {
	if r.Implements(reflect.TypeFor[wireTyped]()) {
		r = reflect.Zero(r).Interface().(wireTyped).wireType()
	}
	if ms, ok := unions[r]; ok {
		return append([]reflect.Type(nil), ms...), r.Name()
	}
	if r.Kind() != reflect.Struct {
		panic("rpc: a handler's result must be a wire struct or a registered union, not " + r.String())
	}
	return []reflect.Type{r}, ""
}

// The union results.
var (
	_ = union[CompactResult](Compacted{}, CompactedViaPi{}, NothingToCompact{})
	_ = union[NavigateResult](Navigated{}, NavigateCancelled{}, NavigatedViaPi{})
	_ = union[TreeAnswer](TreeResult{}, FlatTreeResult{})
	_ = union[PreviewCompactionResult](CompactionPreview{}, NothingToCompact{})
)

// CompactResult is pi/compact's answer: Compacted, CompactedViaPi or NothingToCompact.
type CompactResult interface{ compactResult() }

// NavigateResult is pi/navigate's answer: Navigated, NavigateCancelled or NavigatedViaPi.
type NavigateResult interface{ navigateResult() }

// TreeAnswer is pi/tree's answer: TreeResult, or FlatTreeResult with flat: true.
type TreeAnswer interface{ treeAnswer() }

// PreviewCompactionResult is pi/previewCompaction's answer: CompactionPreview or
// NothingToCompact.
type PreviewCompactionResult interface{ previewCompactionResult() }

func (Compacted) compactResult()                   {}
func (CompactedViaPi) compactResult()              {}
func (NothingToCompact) compactResult()            {}
func (NothingToCompact) previewCompactionResult()  {}
func (CompactionPreview) previewCompactionResult() {}
func (Navigated) navigateResult()                  {}
func (NavigateCancelled) navigateResult()          {}
func (NavigatedViaPi) navigateResult()             {}
func (TreeResult) treeAnswer()                     {}
func (FlatTreeResult) treeAnswer()                 {}
func (e Encoded[T]) wireType() reflect.Type        { return reflect.TypeFor[T]() }
func (e Encoded[T]) MarshalJSON() ([]byte, error)  { return encodedJSON(e).MarshalJSON() }
func (e Encoded[T]) encoded() encodedJSON          { return encodedJSON(e) }

// Encoded is an answer of type T encoded once (see host.memo): sent as its bytes.
type Encoded[T any] encodedJSON

// fill derives each row's Result (and a union's ResultName) from its handler.
func fill(rows []Command) []Command {
	for i := range rows {
		types, name := resultTypes(rows[i].handler.result)
		rows[i].Result = types
		if rows[i].ResultName == "" {
			rows[i].ResultName = name
		}
	}
	return rows
}

// Notification is a pi/* notification the server sends.
type Notification struct {
	Method  string
	Summary string
	Params  reflect.Type
}

// Hook is a request the server sends the client before a job, when the client declared
// capabilities.experimental.pi.hooks (Pi's extension events).
type Hook struct {
	Method  string
	Summary string
	Params  reflect.Type
	// Result is the answer; null (or no answer in time) runs the default.
	Result reflect.Type
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

func typesOf(ts ...reflect.Type) []reflect.Type { return ts }

var commandTable = fill([]Command{
	{ID: "pi.compact", Method: "pi/compact", Title: "Compact Session", Neovim: "PiCompact", NeovimUsage: ":PiCompact [instructions]", Long: true,
		Summary: "Summarize older history into a compaction entry; the recent suffix is kept verbatim. For a session a live pi with pi-lsp's bridge holds, that pi compacts (with its model and hooks) and the answer says `via: \"pi\"`.",
		Params:  typeOf[compactParams](),
		handler: handle((*Server).handleCompact)},
	{ID: "pi.navigate", Method: "pi/navigate", Title: "Navigate Session Tree", Neovim: "PiNavigate", NeovimUsage: ":PiNavigate {id}`, `<CR>` in `:PiTree", Long: true,
		Summary: "Move the leaf to another entry, optionally summarizing the branch left behind. For a session a live pi with pi-lsp's bridge holds, that pi navigates (`via: \"pi\"`); a previewed `summary` cannot be committed that way.",
		Params:  typeOf[navigateParams](),
		handler: handle((*Server).handleNavigate)},
	{ID: "pi.undoCompaction", Method: "pi/undoCompaction", Title: "Undo Compaction", Neovim: "PiUndoCompaction",
		Summary: "Make the full pre-compaction context active again (navigates to the parent of the newest compaction; nothing is deleted).",
		Params:  typeOf[undoCompactionParams](),
		handler: handle((*Server).handleUndoCompaction)},
	{ID: "pi.label", Method: "pi/label", Title: "Label Entry", Neovim: "PiLabel",
		Summary: "Set, or clear with an empty label, the label of an entry (through `pi.setLabel` in a live pi with pi-lsp's bridge: `via: \"pi\"`).",
		Params:  typeOf[labelParams](),
		handler: handle((*Server).handleLabel)},
	{ID: "pi.pin", Method: "pi/pin", Title: "Pin Entry", Neovim: "PiPin",
		Summary: "Pin an entry (or unpin it with pinned: false): a pinned user message is quoted verbatim in every later summary, and a summary that drops it is refused unless accepted.",
		Params:  typeOf[pinParams](),
		handler: handle((*Server).handlePin)},
	{ID: "pi.editContext", Method: "pi/editContext", Title: "Edit Context", Neovim: "PiEditContext", NeovimUsage: ":PiEditContext {id} omit|replace {text}|restore`, `x` / `e` / `u` in `:PiTree",
		Summary: "Hide (omit), replace the content of, or restore one user, assistant, toolResult or custom message in the LLM context without touching history: appends the context_edit entry Pi 1.6.0 writes. Refused (nothing written) for a target that is not found, not on the active branch, not editable, summarized away by compaction, or (restore) not edited.",
		Params:  typeOf[editContextParams](),
		handler: handle((*Server).handleEditContext)},
	{ID: "pi.clearToolOutput", Method: "pi/clearToolOutput", Title: "Clear Old Tool Output", Neovim: "PiClearToolOutput", NeovimUsage: ":PiClearToolOutput [restore]",
		Summary: "Clear old tool output without a model: each tool result older than the recent window (Pi's keepRecentTokens) and larger than `minTokens` is replaced by a placeholder naming the tool, its arguments, its size and how to restore it, one Pi 1.6.0 context_edit each, in one write; nothing is deleted. `dryRun: true` previews the results and the tokens saved; `restore: true` brings every cleared result back (one at a time: pi/editContext restore).",
		Params:  typeOf[clearToolOutputParams](),
		handler: handle((*Server).handleClearToolOutput)},
	{ID: "pi.rewind", Method: "pi/rewind", Title: "Rewind Files to Entry", Neovim: "PiRewind", NeovimUsage: ":PiRewind {id} [both]`, `R` in `:PiTree", Long: true,
		Summary: "Bring the files the agent changed after an entry (its write and edit calls, on the path to the leaf) back to what they held there, from the session's own tool calls; `dryRun: true` previews each file (what it holds, what the rewind writes, a unified diff). A file changed since the session's last change is a conflict, left alone unless `files` or `force` picks it; a file the session cannot reconstruct is listed with the reason; bash commands run after the entry are listed. The replaced bytes are kept (and removed files go to the system trash): `undo: true` puts them back. `mode: \"both\"` also moves the conversation (pi/navigate, `summarize` adds a branch summary); a code rewind writes nothing to the session.",
		Params:  typeOf[rewindParams](),
		handler: handle((*Server).handleRewind)},
	{ID: "pi.condense", Method: "pi/condense", Title: "Condense Context Range", Neovim: "PiCondense", NeovimUsage: ":PiCondense {from} {to}`, `:PiCondense {from} restore",
		Long:    true,
		Summary: "Replace the context messages from `fromId` to `toId` (both in the current context, a tool call never split from its result) by a summary: the first message holds it, the others are hidden, as Pi 1.6.0 context_edit entries in one write; the history is untouched. `dryRun: true` previews the summary and the tokens; `restore: true` (with `fromId` only) brings the whole range back (one message at a time: pi/editContext restore).",
		Params:  typeOf[condenseParams](),
		handler: handle((*Server).handleCondense)},
	{ID: "pi.contextBySize", Method: "pi/contextBySize", Title: "Context by Size", Neovim: "PiContextBySize", NeovimUsage: ":PiContextBySize`, `s` in `:PiTree",
		Summary: "The messages of the current context by estimated tokens, largest first, with their edit state (what to hide or trim).",
		Params:  typeOf[contextBySizeParams](),
		handler: handle((*Server).handleContextBySize)},
	{ID: "pi.contextBreakdown", Method: "pi/contextBreakdown", Title: "Show Context Picture", Neovim: "PiContext",
		Summary: "The context at a glance: its tokens by kind (system, user, assistant text, thinking, tool calls, tool results by tool, summaries, custom, bash), adding up to Pi 1.6.0's estimate of the context, the largest entries of each, the window, reserve and compaction threshold; with `history: true` its size after each reply of the path (Pi's recorded usage, else its estimate) and at each compaction, branch summary and context edit.",
		Params:  typeOf[contextBreakdownParams](),
		handler: handle((*Server).handleContextBreakdown)},
	{ID: "pi.tree", Method: "pi/tree", Title: "Show Session Tree", Neovim: "PiTree",
		Summary: "The entry tree of the session with the leaf and its path marked; `flat: true` gives the nodes in depth-first order with their parent and depth instead of nested children (no nesting depth for long sessions), pageable with offset and limit.",
		Params:  typeOf[treeParams](),
		handler: handle((*Server).handleTree)},
	{ID: "pi.sessions", Method: "pi/sessions", Title: "List Sessions", Neovim: "PiSessions",
		Summary: "The sessions of the workspace, newest first.",
		Params:  typeOf[sessionsParams](),
		handler: handle((*Server).handleSessions)},
	{ID: "pi.selectSession", Method: "pi/selectSession", Title: "Select Session", Neovim: "PiSelectSession", NeovimUsage: ":PiSelectSession [path]",
		Summary: "Make a session file the current one.",
		Params:  typeOf[selectSessionParams](),
		handler: handle((*Server).handleSelectSession)},
	{ID: "pi.files", Method: "pi/files", Title: "Show Files", Neovim: "PiFiles",
		Summary: "Files read and modified by the agent on the current path.",
		Params:  typeOf[sessionParams](),
		handler: handle((*Server).handleFiles)},
	{ID: "pi.context", Method: "pi/context", Title: "Show Context", Neovim: "PiContextInfo",
		Summary: "What the LLM would be sent now: message count, token usage and the last compaction.",
		Params:  typeOf[sessionParams](),
		handler: handle((*Server).handleContext)},
})

// requestTable holds the pi/* requests that have no command (editors call them in
// their own flows: previews, an editor-side agent's appends). Their sections in
// docs/protocol.md are prose around a generated shape.
var requestTable = fill([]Command{
	{Method: "pi/append", Params: typeOf[appendParams](),
		handler: handle((*Server).handleAppend)},
	{Method: "pi/previewCompaction", Params: typeOf[previewCompactionParams](),
		handler: handle((*Server).handlePreviewCompaction)},
	{Method: "pi/commitCompaction", Params: typeOf[commitCompactionParams](), ResultName: "CommitCompactionResult",
		handler: handle((*Server).handleCommitCompaction)},
	{Method: "pi/previewBranchSummary", Params: typeOf[previewBranchSummaryParams](),
		handler: handle((*Server).handlePreviewBranchSummary)},
})

// notificationTable lists the custom notifications the server sends.
var notificationTable = []Notification{
	{Method: "pi/sessionChanged", Params: typeOf[SessionChanged](),
		Summary: "Sent when the session file changed, by anyone: at once, and at most once per 100 ms (changes within that interval come together at its end)."},
	{Method: "pi/compactionStart", Params: typeOf[CompactionStart](),
		Summary: "A compaction began (`via: \"pi\"` on both compaction notifications when a live pi compacts through the bridge)."},
	{Method: "pi/compactionEnd", Params: typeOf[CompactionEnd](),
		Summary: "A compaction ended, with Pi 1.6.0's field names (Pi's `compaction_end`)."},
	{Method: "pi/compactionFailed", Params: typeOf[CompactionFailed](),
		Summary: "After every failed or cancelled compaction, the refused second recovery included (Pi's `session_compact_failed`)."},
	{Method: "pi/fileOps", Params: typeOf[FileOps](),
		Summary: "The file lists of the session's path; `stale` lists the files changed on disk since the agent last read them (checked when the session changes and every few seconds)."},
	{Method: "pi/contextUsage", Params: typeOf[ContextUsage](),
		Summary: "Pi 1.6.0's `getContextUsage`: the projected figure of \"The context and its figure\" below."},
	{Method: "pi/toolOutputCleared", Params: typeOf[ToolOutputCleared](),
		Summary: "With `clearToolOutput: true`, a hosted session over the compaction threshold had its old tool output cleared first (as pi/clearToolOutput does); `compacting` says whether a compaction follows, because the context is still above the threshold."},
	{Method: "pi/draftReady", Params: typeOf[DraftReady](),
		Summary: "A background draft is ready: the next compaction of this span is instant."},
}

// hookTable lists the requests the server sends to a client that declared hooks.
var hookTable = []Hook{
	{Method: "pi/beforeCompact", Params: typeOf[BeforeCompact](), Result: typeOf[beforeCompactAnswer](),
		Summary: "Before a compaction (Pi's `session_before_compact`)."},
	{Method: "pi/beforeTree", Params: typeOf[BeforeTree](), Result: typeOf[beforeTreeAnswer](),
		Summary: "Before a navigation (Pi's `session_before_tree`)."},
}

// methods maps every custom request to its handler.
var methods = func() map[string]func(s *Server) handlerFunc {
	m := map[string]func(s *Server) handlerFunc{}
	for _, c := range allRequests() {
		m[c.Method] = c.handler.serve
	}
	return m
}()

// allRequests is every custom request: the commands', then the others.
func allRequests() []Command {
	return append(append([]Command(nil), commandTable...), requestTable...)
}

// Requests returns the pi/* requests that have no command (for docs).
func Requests() []Command { return append([]Command(nil), requestTable...) }

// Notifications returns the custom notifications (for docs).
func Notifications() []Notification { return append([]Notification(nil), notificationTable...) }

// Hooks returns the hook requests (for docs).
func Hooks() []Hook { return append([]Hook(nil), hookTable...) }

// NotificationNames lists the custom notifications, in table order.
func NotificationNames() []string {
	out := make([]string, len(notificationTable))
	for i, n := range notificationTable {
		out[i] = n.Method
	}
	return out
}

// HookNames lists the hook requests, in table order.
func HookNames() []string {
	out := make([]string, len(hookTable))
	for i, h := range hookTable {
		out[i] = h.Method
	}
	return out
}

// Commands returns the command table (for docs and the CLI).
func Commands() []Command { return append([]Command(nil), commandTable...) }

// CommandIDs lists the executeCommand ids, in table order.
func CommandIDs() []string {
	ids := make([]string, len(commandTable))
	for i, c := range commandTable {
		ids[i] = c.ID
	}
	return ids
}

// MethodNames lists every custom request, sorted.
func MethodNames() []string {
	var out []string
	for _, c := range commandTable {
		out = append(out, c.Method)
	}
	for _, c := range requestTable {
		out = append(out, c.Method)
	}
	sort.Strings(out)
	return out
}

// method resolves a request method to its handler.
func (s *Server) method(name string) handlerFunc {
	if name == "workspace/executeCommand" {
		return s.handleExecuteCommand
	}
	if h := methods[name]; h != nil {
		return h(s)
	}
	return nil
}

// handleExecuteCommand runs a command with its single object argument; the
// workDoneToken of the request is passed on to the job.
func (s *Server) handleExecuteCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	var p executeCommandParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams("executeCommand params: " + err.Error())
	}
	var cmd *Command
	for i := range commandTable {
		if commandTable[i].ID == p.Command {
			cmd = &commandTable[i]
		}
	}
	if cmd == nil {
		return nil, invalidParams("unknown command: " + p.Command)
	}
	if len(p.Arguments) > 1 {
		return nil, invalidParams(p.Command + " takes at most one argument object")
	}
	args := json.RawMessage("{}")
	if len(p.Arguments) == 1 && string(p.Arguments[0]) != "null" {
		args = p.Arguments[0]
	}
	if len(p.WorkDoneToken) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, invalidParams(p.Command + " argument must be an object")
		}
		m["workDoneToken"] = p.WorkDoneToken
		args, _ = json.Marshal(m)
	}
	return cmd.handler.serve(s)(ctx, args)
}

// handle serves a method from a handler of its params and result types: the params are
// decoded (decodeParams) and, when the type has a validate method, checked before h runs,
// so a handler starts from params it can use; the result type is the row's (fill), so a
// row cannot declare one result and return another.
func handle[P, R any](h func(s *Server, ctx context.Context, p P) (R, error)) handler {
	return handler{result: reflect.TypeFor[R](), serve: func(s *Server) handlerFunc {
		return func(ctx context.Context, raw json.RawMessage) (any, error) {
			var p P
			if err := decodeParams(raw, &p); err != nil {
				return nil, err
			}
			if v, ok := any(&p).(interface{ validate() error }); ok {
				if err := v.validate(); err != nil {
					return nil, err
				}
			}
			r, err := h(s, ctx, p)
			if err != nil {
				return nil, err
			}
			return r, nil
		}
	}}
}

// required refuses a params field (marked ts:",required") that is empty.
func required(name, value string) error {
	if value == "" {
		return invalidParams(name + " is required")
	}
	return nil
}

// decodeParams decodes a params object strictly enough to report wrong types.
func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalidParams("invalid params: " + err.Error())
	}
	return nil
}
