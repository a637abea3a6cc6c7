package compaction

import (
	"strconv"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// ToolResultMaxChars is how much of a tool result Pi keeps in a summary request.
const ToolResultMaxChars = 2000

func truncateForSummary(text string, max int) string {
	n := jsjson.Len16(text)
	if n <= max {
		return text
	}
	return jsjson.SliceHead16(text, max) + "\n\n[... " + strconv.Itoa(n-max) + " more characters truncated]"
}

// Serialize is Pi 1.6.0's serializeConversation over LLM messages (call
// session.ConvertToLLM first): one labelled part per message, joined by blank lines.
// Thinking is left out (Pi 1.2+), and a tool result with string content is serialized.
func Serialize(messages []*session.Message) string {
	var parts []string
	for _, m := range messages {
		switch m.Role {
		case session.RoleUser:
			if text := m.Text(""); text != "" {
				parts = append(parts, "[User]: "+text)
			}
		case session.RoleAssistant:
			var texts, calls []string
			hasText := false
			for _, b := range m.Blocks() {
				switch b.Type {
				case "text":
					texts, hasText = append(texts, b.Text), true
				case "toolCall":
					calls = append(calls, b.Name+"("+formatArgs(b)+")")
				}
			}
			if hasText {
				parts = append(parts, "[Assistant]: "+strings.Join(texts, "\n"))
			}
			if len(calls) > 0 {
				parts = append(parts, "[Assistant tool calls]: "+strings.Join(calls, "; "))
			}
		case session.RoleToolResult:
			if text := m.Text(""); text != "" {
				parts = append(parts, "[Tool result]: "+truncateForSummary(text, ToolResultMaxChars))
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// formatArgs renders k1=<JSON>, k2=<JSON> in V8 key order.
func formatArgs(b session.Block) string {
	v, err := jsjson.Parse(b.Arguments)
	if err != nil || v.Kind != jsjson.Object {
		return ""
	}
	pairs := make([]string, len(v.Keys))
	for i, k := range v.Keys {
		pairs[i] = k + "=" + jsjson.Stringify(v.Vals[i])
	}
	return strings.Join(pairs, ", ")
}

// SerializeAgentMessages converts AgentMessages for the LLM and serializes them.
func SerializeAgentMessages(messages []*session.Message) string {
	return Serialize(session.ConvertToLLM(messages))
}
