package session

import (
	"encoding/json"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// The wrappers Pi puts around summaries when it sends them to the LLM.
const (
	CompactionSummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	CompactionSummarySuffix = "\n</summary>"
	BranchSummaryPrefix     = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
	BranchSummarySuffix     = "</summary>"
)

// BashExecutionText is Pi's bashExecutionToText.
func BashExecutionText(m *Message) string {
	x := m.Bash()
	var b strings.Builder
	b.WriteString("Ran `" + x.Command + "`\n")
	if out := m.OutputText(); out != "" {
		b.WriteString("```\n" + out + "\n```")
	} else {
		b.WriteString("(no output)")
	}
	if x.Cancelled {
		b.WriteString("\n\n(command cancelled)")
	} else if x.ExitCode != nil && *x.ExitCode != 0 {
		b.WriteString("\n\nCommand exited with code " + jsjson.FormatNumber(*x.ExitCode))
	}
	if x.Truncated && x.FullOutputPath != "" {
		b.WriteString("\n\n[Output truncated. Full output: " + x.FullOutputPath + "]")
	}
	return b.String()
}

func userText(text string, ts json.RawMessage) *Message {
	o := newObject()
	o.str("role", RoleUser)
	var c strings.Builder
	c.WriteString(`[{"type":"text","text":`)
	jsjson.Quote(&c, text)
	c.WriteString(`}]`)
	o.raw("content", json.RawMessage(c.String()))
	o.raw("timestamp", ts)
	m := NewBlocksMessage(RoleUser, []Block{{Type: "text", Text: text}})
	m.body.raw, m.Timestamp = o.done(), ts
	return m
}

// ConvertToLLM is Pi's convertToLlm: user, assistant, tool results and (Pi 0.86+) system
// messages pass through;
// bash executions (unless excluded), custom messages and summaries become user messages.
func ConvertToLLM(messages []*Message) []*Message {
	out := make([]*Message, 0, len(messages))
	for _, m := range messages {
		switch m.Role {
		case RoleUser, RoleAssistant, RoleToolResult, RoleSystem:
			out = append(out, m)
		case RoleBashExecution:
			if !m.Bash().ExcludeFromContext {
				out = append(out, userText(BashExecutionText(m), m.Timestamp))
			}
		case RoleCustom:
			if str, ok := m.StringContent(); ok {
				out = append(out, userText(str, m.Timestamp))
			} else {
				u := NewBlocksMessage(RoleUser, m.Blocks())
				u.Timestamp = m.Timestamp
				out = append(out, u)
			}
		case RoleBranchSummary:
			out = append(out, userText(BranchSummaryPrefix+m.SummaryText()+BranchSummarySuffix, m.Timestamp))
		case RoleCompactionSummary:
			out = append(out, userText(CompactionSummaryPrefix+m.SummaryText()+CompactionSummarySuffix, m.Timestamp))
		}
	}
	return out
}
