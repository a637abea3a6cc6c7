package session

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// Message roles. The first three are what an LLM sees; the rest are Pi's own.
const (
	RoleUser              = "user"
	RoleAssistant         = "assistant"
	RoleToolResult        = "toolResult"
	RoleBashExecution     = "bashExecution"
	RoleCustom            = "custom"
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
)

// Usage is an assistant message's token usage.
type Usage struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CacheRead   float64 `json:"cacheRead"`
	CacheWrite  float64 `json:"cacheWrite"`
	TotalTokens float64 `json:"totalTokens"`
}

// Block is one content block (text, thinking, toolCall, image).
type Block struct {
	Type      string
	Text      string
	Thinking  string
	Name      string          // toolCall
	ID        string          // toolCall
	Arguments json.RawMessage // toolCall, raw JSON
}

// Message is a Pi AgentMessage. Raw is the JSON Pi would produce for it; the other fields
// are the decoded parts the algorithms need.
type Message struct {
	Role string
	Raw  json.RawMessage

	// Content: exactly one of ContentString (when IsString) or Blocks.
	IsString      bool
	ContentString string
	Blocks        []Block

	Provider, Model, StopReason, ErrorMessage string
	ProviderRaw, ModelRaw                     json.RawMessage
	Usage                                     *Usage

	ToolCallID, ToolName string
	IsError              bool

	Command, Output    string
	ExitCode           *float64
	Cancelled          bool
	Truncated          bool
	FullOutputPath     string
	ExcludeFromContext bool

	CustomType string

	Summary      string
	TokensBefore float64
	FromID       string
	Timestamp    json.RawMessage
}

// DecodeMessage decodes an AgentMessage from its JSON. Fields of the wrong JSON type are
// treated as absent; nothing here panics on hostile input.
func DecodeMessage(raw json.RawMessage) (*Message, error) {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("message is not a JSON object: %w", err)
	}
	if f == nil {
		return nil, fmt.Errorf("message is null")
	}
	m := &Message{Raw: raw}
	str := func(k string) string { s, _ := rawString(f[k]); return s }
	m.Role = str("role")
	m.Provider, m.Model = str("provider"), str("model")
	m.ProviderRaw, m.ModelRaw = f["provider"], f["model"]
	m.StopReason, m.ErrorMessage = str("stopReason"), str("errorMessage")
	m.ToolCallID, m.ToolName = str("toolCallId"), str("toolName")
	m.Command, m.Output = str("command"), str("output")
	m.FullOutputPath, m.CustomType = str("fullOutputPath"), str("customType")
	m.Summary, m.FromID = str("summary"), str("fromId")
	m.IsError = truthyRaw(f["isError"])
	m.Cancelled = truthyRaw(f["cancelled"])
	m.Truncated = truthyRaw(f["truncated"])
	m.ExcludeFromContext = truthyRaw(f["excludeFromContext"])
	m.Timestamp = f["timestamp"]
	if r := f["exitCode"]; len(r) > 0 && !isNull(r) {
		var x float64
		if json.Unmarshal(r, &x) == nil {
			m.ExitCode = &x
		}
	}
	if r := f["tokensBefore"]; len(r) > 0 {
		_ = json.Unmarshal(r, &m.TokensBefore)
	}
	if r := f["usage"]; len(r) > 0 && r[0] == '{' {
		var u Usage
		if json.Unmarshal(r, &u) == nil {
			m.Usage = &u
		}
	}
	m.setContent(f["content"])
	return m, nil
}

func (m *Message) setContent(r json.RawMessage) {
	if len(r) == 0 {
		return
	}
	if s, ok := rawString(r); ok {
		m.IsString, m.ContentString = true, s
		return
	}
	if r[0] != '[' {
		return
	}
	var items []json.RawMessage
	if json.Unmarshal(r, &items) != nil {
		return
	}
	for _, it := range items {
		var bf map[string]json.RawMessage
		if json.Unmarshal(it, &bf) != nil || bf == nil {
			m.Blocks = append(m.Blocks, Block{})
			continue
		}
		b := Block{}
		b.Type, _ = rawString(bf["type"])
		b.Text, _ = rawString(bf["text"])
		b.Thinking, _ = rawString(bf["thinking"])
		b.Name, _ = rawString(bf["name"])
		b.ID, _ = rawString(bf["id"])
		b.Arguments = bf["arguments"]
		m.Blocks = append(m.Blocks, b)
	}
}

