package service

import (
	"fmt"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Entry descriptions are one read model: the CLI's tree, undo-compaction's side branch
// in the CLI and the server, and any front end that names an entry in a line take them
// from here, so an entry reads the same wherever it is named.

// Describe is a short description of an entry on one line: its role or kind and the
// start of what it says (an assistant's tool calls named, an error said as such).
func Describe(e *session.Entry) string {
	return OneLine(describe(e), describeWidth)
}

// describeWidth is the most runes a description holds.
const describeWidth = 80

func describe(e *session.Entry) string {
	switch e.Type {
	case session.TypeMessage:
		m, err := e.Message()
		if err != nil {
			return "message (unreadable)"
		}
		switch m.Role {
		case session.RoleAssistant:
			var calls []string
			for _, b := range m.Blocks() {
				if b.Type == "toolCall" {
					calls = append(calls, b.Name)
				}
			}
			t := m.Text(" ")
			if len(calls) > 0 {
				t = strings.TrimSpace(t + " [" + strings.Join(calls, ", ") + "]")
			}
			if m.StopReason == "error" {
				t = "error: " + m.ErrorMessage()
			}
			return "assistant: " + t
		case session.RoleToolResult:
			return "tool " + m.ToolName + ": " + m.Text(" ")
		case session.RoleBashExecution:
			return "bash: " + m.Bash().Command
		}
		return m.Role + ": " + m.Text(" ")
	case session.TypeCompaction:
		c := e.Compaction()
		return fmt.Sprintf("compaction (kept from %s, %d tokens before)", c.FirstKeptEntryID, int(c.TokensBefore))
	case session.TypeBranchSummary:
		return "branch summary: " + e.BranchSummary().Summary
	case session.TypeLabel:
		l := e.Label()
		if l.Label == "" {
			return "label cleared on " + l.TargetID
		}
		return fmt.Sprintf("label %q on %s", l.Label, l.TargetID)
	case session.TypeModelChange:
		return "model: " + e.StringField("provider") + "/" + e.StringField("modelId")
	case session.TypeThinkingLevelChange:
		return "thinking: " + e.StringField("thinkingLevel")
	case session.TypeSessionInfo:
		return "name: " + e.StringField("name")
	case session.TypeCustom, session.TypeCustomMessage:
		return e.Type + ": " + e.StringField("customType")
	}
	return e.Type
}

// OneLine folds s's white space to single spaces and cuts it to n runes, an ellipsis
// last when cut.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// SideEntry is an entry an undone compaction leaves on a side branch.
type SideEntry struct {
	Entry       *session.Entry
	Description string
}

// sideBranch is what an undo of compaction leaves behind: the entries written after the
// undone compaction on the path it undid from (from oldLeaf in ix, the session as the
// undo read it), oldest first; the last is where navigating returns to them.
func sideBranch(ix *session.Index, oldLeaf, compaction string) []SideEntry {
	out := []SideEntry{}
	after := false
	for _, e := range ix.Path(oldLeaf) {
		if after {
			out = append(out, SideEntry{Entry: e, Description: Describe(e)})
		}
		after = after || e.ID == compaction
	}
	return out
}
