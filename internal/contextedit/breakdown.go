package contextedit

import (
	"context"
	"sort"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The context at a glance: what fills the context of a path, by kind of content, and
// how its size went along the path. Every figure is Pi 1.6.0's estimateTokens of the
// messages of Pi's own projection (buildSessionContext), or the usage Pi recorded: the
// kinds add up to the total, and the total is Pi's estimate of the whole context.

// The kinds of the breakdown. A tool result's kind is ToolResultKind(tool name).
const (
	KindSystem            = "system" // the system prompt (a compaction's replayed system message included)
	KindUser              = "user"
	KindAssistant         = "assistant" // an assistant message's text blocks
	KindThinking          = "thinking"
	KindToolCall          = "toolCall"
	KindCompactionSummary = "compactionSummary"
	KindBranchSummary     = "branchSummary"
	KindCustom            = "custom"
	KindBashExecution     = "bashExecution"
	toolResultPrefix      = "toolResult:"
)

// ToolResultKind is the kind of a tool's results.
func ToolResultKind(tool string) string { return toolResultPrefix + tool }

// kindOrder is the order kinds are listed in; tool results come after the tool calls,
// largest first.
var kindOrder = []string{KindSystem, KindUser, KindAssistant, KindThinking, KindToolCall, "",
	KindCompactionSummary, KindBranchSummary, KindCustom, KindBashExecution}

// KindEntry is what one entry contributes to one kind.
type KindEntry struct {
	EntryID string `json:"entryId"`
	Tokens  int    `json:"tokens"`
	Preview string `json:"preview"`
}

// KindTokens is one kind of the breakdown: its tokens, how many entries contribute to
// it, and the largest of them.
type KindTokens struct {
	Kind    string `json:"kind"`
	Tokens  int    `json:"tokens"`
	Entries int    `json:"entries"`
	// Largest are the entries that contribute most, largest first (at most
	// LargestPerKind; for system, each system message's own estimate, which the
	// replayed prompt folds together).
	Largest []KindEntry `json:"largest"`
}

// LargestPerKind bounds KindTokens.Largest.
const LargestPerKind = 5

// Breakdown is the context of a path by kind.
type Breakdown struct {
	LeafID string
	// Total is the sum of Pi's estimateTokens over the context's messages, the system
	// messages counted once as their replay (Pi's estimate when no usage can be trusted).
	Total int
	// UsageTokens is Pi's figure resting on the last reply's usage (usage plus the
	// estimate of what follows it), nil when that usage is stale or absent.
	UsageTokens *float64
	Kinds       []KindTokens
}

// estimator is estimateTokens memoized by message: the history asks for the same
// messages once per point.
type estimator map[*session.Message]int

func (e estimator) of(m *session.Message) int {
	if n, ok := e[m]; ok {
		return n
	}
	n := session.EstimateTokens(m)
	e[m] = n
	return n
}

// BreakdownOf is the breakdown of a root-first path (Pi's leaf's path when it ends at
// the leaf).
func BreakdownOf(ctx context.Context, path []*session.Entry) (*Breakdown, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	proj := session.ProjectPath(path)
	out := &Breakdown{}
	if len(path) > 0 {
		out.LeafID = path[len(path)-1].ID
	}
	if t := session.ProjectedTokens(path, proj); t.LastUsageIndex != nil {
		v := t.Tokens
		out.UsageTokens = &v
	}
	type acc struct {
		tokens int
		parts  []KindEntry
	}
	kinds := map[string]*acc{}
	add := func(kind string, e *session.Entry, m *session.Message, tokens int) {
		a := kinds[kind]
		if a == nil {
			a = &acc{}
			kinds[kind] = a
		}
		a.tokens += tokens
		if n := len(a.parts); n > 0 && a.parts[n-1].EntryID == e.ID {
			a.parts[n-1].Tokens += tokens
			return
		}
		a.parts = append(a.parts, KindEntry{EntryID: e.ID, Tokens: tokens, Preview: previewOf(m)})
	}
	est := estimator{}
	systemSeen := false
	for i, pe := range proj.Entries {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for _, m := range pe.Messages {
			switch m.Role {
			case session.RoleSystem:
				// The replayed system message is counted once, below; each entry is
				// listed with its own message's estimate.
				systemSeen = true
				add(KindSystem, pe.Entry, m, est.of(m))
			case session.RoleAssistant:
				text, thinking, calls := SplitAssistant(m)
				for _, s := range []struct {
					kind   string
					tokens int
				}{{KindAssistant, text}, {KindThinking, thinking}, {KindToolCall, calls}} {
					if s.tokens > 0 {
						add(s.kind, pe.Entry, m, s.tokens)
					}
				}
			case session.RoleToolResult:
				add(ToolResultKind(m.ToolName), pe.Entry, m, est.of(m))
			case session.RoleUser, session.RoleCompactionSummary, session.RoleBranchSummary,
				session.RoleCustom, session.RoleBashExecution:
				add(m.Role, pe.Entry, m, est.of(m))
			}
		}
	}
	if systemSeen {
		// Pi counts the system messages as their replay: one message of the current
		// prompt and tools.
		kinds[KindSystem].tokens = est.of(session.CurrentSystemMessage(proj.Messages))
	}
	var tools []string
	for k := range kinds {
		if strings.HasPrefix(k, toolResultPrefix) {
			tools = append(tools, k)
		}
	}
	sort.Slice(tools, func(a, b int) bool {
		ta, tb := kinds[tools[a]].tokens, kinds[tools[b]].tokens
		if ta != tb {
			return ta > tb
		}
		return tools[a] < tools[b]
	})
	out.Kinds = []KindTokens{}
	emit := func(k string) {
		a := kinds[k]
		if a == nil {
			return
		}
		parts := append([]KindEntry(nil), a.parts...)
		sort.SliceStable(parts, func(x, y int) bool { return parts[x].Tokens > parts[y].Tokens })
		if len(parts) > LargestPerKind {
			parts = parts[:LargestPerKind]
		}
		out.Kinds = append(out.Kinds, KindTokens{Kind: k, Tokens: a.tokens, Entries: len(a.parts), Largest: parts})
		out.Total += a.tokens
	}
	for _, k := range kindOrder {
		if k == "" {
			for _, t := range tools {
				emit(t)
			}
			continue
		}
		emit(k)
	}
	return out, nil
}

// SplitAssistant splits Pi's estimate of an assistant message over its text, thinking
// and tool-call blocks by their share of the characters Pi counts (UTF-16 code units;
// a tool call's name and JSON arguments): the three add up to estimateTokens of the
// message. Each gets the floor of its share, and what is left goes to the largest
// remainders (ties: text, thinking, tool calls).
func SplitAssistant(m *session.Message) (text, thinking, calls int) {
	var chars [3]int
	for _, b := range m.Blocks() {
		switch b.Type {
		case "text":
			chars[0] += jsjson.Len16(b.Text)
		case "thinking":
			chars[1] += jsjson.Len16(b.Thinking)
		case "toolCall":
			chars[2] += jsjson.Len16(b.Name) + b.ArgumentsLen16()
		}
	}
	total := chars[0] + chars[1] + chars[2]
	if total == 0 {
		return 0, 0, 0
	}
	est := (total + 3) / 4 // Pi's Math.ceil(chars / 4)
	var share, rem [3]int
	left := est
	for i, c := range chars {
		share[i] = est * c / total
		rem[i] = est * c % total
		left -= share[i]
	}
	for ; left > 0; left-- {
		best := -1
		for i := range rem {
			if chars[i] > 0 && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		share[best]++
		rem[best] = -1
	}
	return share[0], share[1], share[2]
}
