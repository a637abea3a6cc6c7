package lsptest

import (
	"encoding/json"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
)

// Typed calls: each sends one pi/* request (params as the protocol names them; see
// internal/rpc/protocol_types.go) and decodes the answer into the result type the server
// encodes it from, so tests read fields instead of probing a map. A JSON-RPC error comes
// back as *CallError, an answer that does not decode as an error naming the method.

// CallFor sends a request and decodes its answer into an R.
func CallFor[R any](e *Env, method string, params any) (R, error) {
	var out R
	raw, err := e.Call(method, params)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("%s answered %s: %w", method, Trunc(raw), err)
	}
	return out, nil
}

// Command sends workspace/executeCommand for command with the given arguments (none:
// an empty list).
func (e *Env) Command(command string, args ...any) (json.RawMessage, error) {
	if args == nil {
		args = []any{}
	}
	return e.Call("workspace/executeCommand", map[string]any{"command": command, "arguments": args})
}

// CompactAnswer is any answer of pi/compact and pi/commitCompaction: a compaction
// pi-lsp wrote (rpc.Compacted, whose tokensAfter is always set), one a live pi made
// (rpc.CompactedViaPi, Via "pi"), or rpc.NothingToCompact.
type CompactAnswer struct {
	rpc.CompactedViaPi
	Audit            compaction.Audit `json:"audit"`
	NothingToCompact bool             `json:"nothingToCompact"`
	Reason           string           `json:"reason"`
}

// NavigateAnswer is any answer of pi/navigate: rpc.Navigated, rpc.NavigateCancelled
// (Cancelled) or rpc.NavigatedViaPi (Via "pi").
type NavigateAnswer struct {
	rpc.Navigated
	Cancelled bool   `json:"cancelled"`
	Via       string `json:"via"`
	PID       int    `json:"pid"`
}

// Compact is pi/compact.
func (e *Env) Compact(params any) (CompactAnswer, error) {
	return CallFor[CompactAnswer](e, "pi/compact", params)
}

// CommitCompaction is pi/commitCompaction.
func (e *Env) CommitCompaction(params any) (CompactAnswer, error) {
	return CallFor[CompactAnswer](e, "pi/commitCompaction", params)
}

// PreviewCompaction is pi/previewCompaction (a preview that finds nothing to compact
// does not decode into rpc.CompactionPreview's fields: use CallFor for it).
func (e *Env) PreviewCompaction(params any) (rpc.CompactionPreview, error) {
	return CallFor[rpc.CompactionPreview](e, "pi/previewCompaction", params)
}

// Navigate is pi/navigate.
func (e *Env) Navigate(params any) (NavigateAnswer, error) {
	return CallFor[NavigateAnswer](e, "pi/navigate", params)
}

// PreviewBranchSummary is pi/previewBranchSummary.
func (e *Env) PreviewBranchSummary(params any) (rpc.BranchSummaryPreview, error) {
	return CallFor[rpc.BranchSummaryPreview](e, "pi/previewBranchSummary", params)
}

// Tree is pi/tree in its nested form (params without flat).
func (e *Env) Tree(params any) (rpc.TreeResult, error) {
	return CallFor[rpc.TreeResult](e, "pi/tree", params)
}

// FlatTree is pi/tree with flat set in params.
func (e *Env) FlatTree(params any) (rpc.FlatTreeResult, error) {
	return CallFor[rpc.FlatTreeResult](e, "pi/tree", params)
}

// Context is pi/context.
func (e *Env) Context(params any) (rpc.ContextResult, error) {
	return CallFor[rpc.ContextResult](e, "pi/context", params)
}

// ContextBySize is pi/contextBySize.
func (e *Env) ContextBySize(params any) (rpc.ContextBySizeResult, error) {
	return CallFor[rpc.ContextBySizeResult](e, "pi/contextBySize", params)
}

// EditContext is pi/editContext.
func (e *Env) EditContext(params any) (rpc.EditContextResult, error) {
	return CallFor[rpc.EditContextResult](e, "pi/editContext", params)
}

// Append is pi/append.
func (e *Env) Append(params any) (rpc.AppendResult, error) {
	return CallFor[rpc.AppendResult](e, "pi/append", params)
}

// Str is *p, or "" for a nil p (an id the answer gives as null).
func Str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ClearToolOutput is pi/clearToolOutput.
func (e *Env) ClearToolOutput(params any) (rpc.ClearToolOutputResult, error) {
	return CallFor[rpc.ClearToolOutputResult](e, "pi/clearToolOutput", params)
}

// ContextBreakdown is pi/contextBreakdown.
func (e *Env) ContextBreakdown(params any) (rpc.ContextBreakdownResult, error) {
	return CallFor[rpc.ContextBreakdownResult](e, "pi/contextBreakdown", params)
}
