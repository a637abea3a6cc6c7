package contextedit

import (
	"bytes"
	"context"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The events of a history: the entries that change the context without a reply.
const (
	EventCompaction    = "compaction"
	EventBranchSummary = "branch_summary"
	EventContextEdit   = "context_edit"
)

// Sources of a point's figure.
const (
	SourceUsage    = "usage"    // the usage Pi recorded with the reply
	SourceEstimate = "estimate" // Pi's estimate of the context at that entry
)

// SizePoint is the context's size at one entry of a path.
type SizePoint struct {
	EntryID string  `json:"entryId"`
	Tokens  float64 `json:"tokens"`
	Source  string  `json:"source"`
	// Event is the event of an event entry, nil on an assistant reply.
	Event *string `json:"event"`
	// TokensBefore is a compaction's own figure of the context it compacted.
	TokensBefore *float64 `json:"tokensBefore,omitempty"`
	// Cleared: a context edit that cleared a tool result (pi-lsp's placeholder).
	Cleared bool `json:"cleared,omitempty"`
}

// History is the size of the context along a root-first path: one point per assistant
// reply (errored and aborted ones included), with Pi's context figure of its usage
// (calculateContextTokens) when Pi counts that usage, else Pi's estimate of the context
// at the reply; and one point per compaction, branch summary and context edit, with Pi's
// estimate of the context right after it (estimateProjectedContextTokens with that
// entry as the leaf).
func History(ctx context.Context, path []*session.Entry) ([]SizePoint, error) {
	out := []SizePoint{}
	for i, e := range path {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		var event string
		switch e.Type {
		case session.TypeMessage:
			if e.Role() != session.RoleAssistant {
				continue
			}
			m, err := e.Message()
			if err != nil {
				continue
			}
			if u := session.AssistantUsage(m); u != nil {
				out = append(out, SizePoint{EntryID: e.ID, Tokens: session.CalculateContextTokens(*u), Source: SourceUsage})
				continue
			}
		case session.TypeCompaction:
			event = EventCompaction
		case session.TypeBranchSummary:
			event = EventBranchSummary
		case session.TypeContextEdit:
			event = EventContextEdit
		default:
			continue
		}
		p := SizePoint{EntryID: e.ID, Tokens: session.ProjectedContextTokens(path[:i+1]).Tokens, Source: SourceEstimate}
		if event != "" {
			p.Event = &event
		}
		switch event {
		case EventCompaction:
			before := e.Compaction().TokensBefore
			p.TokensBefore = &before
		case EventContextEdit:
			p.Cleared = bytes.Contains(e.Raw(), []byte(ClearedMarker))
		}
		out = append(out, p)
	}
	return out, nil
}
