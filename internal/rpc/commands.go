package rpc

import (
	"context"
	"encoding/json"
	"sort"
)

// handlerFunc serves one custom method. params is the raw params object (may be nil).
type handlerFunc func(ctx context.Context, params json.RawMessage) (any, error)

// Command is one row of the command table. The table drives executeCommandProvider,
// the custom pi/* methods, docs/protocol.md, the VS Code palette titles and the Neovim
// user commands; a test keeps them in agreement.
type Command struct {
	ID      string // workspace/executeCommand id
	Method  string // the equivalent custom request
	Title   string // VS Code palette title
	Neovim  string // Neovim user command
	Summary string // one line for docs
	// Params and Result are TypeScript-style shapes for docs/protocol.md.
	Params string
	Result string
	// Long marks jobs that report $/progress.
	Long    bool
	handler func(s *Server) handlerFunc
}

var commandTable = []Command{
	{ID: "pi.compact", Method: "pi/compact", Title: "Pi: Compact Session", Neovim: "PiCompact", Long: true,
		Summary: "Summarize older history into a compaction entry; the recent suffix is kept verbatim. For a session a live pi with pi-lsp's bridge holds, that pi compacts (with its model and hooks) and the answer says `via: \"pi\"`.",
		Params:  "{ session?: string; instructions?: string; leafId?: string; force?: boolean; workDoneToken?: ProgressToken }",
		Result:  "{ entry: CompactionEntry; tokensBefore: number; tokensAfter: number; audit: Audit } | { entry: CompactionEntry; tokensBefore: number; tokensAfter?: number; via: \"pi\"; pid: number } | { nothingToCompact: true; reason: string; via?: \"pi\" }",
		handler: func(s *Server) handlerFunc { return s.handleCompact }},
	{ID: "pi.navigate", Method: "pi/navigate", Title: "Pi: Navigate Session Tree", Neovim: "PiNavigate", Long: true,
		Summary: "Move the leaf to another entry, optionally summarizing the branch left behind. For a session a live pi with pi-lsp's bridge holds, that pi navigates (`via: \"pi\"`); a previewed `summary` cannot be committed that way.",
		Params:  "{ session?: string; targetId: string; summarize?: boolean; instructions?: string; label?: string; summary?: string; expectLeafId?: string; force?: boolean; workDoneToken?: ProgressToken }",
		Result:  "{ leafId: string | null; summaryEntry?: BranchSummaryEntry; editorText?: string; cancelled?: boolean; via?: \"pi\"; pid?: number }",
		handler: func(s *Server) handlerFunc { return s.handleNavigate }},
	{ID: "pi.undoCompaction", Method: "pi/undoCompaction", Title: "Pi: Undo Compaction", Neovim: "PiUndoCompaction",
		Summary: "Make the full pre-compaction context active again (navigates to the parent of the newest compaction; nothing is deleted).",
		Params:  "{ session?: string; force?: boolean }",
		Result:  "{ leafId: string | null; compactionId: string }",
		handler: func(s *Server) handlerFunc { return s.handleUndoCompaction }},
	{ID: "pi.label", Method: "pi/label", Title: "Pi: Label Entry", Neovim: "PiLabel",
		Summary: "Set, or clear with an empty label, the label of an entry (through `pi.setLabel` in a live pi with pi-lsp's bridge: `via: \"pi\"`).",
		Params:  "{ session?: string; entryId: string; label?: string; force?: boolean }",
		Result:  "{ entryId: string; label?: string; via?: \"pi\"; pid?: number }",
		handler: func(s *Server) handlerFunc { return s.handleLabel }},
	{ID: "pi.pin", Method: "pi/pin", Title: "Pi: Pin Entry", Neovim: "PiPin",
		Summary: "Pin an entry (or unpin it with pinned: false): a pinned user message is quoted verbatim in every later summary, and a summary that drops it is refused unless accepted.",
		Params:  "{ session?: string; entryId: string; pinned?: boolean; force?: boolean }",
		Result:  "{ entryId: string; pinned: boolean }",
		handler: func(s *Server) handlerFunc { return s.handlePin }},
	{ID: "pi.editContext", Method: "pi/editContext", Title: "Pi: Edit Context", Neovim: "PiEditContext",
		Summary: "Hide (omit), replace the content of, or restore one user, assistant, toolResult or custom message in the LLM context without touching history: appends the context_edit entry Pi 1.6.0 writes. Refused (nothing written) for a target that is not found, not on the active branch, not editable, summarized away by compaction, or (restore) not edited.",
		Params:  "{ session?: string; entryId: string; action: \"omit\" | \"replace\" | \"restore\"; text?: string; force?: boolean }",
		Result:  "{ session: string; entry: ContextEditEntry; tokensBefore: number; tokensAfter: number }",
		handler: func(s *Server) handlerFunc { return s.handleEditContext }},
	{ID: "pi.contextBySize", Method: "pi/contextBySize", Title: "Pi: Context by Size", Neovim: "PiContextBySize",
		Summary: "The messages of the current context by estimated tokens, largest first, with their edit state (what to hide or trim).",
		Params:  "{ session?: string; limit?: number }",
		Result:  "{ session: string; leafId: string | null; tokens: number | null; contextWindow: number; percent: number | null; projectedTokens: number; messages: ContextItem[] }",
		handler: func(s *Server) handlerFunc { return s.handleContextBySize }},
	{ID: "pi.tree", Method: "pi/tree", Title: "Pi: Show Session Tree", Neovim: "PiTree",
		Summary: "The entry tree of the session with the leaf and its path marked; `flat: true` gives the nodes in depth-first order with their parent and depth instead of nested children (no nesting depth for long sessions), pageable with offset and limit.",
		Params:  "{ session?: string; flat?: boolean; offset?: number; limit?: number }",
		Result:  "{ session: string; leafId: string | null; roots: TreeNode[] } | { session: string; leafId: string | null; total: number; offset: number; nodes: FlatNode[] }",
		handler: func(s *Server) handlerFunc { return s.handleTree }},
	{ID: "pi.sessions", Method: "pi/sessions", Title: "Pi: List Sessions", Neovim: "PiSessions",
		Summary: "The sessions of the workspace, newest first.",
		Params:  "{ cwd?: string }",
		Result:  "{ current?: string; dir: string; sessions: SessionInfo[] }",
		handler: func(s *Server) handlerFunc { return s.handleSessions }},
	{ID: "pi.selectSession", Method: "pi/selectSession", Title: "Pi: Select Session", Neovim: "PiSessions",
		Summary: "Make a session file the current one.",
		Params:  "{ path: string }",
		Result:  "{ session: string }",
		handler: func(s *Server) handlerFunc { return s.handleSelectSession }},
	{ID: "pi.files", Method: "pi/files", Title: "Pi: Show Files", Neovim: "PiFiles",
		Summary: "Files read and modified by the agent on the current path.",
		Params:  "{ session?: string }",
		Result:  "{ session: string; readFiles: string[]; modifiedFiles: string[] }",
		handler: func(s *Server) handlerFunc { return s.handleFiles }},
	{ID: "pi.context", Method: "pi/context", Title: "Pi: Show Context", Neovim: "PiContext",
		Summary: "What the LLM would be sent now: message count, token usage and the last compaction.",
		Params:  "{ session?: string }",
		Result:  "{ session: string; leafId: string | null; messageCount: number; tokens: number | null; contextWindow: number; percent: number | null; lastCompaction?: { id: string; summary: string; tokensBefore: number } }",
		handler: func(s *Server) handlerFunc { return s.handleContext }},
}

// customMethods are pi/* requests that have no command.
var customMethods = []string{"pi/append", "pi/previewCompaction", "pi/commitCompaction", "pi/previewBranchSummary"}

// serverNotifications are the custom notifications the server sends.
var serverNotifications = []string{"pi/sessionChanged", "pi/compactionStart", "pi/compactionEnd", "pi/fileOps", "pi/contextUsage", "pi/draftReady"}

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
	out = append(out, customMethods...)
	sort.Strings(out)
	return out
}

// method resolves a request method to its handler.
func (s *Server) method(name string) handlerFunc {
	if name == "workspace/executeCommand" {
		return s.handleExecuteCommand
	}
	for _, c := range commandTable {
		if c.Method == name {
			return c.handler(s)
		}
	}
	switch name {
	case "pi/append":
		return s.handleAppend
	case "pi/previewCompaction":
		return s.handlePreviewCompaction
	case "pi/commitCompaction":
		return s.handleCommitCompaction
	case "pi/previewBranchSummary":
		return s.handlePreviewBranchSummary
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
	return cmd.handler(s)(ctx, args)
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
