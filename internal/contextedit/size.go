package contextedit

import (
	"context"
	"sort"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Item is one entry of the projected context, with what it costs.
type Item struct {
	EntryID string `json:"entryId"`
	// Type is the entry type; Role the role of its (first) message, "custom" for a
	// custom_message, compactionSummary for a compaction.
	Type string `json:"type"`
	Role string `json:"role"`
	// ToolName is the tool of a toolResult, or the tools an assistant message calls
	// (comma-separated).
	ToolName string `json:"toolName,omitempty"`
	// Tokens is Pi's estimateTokens of the messages the entry contributes now (0 for an
	// omitted one); OriginalTokens the same for its untouched messages, when edited.
	Tokens         int    `json:"tokens"`
	OriginalTokens *int   `json:"originalTokens,omitempty"`
	Preview        string `json:"preview"`
	// Editable: an edit may name the entry (user/assistant/toolResult/custom).
	Editable bool `json:"editable"`
	// ContextEdit is "omitted" or "replaced" when the latest edit changes the entry.
	ContextEdit State `json:"contextEdit,omitempty"`
}

// Sizes is the context of a path by size.
type Sizes struct {
	LeafID string `json:"leafId"`
	// Tokens is the projected context figure (as `pi-lsp context --json` reports it).
	Tokens float64 `json:"tokens"`
	// Items are the context entries that contribute (or, omitted, would contribute)
	// messages, largest first (ties in context order).
	Items []Item `json:"messages"`
}

// previewLen bounds an item's preview (in runes).
const previewLen = 100

// BySize lists the projected context of a root-first path (Pi's leaf's path when it
// ends at the leaf) by estimated tokens, largest first. limit > 0 keeps the first limit
// items.
func BySize(ctx context.Context, path []*session.Entry, limit int) (*Sizes, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	proj := session.Project(path)
	out := &Sizes{Tokens: session.ProjectedContextTokens(path).Tokens, Items: []Item{}}
	if len(path) > 0 {
		out.LeafID = path[len(path)-1].ID
	}
	edited := map[string]bool{}
	for _, pe := range proj {
		if t, ok := pe.Entry.ContextEditTarget(); ok {
			edited[t] = true
		}
	}
	for i, pe := range proj {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		orig := session.EntryMessages(pe.Entry)
		if pe.Entry.Type == session.TypeCompaction && i > 0 {
			orig = nil // an older compaction in the kept range contributes nothing
		}
		if len(orig) == 0 {
			continue
		}
		_, editable := editableRole(pe.Entry)
		it := Item{EntryID: pe.Entry.ID, Type: pe.Entry.Type, Editable: editable}
		shown := pe.Messages
		if len(shown) == 0 {
			shown = orig
		}
		msg := shown[len(shown)-1] // a compaction's summary comes after its checkpoint
		it.Role = msg.Role
		for _, m := range pe.Messages {
			it.Tokens += session.EstimateTokens(m)
		}
		if edited[pe.Entry.ID] {
			it.ContextEdit = stateOf(pe)
			if it.ContextEdit != Unedited {
				n := 0
				for _, m := range orig {
					n += session.EstimateTokens(m)
				}
				it.OriginalTokens = &n
			}
		}
		it.ToolName = toolNames(msg)
		it.Preview = previewOf(msg)
		out.Items = append(out.Items, it)
	}
	sort.SliceStable(out.Items, func(a, b int) bool { return out.Items[a].Tokens > out.Items[b].Tokens })
	if limit > 0 && len(out.Items) > limit {
		out.Items = out.Items[:limit]
	}
	return out, nil
}

func toolNames(m *session.Message) string {
	switch m.Role {
	case session.RoleToolResult:
		return m.ToolName
	case session.RoleAssistant:
		var names []string
		for _, b := range m.Blocks() {
			if b.Type == "toolCall" {
				names = append(names, b.Name)
			}
		}
		return strings.Join(names, ",")
	}
	return ""
}

func previewOf(m *session.Message) string {
	var text string
	switch m.Role {
	case session.RoleCompactionSummary, session.RoleBranchSummary:
		text = m.SummaryText()
	case session.RoleBashExecution:
		text = "$ " + m.Bash().Command
	case session.RoleSystem:
		text = m.Text(" ")
		if text == "" {
			text = "(system prompt and tool declarations)"
		}
	default:
		text = m.Text(" ")
		if text == "" && m.Role == session.RoleAssistant {
			var calls []string
			for _, b := range m.Blocks() {
				if b.Type == "toolCall" {
					calls = append(calls, b.Name+" "+string(b.Arguments))
				}
			}
			text = strings.Join(calls, "; ")
		}
	}
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > previewLen {
		text = string(r[:previewLen-1]) + "…"
	}
	return text
}
