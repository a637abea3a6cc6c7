package session

import (
	"math"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// CompactionSettings are Pi's compaction settings.
type CompactionSettings struct {
	Enabled          bool
	ReserveTokens    int
	KeepRecentTokens int
}

// DefaultCompactionSettings are Pi's DEFAULT_COMPACTION_SETTINGS.
var DefaultCompactionSettings = CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}

// CalculateContextTokens is Pi's calculateContextTokens: totalTokens, or the sum of the
// parts when totalTokens is 0 or absent.
func CalculateContextTokens(u Usage) float64 {
	if u.TotalTokens != 0 && !math.IsNaN(u.TotalTokens) {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// AssistantUsage returns the usage of an assistant message that is neither aborted nor
// errored and counts some tokens (Pi 0.80+ ignores an all-zero usage), or nil.
func AssistantUsage(m *Message) *Usage {
	if m == nil || m.Role != RoleAssistant || m.Usage == nil {
		return nil
	}
	if m.StopReason == "aborted" || m.StopReason == "error" {
		return nil
	}
	if !(CalculateContextTokens(*m.Usage) > 0) {
		return nil
	}
	return m.Usage
}

// LastAssistantUsage is Pi's getLastAssistantUsage over entries.
func LastAssistantUsage(entries []*Entry) *Usage {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Type != TypeMessage {
			continue
		}
		m, err := entries[i].Message()
		if err != nil {
			continue
		}
		if u := AssistantUsage(m); u != nil {
			return u
		}
	}
	return nil
}

// ContextTokens is Pi's estimateContextTokens result.
type ContextTokens struct {
	Tokens         float64 `json:"tokens"`
	UsageTokens    float64 `json:"usageTokens"`
	TrailingTokens float64 `json:"trailingTokens"`
	LastUsageIndex *int    `json:"lastUsageIndex"`
}

// EstimateContextTokens is Pi's estimateContextTokens: the last valid assistant usage
// plus estimates of the messages after it, or the sum of estimates when there is none.
func EstimateContextTokens(messages []*Message) ContextTokens {
	for i := len(messages) - 1; i >= 0; i-- {
		u := AssistantUsage(messages[i])
		if u == nil {
			continue
		}
		idx := i
		ct := ContextTokens{UsageTokens: CalculateContextTokens(*u), LastUsageIndex: &idx}
		for _, m := range messages[i+1:] {
			ct.TrailingTokens += float64(EstimateTokens(m))
		}
		ct.Tokens = ct.UsageTokens + ct.TrailingTokens
		return ct
	}
	var sum float64
	for _, m := range messages {
		sum += float64(EstimateTokens(m))
	}
	return ContextTokens{Tokens: sum, TrailingTokens: sum}
}

// ShouldCompact is Pi's shouldCompact (strictly greater than window - reserve).
func ShouldCompact(contextTokens float64, contextWindow int, s CompactionSettings) bool {
	return s.Enabled && contextTokens > float64(contextWindow-s.ReserveTokens)
}

// imageChars is what Pi counts for one image (in user messages since 0.76).
const imageChars = 4800

// contentChars is Pi's estimateTextAndImageContentChars: a string's length, or the text
// blocks' lengths plus imageChars per image.
func contentChars(m *Message) int {
	if str, ok := m.StringContent(); ok {
		return jsjson.Len16(str)
	}
	chars := 0
	for _, b := range m.Blocks() {
		switch b.Type {
		case "text":
			chars += jsjson.Len16(b.Text)
		case "image":
			chars += imageChars
		}
	}
	return chars
}

// systemChars adds what a system message declares beyond its content: every non-empty
// section and the JSON of toolsAdded (toolsRemoved is not counted).
func systemChars(m *Message) int {
	chars := 0
	v, err := jsjson.Parse(m.Raw())
	if err != nil {
		return 0
	}
	if sec, ok := v.Get("sections"); ok && sec.Kind == jsjson.Object {
		for _, s := range sec.Vals {
			if s.Kind == jsjson.String {
				chars += jsjson.Len16(s.Str)
			}
		}
	}
	if add, ok := v.Get("toolsAdded"); ok {
		chars += jsjson.Len16(jsjson.Stringify(*add))
	}
	return chars
}

// EstimateTokens is Pi's estimateTokens: ceil(chars/4) with chars counted per role in
// UTF-16 code units.
func EstimateTokens(m *Message) int {
	if m == nil {
		return 0
	}
	m = m.loaded() // one read of the body, not one per accessor
	chars := 0
	switch m.Role {
	case RoleSystem:
		chars = contentChars(m) + systemChars(m)
	case RoleUser, RoleCustom, RoleToolResult:
		chars = contentChars(m)
	case RoleAssistant:
		for _, b := range m.Blocks() {
			switch b.Type {
			case "text":
				chars += jsjson.Len16(b.Text)
			case "thinking":
				chars += jsjson.Len16(b.Thinking)
			case "toolCall":
				chars += jsjson.Len16(b.Name) + b.ArgumentsLen16()
			}
		}
	case RoleBashExecution:
		chars = jsjson.Len16(m.Bash().Command) + jsjson.Len16(m.b().output)
	case RoleBranchSummary, RoleCompactionSummary:
		chars = jsjson.Len16(m.b().summary)
	default:
		return 0
	}
	return (chars + 3) / 4
}

// ArgumentsLen16 is JSON.stringify(arguments).length of a tool call, as estimateTokens
// counts it. Absent arguments stringify to undefined, whose length Pi would not survive;
// count them as 0.
func (b Block) ArgumentsLen16() int {
	if len(b.Arguments) == 0 {
		return 0
	}
	n, err := jsjson.StringifiedLen16(b.Arguments)
	if err != nil {
		return 0
	}
	return n
}
