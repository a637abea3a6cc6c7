// Package convert turns coding-agent transcripts that are not Pi's (Claude Code's JSONL
// transcripts, and the Markdown exports that wrap their content blocks) into Pi session
// files (version 3, one branch), so the checkpoint benchmark can run on real sessions no
// one here wrote.
//
// Invariant: a conversion is deterministic and loses no turn: every user text, assistant
// text, tool call and tool result of the source becomes one Pi message in the same order
// (consecutive assistant records of one reply are one assistant message), tool names and
// arguments are mapped to Pi's where Pi has the tool (bash, read, edit, write) and kept as
// they are otherwise, and every string is passed through internal/redact before it is
// written, so no credential of the source reaches the file.
package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/quality/jsonobj"
	"github.com/pi-lsp/pi-lsp/internal/redact"
)

// Block is one content block of a message in Pi's shape.
type Block struct {
	Type      string         `json:"type"`
	Text      string         `json:"text,omitempty"`
	Thinking  string         `json:"thinking,omitempty"`
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// Message is one message of the converted session.
type Message struct {
	Role       string // user, assistant, toolResult
	Blocks     []Block
	ToolCallID string // toolResult
	ToolName   string // toolResult
	IsError    bool   // toolResult
	Time       time.Time
}

// Session is a converted conversation before it is written.
type Session struct {
	Name     string // derives the ids, so the same source gives the same bytes
	Cwd      string
	Started  time.Time
	Messages []Message
}

// piTool maps a tool call of another agent to Pi's tool and arguments where Pi has the
// same tool; other tools keep their name and arguments.
func piTool(name string, input map[string]any) (string, map[string]any) {
	str := func(k string) string { s, _ := input[k].(string); return s }
	switch name {
	case "Bash", "shell", "exec_command":
		cmd := str("command")
		if cmd == "" {
			cmd = str("cmd")
		}
		args := map[string]any{"command": cmd}
		if t, ok := input["timeout"]; ok {
			args["timeout"] = t
		}
		return "bash", args
	case "Read":
		args := map[string]any{"path": str("file_path")}
		for _, k := range []string{"offset", "limit"} {
			if v, ok := input[k]; ok {
				args[k] = v
			}
		}
		return "read", args
	case "Write":
		return "write", map[string]any{"path": str("file_path"), "content": str("content")}
	case "Edit":
		return "edit", map[string]any{"path": str("file_path"), "edits": []any{map[string]any{"oldText": str("old_string"), "newText": str("new_string")}}}
	case "MultiEdit":
		var edits []any
		list, _ := input["edits"].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			o, _ := m["old_string"].(string)
			n, _ := m["new_string"].(string)
			edits = append(edits, map[string]any{"oldText": o, "newText": n})
		}
		return "edit", map[string]any{"path": str("file_path"), "edits": edits}
	case "NotebookEdit":
		return "edit", map[string]any{"path": str("notebook_path"), "edits": []any{map[string]any{"oldText": "", "newText": str("new_source")}}}
	}
	return name, input
}

// redactAny redacts every string in v.
func redactAny(v any) any { return jsjson.MapStrings(v, redact.String) }

