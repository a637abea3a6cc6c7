package convert

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// record is one Claude Code transcript record reduced to what a conversion needs.
type record struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Cwd       string    `json:"cwd"`
	Message   struct {
		Role    string          `json:"role"`
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// builder collects Claude content blocks into Pi messages.
type builder struct {
	s     *Session
	names map[string]string // tool_use id → Pi tool name
	inRun bool              // the last message is an assistant message that may go on
}

func newBuilder(name string) *builder {
	return &builder{s: &Session{Name: name}, names: map[string]string{}}
}

// user adds a user record's content: its text blocks as one user message, each
// tool_result as a tool result.
func (b *builder) user(content any, at time.Time) {
	var texts []string
	flush := func() {
		if t := strings.TrimSpace(strings.Join(texts, "\n")); t != "" {
			b.s.Messages = append(b.s.Messages, Message{Role: "user", Blocks: []Block{{Type: "text", Text: t}}, Time: at})
			b.inRun = false
		}
		texts = nil
	}
	for _, m := range blocksOf(content) {
		switch m["type"] {
		case "text", "image":
			t, _ := blockText(m)
			texts = append(texts, t)
		case "tool_result":
			flush()
			id, _ := m["tool_use_id"].(string)
			isErr, _ := m["is_error"].(bool)
			name := b.names[id]
			if name == "" {
				name = "unknown"
			}
			b.s.Messages = append(b.s.Messages, Message{Role: "toolResult", ToolCallID: id, ToolName: name, IsError: isErr,
				Blocks: []Block{{Type: "text", Text: textOf(m["content"])}}, Time: at})
			b.inRun = false
		}
	}
	flush()
}

// assistant adds an assistant record's blocks, to the current assistant message when the
// reply goes on (Claude Code writes one record per block of a reply).
func (b *builder) assistant(content any, at time.Time) {
	var blocks []Block
	for _, m := range blocksOf(content) {
		switch m["type"] {
		case "text":
			if t, _ := m["text"].(string); strings.TrimSpace(t) != "" {
				blocks = append(blocks, Block{Type: "text", Text: t})
			}
		case "thinking":
			if t, _ := m["thinking"].(string); strings.TrimSpace(t) != "" {
				blocks = append(blocks, Block{Type: "thinking", Thinking: t})
			}
		case "tool_use":
			id, _ := m["id"].(string)
			name, _ := m["name"].(string)
			input, _ := m["input"].(map[string]any)
			pn, args := piTool(name, input)
			b.names[id] = pn
			blocks = append(blocks, Block{Type: "toolCall", ID: id, Name: pn, Arguments: args})
		}
	}
	if len(blocks) == 0 {
		return
	}
	if b.inRun {
		last := &b.s.Messages[len(b.s.Messages)-1]
		last.Blocks = append(last.Blocks, blocks...)
		return
	}
	b.s.Messages = append(b.s.Messages, Message{Role: "assistant", Blocks: blocks, Time: at})
	b.inRun = true
}

func (b *builder) finish() *Session {
	for _, m := range b.s.Messages {
		if !m.Time.IsZero() {
			b.s.Started = m.Time.Add(-time.Second)
			break
		}
	}
	return b.s
}

// ClaudeJSONL converts a Claude Code transcript (~/.claude/projects/*/<session>.jsonl):
// its user and assistant records, in file order; summaries, snapshots and system records
// are not part of the conversation.
func ClaudeJSONL(name string, data []byte) (*Session, error) {
	b := newBuilder(name)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", name, n+1, err)
		}
		n++
		if b.s.Cwd == "" && r.Cwd != "" {
			b.s.Cwd = r.Cwd
		}
		var content any
		if len(r.Message.Content) > 0 {
			if err := json.Unmarshal(r.Message.Content, &content); err != nil {
				return nil, fmt.Errorf("%s: line %d: content: %w", name, n, err)
			}
		}
		switch r.Type {
		case "user":
			b.user(content, r.Timestamp)
		case "assistant":
			b.assistant(content, r.Timestamp)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	s := b.finish()
	if len(s.Messages) == 0 {
		return nil, fmt.Errorf("%s: no conversation in the transcript", name)
	}
	return s, nil
}
