package session

import (
	"encoding/json"
	"fmt"
	"strconv"
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
	var buf [24]jsjson.Field
	fields, err := jsjson.ScanObject(raw, buf[:0])
	if err != nil {
		return nil, fmt.Errorf("message is not a JSON object: %w", err)
	}
	m := &Message{Raw: raw}
	var content []byte
	for _, f := range fields {
		v := f.Value
		switch f.Key {
		case "role":
			m.Role, _ = rawString(v)
		case "provider":
			m.Provider, _ = rawString(v)
			m.ProviderRaw = v
		case "model":
			m.Model, _ = rawString(v)
			m.ModelRaw = v
		case "stopReason":
			m.StopReason, _ = rawString(v)
		case "errorMessage":
			m.ErrorMessage, _ = rawString(v)
		case "toolCallId":
			m.ToolCallID, _ = rawString(v)
		case "toolName":
			m.ToolName, _ = rawString(v)
		case "command":
			m.Command, _ = rawString(v)
		case "output":
			m.Output, _ = rawString(v)
		case "fullOutputPath":
			m.FullOutputPath, _ = rawString(v)
		case "customType":
			m.CustomType, _ = rawString(v)
		case "summary":
			m.Summary, _ = rawString(v)
		case "fromId":
			m.FromID, _ = rawString(v)
		case "isError":
			m.IsError = truthyRaw(v)
		case "cancelled":
			m.Cancelled = truthyRaw(v)
		case "truncated":
			m.Truncated = truthyRaw(v)
		case "excludeFromContext":
			m.ExcludeFromContext = truthyRaw(v)
		case "timestamp":
			m.Timestamp = v
		case "exitCode":
			m.ExitCode = nil
			if !isNull(v) {
				if x, err := strconv.ParseFloat(string(v), 64); err == nil {
					m.ExitCode = &x
				}
			}
		case "tokensBefore":
			if x, err := strconv.ParseFloat(string(v), 64); err == nil {
				m.TokensBefore = x
			}
		case "usage":
			m.Usage = nil
			if len(v) > 0 && v[0] == '{' {
				var u Usage
				if json.Unmarshal(v, &u) == nil {
					m.Usage = &u
				}
			}
		case "content":
			content = v
		}
	}
	m.setContent(content)
	return m, nil
}

func (m *Message) setContent(r []byte) {
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
		var buf [8]jsjson.Field
		bf, err := jsjson.ScanObject(it, buf[:0])
		b := Block{}
		if err == nil {
			for _, f := range bf {
				switch f.Key {
				case "type":
					b.Type, _ = rawString(f.Value)
				case "text":
					b.Text, _ = rawString(f.Value)
				case "thinking":
					b.Thinking, _ = rawString(f.Value)
				case "name":
					b.Name, _ = rawString(f.Value)
				case "id":
					b.ID, _ = rawString(f.Value)
				case "arguments":
					b.Arguments = f.Value
				}
			}
		}
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

// Role is the role of a message entry's message, or "". It reads only the role, without
// decoding the message.
func (e *Entry) Role() string {
	if e.Type != TypeMessage {
		return ""
	}
	if e.role != "" {
		return e.role
	}
	if e.msg != nil {
		e.role = e.msg.Role
		return e.role
	}
	raw, ok := jsjson.LookupField(e.Raw, "message")
	if !ok {
		return ""
	}
	r, _ := jsjson.LookupField(raw, "role")
	e.role, _ = rawString(r)
	return e.role
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