// Bytes writes the session as a Pi session file.
func (s *Session) Bytes() []byte {
	var b bytes.Buffer
	h := fnv.New64a()
	h.Write([]byte(s.Name))
	sum := h.Sum64()
	start := s.Started
	if start.IsZero() {
		start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	id := fmt.Sprintf("%08x-%04x-7%03x-8%03x-%012x", sum>>32, sum>>16&0xffff, sum>>4&0xfff, sum&0xfff, sum&0xffffffffffff)
	line := func(v any) {
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			panic(err) // only maps, slices, strings and numbers are written
		}
		b.Write(e.Bytes())
	}
	stamp := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
	line(ordered{{"type", "session"}, {"version", 3}, {"id", id}, {"timestamp", stamp(start)}, {"cwd", s.Cwd}})
	parent := any(nil)
	clock := start
	for i, m := range s.Messages {
		if !m.Time.IsZero() && m.Time.After(clock) {
			clock = m.Time
		} else {
			clock = clock.Add(time.Second)
		}
		eid := fmt.Sprintf("%08x", fnv32(fmt.Sprintf("%s/%d", s.Name, i)))
		var msg ordered
		content := make([]any, 0, len(m.Blocks))
		for _, bl := range m.Blocks {
			switch bl.Type {
			case "text":
				content = append(content, ordered{{"type", "text"}, {"text", redact.String(bl.Text)}})
			case "thinking":
				content = append(content, ordered{{"type", "thinking"}, {"thinking", redact.String(bl.Thinking)}})
			case "toolCall":
				args := bl.Arguments
				if args == nil {
					args = map[string]any{}
				}
				content = append(content, ordered{{"type", "toolCall"}, {"id", bl.ID}, {"name", bl.Name}, {"arguments", redactAny(args)}})
			}
		}
		switch m.Role {
		case "user":
			msg = ordered{{"role", "user"}, {"content", content}, {"timestamp", clock.UnixMilli()}}
		case "assistant":
			stop := "stop"
			for _, bl := range m.Blocks {
				if bl.Type == "toolCall" {
					stop = "toolUse"
				}
			}
			msg = ordered{{"role", "assistant"}, {"content", content}, {"api", "anthropic-messages"}, {"provider", "anthropic"},
				{"model", "converted"},
				{"usage", ordered{{"input", 0}, {"output", 0}, {"cacheRead", 0}, {"cacheWrite", 0}, {"totalTokens", 0},
					{"cost", ordered{{"input", 0}, {"output", 0}, {"cacheRead", 0}, {"cacheWrite", 0}, {"total", 0}}}}},
				{"stopReason", stop}, {"timestamp", clock.UnixMilli()}}
		case "toolResult":
			msg = ordered{{"role", "toolResult"}, {"toolCallId", m.ToolCallID}, {"toolName", m.ToolName}, {"content", content},
				{"isError", m.IsError}, {"timestamp", clock.UnixMilli()}}
		default:
			continue
		}
		line(ordered{{"type", "message"}, {"id", eid}, {"parentId", parent}, {"timestamp", stamp(clock)}, {"message", msg}})
		parent = eid
	}
	return b.Bytes()
}

func fnv32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// ordered is a JSON object written in the order of its members, as Pi writes them.
type ordered []member

type member struct {
	k string
	v any
}

func (o ordered) MarshalJSON() ([]byte, error) {
	return jsonobj.Write(o, func(m member) (string, any) { return m.k, m.v })
}

// textOf is the text of a tool result's content in Claude's shapes: a string, or a list
// of blocks whose text blocks are joined (an image is named, not kept).
func textOf(v any) string {
	var parts []string
	for _, m := range blocksOf(v) {
		if t, ok := blockText(m); ok {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// blockText is the text of a text block, or "[image]" for an image block (an image is
// named, not kept); ok is false for any other block.
func blockText(m map[string]any) (text string, ok bool) {
	switch m["type"] {
	case "text":
		t, _ := m["text"].(string)
		return t, true
	case "image":
		return "[image]", true
	}
	return "", false
}

// blocksOf is the list of content blocks of Claude's content: a string is one text
// block; anything but a string or a list has none.
func blocksOf(content any) []map[string]any {
	switch c := content.(type) {
	case string:
		return []map[string]any{{"type": "text", "text": c}}
	case []any:
		out := make([]map[string]any, 0, len(c))
		for _, e := range c {
			m, _ := e.(map[string]any)
			out = append(out, m)
		}
		return out
	}
	return nil
}

// marshalPlain is json.Marshal without HTML escaping.
func marshalPlain(v any) ([]byte, error) { return jsonobj.Marshal(v) }