// Text is the message's text: a string content, or its text blocks joined by sep.
func (m *Message) Text(sep string) string {
	if m.IsString {
		return m.ContentString
	}
	var parts []string
	for _, b := range m.Blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, sep)
}

// Message decodes the AgentMessage of a message entry (cached).
func (e *Entry) Message() (*Message, error) {
	if e.msg != nil || e.msgErr != nil {
		return e.msg, e.msgErr
	}
	raw := e.RawField("message")
	if raw == nil {
		e.msgErr = fmt.Errorf("entry %s: message entry has no message", e.ID)
		return nil, e.msgErr
	}
	e.msg, e.msgErr = DecodeMessage(raw)
	return e.msg, e.msgErr
}

// Role is the role of a message entry's message, or "".
func (e *Entry) Role() string {
	if e.Type != TypeMessage {
		return ""
	}
	m, err := e.Message()
	if err != nil {
		return ""
	}
	return m.Role
}

// orderedObject builds a JSON object in a fixed key order, leaving out absent values as
// JSON.stringify leaves out undefined.
type orderedObject struct {
	b     strings.Builder
	first bool
}

func newObject() *orderedObject { o := &orderedObject{first: true}; o.b.WriteByte('{'); return o }

func (o *orderedObject) raw(key string, v json.RawMessage) {
	if len(v) == 0 {
		return
	}
	if !o.first {
		o.b.WriteByte(',')
	}
	o.first = false
	jsjson.Quote(&o.b, key)
	o.b.WriteByte(':')
	o.b.Write(v)
}

func (o *orderedObject) str(key, v string) {
	var b strings.Builder
	jsjson.Quote(&b, v)
	o.raw(key, json.RawMessage(b.String()))
}

func (o *orderedObject) done() json.RawMessage {
	o.b.WriteByte('}')
	return json.RawMessage(o.b.String())
}

func jsDateRaw(ts string) json.RawMessage {
	if ms, ok := ParseJSDate(ts); ok {
		return json.RawMessage(jsjson.FormatNumber(ms))
	}
	return json.RawMessage("null")
}

// CompactionSummaryMessage is Pi's createCompactionSummaryMessage for a compaction entry.
func CompactionSummaryMessage(e *Entry) *Message {
	o := newObject()
	o.str("role", RoleCompactionSummary)
	o.raw("summary", e.RawField("summary"))
	o.raw("tokensBefore", e.RawField("tokensBefore"))
	o.raw("timestamp", jsDateRaw(e.Timestamp))
	m, _ := DecodeMessage(o.done())
	return m
}

// BranchSummaryMessage is Pi's createBranchSummaryMessage for a branch_summary entry.
func BranchSummaryMessage(e *Entry) *Message {
	o := newObject()
	o.str("role", RoleBranchSummary)
	o.raw("summary", e.RawField("summary"))
	o.raw("fromId", e.RawField("fromId"))
	o.raw("timestamp", jsDateRaw(e.Timestamp))
	m, _ := DecodeMessage(o.done())
	return m
}

// CustomMessage is Pi's createCustomMessage for a custom_message entry.
func CustomMessage(e *Entry) *Message {
	o := newObject()
	o.str("role", RoleCustom)
	o.raw("customType", e.RawField("customType"))
	o.raw("content", e.RawField("content"))
	o.raw("display", e.RawField("display"))
	o.raw("details", e.RawField("details"))
	o.raw("timestamp", jsDateRaw(e.Timestamp))
	m, _ := DecodeMessage(o.done())
	return m
}

// MessageOf is Pi's getMessageFromEntry: the AgentMessage an entry contributes to a
// summarization, or nil. A branch_summary contributes even with an empty summary.
func MessageOf(e *Entry) *Message {
	switch e.Type {
	case TypeMessage:
		m, err := e.Message()
		if err != nil {
			return nil
		}
		return m
	case TypeCustomMessage:
		return CustomMessage(e)
	case TypeBranchSummary:
		return BranchSummaryMessage(e)
	case TypeCompaction:
		return CompactionSummaryMessage(e)
	}
	return nil
}
