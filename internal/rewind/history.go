package rewind

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Kind is what a tool call did to a file.
type Kind string

const (
	// KindRead is a full read: its result is the whole file as it was.
	KindRead Kind = "read"
	// KindWrite replaced (or created) the whole file.
	KindWrite Kind = "write"
	// KindEdit replaced parts of it.
	KindEdit Kind = "edit"
)

// Edit is one replacement of an edit call, as Pi 1.6.0's edit tool takes it.
type Edit struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// Change is one successful read, write or edit of a file on the path, at its tool
// result (the moment the file held what the change says).
type Change struct {
	Kind Kind
	// EntryID is the tool result's entry; Pos its place on the path, root first.
	EntryID string
	Pos     int
	// Path is the file as the call named it; Abs resolved against the header's cwd.
	Path, Abs string
	// Content: a write's content, a full read's text.
	Content string
	// Edits and Patch: an edit's replacements and the unified patch its result carries
	// (details.patch, over the file with LF line ends and no BOM).
	Edits []Edit
	Patch string
}

// Command is a shell command run on the path: the agent's bash tool call or the
// user's own `!command` (a bashExecution message).
type Command struct {
	EntryID string
	Pos     int
	Command string
}

// history is what the path says about the workspace: changes and commands in order.
type history struct {
	changes  []Change
	commands []Command
}

type rawBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Text      string          `json:"text"`
}

type rawMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"toolCallId"`
	IsError    bool            `json:"isError"`
	Details    json.RawMessage `json:"details"`
	Command    string          `json:"command"`
}

type pendingCall struct {
	name string
	args json.RawMessage
}

// historyOf reads the changes of path (root first) whose files resolve against cwd.
func historyOf(path []*session.Entry, cwd string) history {
	var h history
	calls := map[string]pendingCall{}
	for pos, e := range path {
		if e.Type != "message" {
			continue
		}
		var m rawMessage
		if json.Unmarshal(e.Raw(), &struct {
			M *rawMessage `json:"message"`
		}{&m}) != nil {
			continue
		}
		switch m.Role {
		case "assistant":
			var blocks []rawBlock
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b.Type == "toolCall" && b.ID != "" {
					calls[b.ID] = pendingCall{b.Name, b.Arguments}
				}
			}
		case "bashExecution":
			h.commands = append(h.commands, Command{EntryID: e.ID, Pos: pos, Command: m.Command})
		case "toolResult":
			c, ok := calls[m.ToolCallID]
			if !ok || m.IsError {
				continue
			}
			delete(calls, m.ToolCallID)
			if c.name == "bash" {
				var a struct {
					Command string `json:"command"`
				}
				if json.Unmarshal(c.args, &a) == nil && a.Command != "" {
					h.commands = append(h.commands, Command{EntryID: e.ID, Pos: pos, Command: a.Command})
				}
				continue
			}
			if ch, ok := changeOf(c, m); ok {
				ch.EntryID, ch.Pos, ch.Abs = e.ID, pos, resolve(ch.Path, cwd)
				h.changes = append(h.changes, ch)
			}
		}
	}
	return h
}

// changeOf is the change a successful read, write or edit call made.
func changeOf(c pendingCall, res rawMessage) (Change, bool) {
	switch c.name {
	case "write":
		var a struct {
			Path    *string `json:"path"`
			Content *string `json:"content"`
		}
		if json.Unmarshal(c.args, &a) != nil || a.Path == nil || a.Content == nil {
			return Change{}, false
		}
		return Change{Kind: KindWrite, Path: *a.Path, Content: *a.Content}, true
	case "edit":
		p, edits, ok := editArgs(c.args)
		if !ok {
			return Change{}, false
		}
		var d struct {
			Patch string `json:"patch"`
		}
		_ = json.Unmarshal(res.Details, &d)
		return Change{Kind: KindEdit, Path: p, Edits: edits, Patch: d.Patch}, true
	case "read":
		var a struct {
			Path   *string         `json:"path"`
			Offset json.RawMessage `json:"offset"`
			Limit  json.RawMessage `json:"limit"`
		}
		if json.Unmarshal(c.args, &a) != nil || a.Path == nil {
			return Change{}, false
		}
		// A read shows the whole file only from its first line, without a limit and
		// without truncation (its details then carry none).
		if !absentOr(a.Offset, "0", "1") || !absentOr(a.Limit) {
			return Change{}, false
		}
		var d struct {
			Truncation json.RawMessage `json:"truncation"`
		}
		_ = json.Unmarshal(res.Details, &d)
		if !absentOr(d.Truncation) {
			return Change{}, false
		}
		var blocks []rawBlock
		if json.Unmarshal(res.Content, &blocks) != nil || len(blocks) != 1 || blocks[0].Type != "text" {
			return Change{}, false // an image, or nothing
		}
		return Change{Kind: KindRead, Path: *a.Path, Content: blocks[0].Text}, true
	}
	return Change{}, false
}

// absentOr: raw is missing, null, or one of the given JSON texts.
func absentOr(raw json.RawMessage, values ...string) bool {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return true
	}
	for _, v := range values {
		if s == v {
			return true
		}
	}
	return false
}

// editArgs reads an edit call's arguments as Pi 1.6.0's prepareEditArguments does:
// edits as an array, as a JSON string of one, or as a single object, and the legacy
// top-level oldText/newText appended.
func editArgs(args json.RawMessage) (string, []Edit, bool) {
	var a struct {
		Path    *string         `json:"path"`
		Edits   json.RawMessage `json:"edits"`
		OldText *string         `json:"oldText"`
		NewText *string         `json:"newText"`
	}
	if json.Unmarshal(args, &a) != nil || a.Path == nil {
		return "", nil, false
	}
	raw := a.Edits
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var edits []Edit
	if len(raw) > 0 && strings.TrimSpace(string(raw))[0] == '[' {
		var list []*struct {
			OldText *string `json:"oldText"`
			NewText *string `json:"newText"`
		}
		if json.Unmarshal(raw, &list) != nil {
			return "", nil, false
		}
		for _, e := range list {
			if e == nil || e.OldText == nil || e.NewText == nil {
				return "", nil, false
			}
			edits = append(edits, Edit{*e.OldText, *e.NewText})
		}
	} else if len(raw) > 0 {
		var one struct {
			OldText *string `json:"oldText"`
			NewText *string `json:"newText"`
		}
		if json.Unmarshal(raw, &one) == nil && one.OldText != nil && one.NewText != nil {
			edits = append(edits, Edit{*one.OldText, *one.NewText})
		}
	}
	if a.OldText != nil && a.NewText != nil {
		edits = append(edits, Edit{*a.OldText, *a.NewText})
	}
	return *a.Path, edits, len(edits) > 0
}

var unicodeSpaces = regexp.MustCompile("[\u00A0\u2000-\u200A\u202F\u205F\u3000]")

// resolve is Pi 1.6.0's resolveToCwd: a leading @ dropped, Unicode spaces made plain,
// ~ expanded, and a relative path joined to cwd.
func resolve(p, cwd string) string {
	p = unicodeSpaces.ReplaceAllString(p, " ")
	p = strings.TrimPrefix(p, "@")
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}
