package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

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
	// RoleSystem is a persisted prompt declaration or patch (Pi 0.86+): content, sections
	// by name, toolsAdded and toolsRemoved.
	RoleSystem = "system"
)

// Usage is an assistant message's token usage.
type Usage struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	// Reasoning counts the output tokens spent on reasoning (pi-ai 1.6.0 writes it,
	// 0 when the provider reports none; older usage has no such key).
	Reasoning   *float64 `json:"reasoning,omitempty"`
	TotalTokens float64  `json:"totalTokens"`
	// CacheWrite1h counts the cache writes with a 1-hour lifetime (pi-ai 1.6.0's
	// anthropic-messages writes it).
	CacheWrite1h *float64 `json:"cacheWrite1h,omitempty"`
	// Cost in dollars, when known (it is not read from files: nothing pi-lsp computes
	// needs it).
	Cost *UsageCost `json:"cost,omitempty"`
}

// UsageCost is the cost part of Pi's Usage.
type UsageCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
	// TotalFromProvider says the total is the provider's own figure (pi-ai 1.6.0 writes
	// false for a cost it computed).
	TotalFromProvider *bool `json:"totalFromProvider,omitempty"`
}

// MarshalJSON writes Pi's full Usage shape, cost included: Pi 0.81+ adds usage.cost.total
// of every compaction and branch summary to the session's totals and throws on a usage
// without one. An unknown cost is written as zeros.
func (u Usage) MarshalJSON() ([]byte, error) {
	type plain Usage
	p := plain(u)
	if p.Cost == nil {
		p.Cost = &UsageCost{}
	}
	return json.Marshal(p)
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

// Message is a Pi AgentMessage: its metadata as fields, its body (content, output,
// summary, the JSON itself) through methods. A message of a file (loaded, or parsed from
// memory) keeps only the metadata and decodes its body from its entry's line when asked
// (see Entry.Raw()); a message decoded on its own holds its body in memory and decodes
// its content once.
type Message struct {
	Role  string
	body  *msgBody  // in memory; nil for a message of a loaded file
	ent   *Entry    // the loaded entry the body is read from, when body is nil
	extra *msgExtra // what only some messages have

	Provider, Model, StopReason string
	Usage                       *Usage

	ToolCallID, ToolName string
	IsError              bool
	// NoContent: the message has no content member, or null (Pi projects it as empty).
	NoContent bool
	// HasNestedCalls: a toolResult recording the tool calls of a codemode script
	// (nestedCalls), read by file tracking (see NestedCalls).
	HasNestedCalls bool
	// hasProvider, hasModel: the members are present (see ProviderJSON).
	hasProvider, hasModel bool

	Timestamp json.RawMessage
}

// msgExtra is what few messages have, kept out of Message: every message of a loaded
// file has a Message record, a few hundred bytes for what is often a role and a
// timestamp.
type msgExtra struct {
	toolCalls []ToolCall // kept at load for a message of a loaded file
	rare      *msgRare
}

// msgRare is what fewer messages still have: an assistant message with tool calls has
// a msgExtra, one that failed or names its model oddly this too.
type msgRare struct {
	bash *Bash // a bashExecution message's fields
	// The provider and model members when they are not plain JSON strings (a plain
	// one is Provider or Model quoted).
	providerRaw, modelRaw json.RawMessage
	errorMessage          string // an assistant's errorMessage (see ErrorMessage)
}

// ErrorMessage is an assistant message's errorMessage ("" when it has none). It is
// kept with what few messages have: most messages end without an error.
func (m *Message) ErrorMessage() string {
	if r := m.rareOf(); r != nil {
		return r.errorMessage
	}
	return ""
}

// more is m's extra, allocated on first use.
func (m *Message) more() *msgExtra {
	if m.extra == nil {
		m.extra = &msgExtra{}
	}
	return m.extra
}

// rareOf is m's rare members, nil when it has none.
func (m *Message) rareOf() *msgRare {
	if m.extra == nil {
		return nil
	}
	return m.extra.rare
}

// moreRare is m's rare members, allocated on first use.
func (m *Message) moreRare() *msgRare {
	x := m.more()
	if x.rare == nil {
		x.rare = &msgRare{}
	}
	return x.rare
}

// ProviderJSON is the provider member's JSON as written, nil when there is none.
func (m *Message) ProviderJSON() json.RawMessage {
	return memberJSON(m.hasProvider, m.Provider, m.rareOf(), func(x *msgRare) json.RawMessage { return x.providerRaw })
}

// ModelJSON is the model member's JSON as written, nil when there is none.
func (m *Message) ModelJSON() json.RawMessage {
	return memberJSON(m.hasModel, m.Model, m.rareOf(), func(x *msgRare) json.RawMessage { return x.modelRaw })
}

func memberJSON(has bool, s string, x *msgRare, raw func(*msgRare) json.RawMessage) json.RawMessage {
	if !has {
		return nil
	}
	if x != nil {
		if r := raw(x); r != nil {
			return r
		}
	}
	return json.RawMessage(`"` + s + `"`)
}

// plainString reports a JSON string without escapes that decodes to s: its JSON is s
// quoted.
func plainString(raw []byte, s string) bool {
	return len(raw) == len(s)+2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 && string(raw[1:len(raw)-1]) == s
}

// msgBody is the part of a message held only in memory: its JSON and its content,
// decoded on first use (Blocks, StringContent).
type msgBody struct {
	raw         json.RawMessage
	content     []byte
	contentOnce sync.Once
	isString    bool
	contentStr  string
	blocks      []Block
	output      string
	summary     string
}

// noBody stands for the body of a message built without one (a zero Message).
var noBody = &msgBody{}

// b is the message's in-memory body (see loaded for a message of a loaded file).
func (m *Message) b() *msgBody {
	if m.body == nil {
		return noBody
	}
	return m.body
}

// Bash is what a bashExecution message adds to a message.
type Bash struct {
	Command            string
	ExitCode           *float64
	Cancelled          bool
	Truncated          bool
	FullOutputPath     string
	ExcludeFromContext bool
}

// Bash returns the message's bashExecution members (zero when it has none).
func (m *Message) Bash() Bash {
	if r := m.rareOf(); r != nil && r.bash != nil {
		return *r.bash
	}
	return Bash{}
}

// ToolCall is what file tracking reads of a tool call: its name and its string "path"
// argument ("" when absent or not a string).
type ToolCall struct {
	Name string
	ID   string
	Path string
}

// lazy reports a message whose body is in the file, not in memory.
func (m *Message) lazy() bool { return m.body == nil && m.ent != nil }

// loaded is the message with its body in memory: m itself, or a fresh decoding of the
// entry's bytes (not kept, so that memory stays bounded). When the bytes cannot be read
// (the file was truncated or replaced: File.ReadErr says so) it is m's metadata with an
// empty body, never m itself: the accessors that call loaded on a lazy message would
// otherwise call it again without end.
func (m *Message) loaded() *Message {
	if !m.lazy() {
		return m
	}
	line := m.ent.Raw()
	if line == nil {
		return m.unreadable()
	}
	// One pass over the line finds the message's members, with the prescan that skips
	// the long strings of a plain line, rather than a pass to find the message and one
	// over it.
	// The content blocks are taken in the same pass.
	es := lineScans.Get().(*jsjson.EntryScan)
	defer func() { es.Block = nil; lineScans.Put(es) }() // not holding this read's blocks
	type seen struct {
		at    int
		block Block
	}
	var blocks []seen
	es.Block = func(at int, block, _ []jsjson.Field) { blocks = append(blocks, seen{at, blockOf(block)}) }
	if err := jsjson.ScanEntry(line, es); err != nil || !es.MessageFound {
		return m.unreadable()
	}
	var raw, content []byte
	for _, f := range es.Fields { // the last one, as JSON.parse keeps
		if f.Key == "message" {
			raw = f.Value
		}
	}
	for _, f := range es.Message {
		if f.Key == "content" {
			content = f.Value
		}
	}
	full := messageFromFields(raw, es.Message, nil, nil)
	if len(content) > 0 && content[0] == '[' && full.body != nil {
		at := offsetIn(line, content)
		b := full.body
		b.contentOnce.Do(func() {
			for _, s := range blocks { // an earlier content member's blocks are not the message's
				if s.at == at {
					b.blocks = append(b.blocks, s.block)
				}
			}
		})
	}
	return full
}

// unreadable is m's metadata with an empty in-memory body: what a message whose line
// can no longer be read holds.
func (m *Message) unreadable() *Message {
	c := *m
	c.body, c.ent = noBody, nil
	return &c
}

// lineScans are the scans of lines read again (see loaded): their buffers are a few
// kilobytes, not worth making for each read.
var lineScans = sync.Pool{New: func() any { return new(jsjson.EntryScan) }}

// Raw is the message's JSON as Pi produces it.
func (m *Message) Raw() json.RawMessage {
	if m.lazy() {
		return m.ent.RawField("message")
	}
	return m.b().raw
}

// OutputText is a bashExecution message's output.
func (m *Message) OutputText() string { return m.loaded().b().output }

// SummaryText is a summary message's summary.
func (m *Message) SummaryText() string { return m.loaded().b().summary }

// ToolCalls lists the message's tool calls in order.
func (m *Message) ToolCalls() []ToolCall {
	if m.lazy() {
		if m.extra == nil {
			return nil
		}
		return m.extra.toolCalls
	}
	return toolCallsOf(m.Blocks())
}

// NestedCalls lists the tool calls a codemode script made, as its toolResult records
// them (nestedCalls.calls: name and arguments; arguments over Pi's size limit are left
// out, so such a call has no path).
func (m *Message) NestedCalls() []ToolCall {
	if !m.HasNestedCalls || m.Role != RoleToolResult {
		return nil
	}
	nc, ok := jsjson.LookupField(m.Raw(), "nestedCalls")
	if !ok || len(nc) == 0 || nc[0] != '{' {
		return nil
	}
	calls, ok := jsjson.LookupField(nc, "calls")
	if !ok || len(calls) == 0 || calls[0] != '[' {
		return nil
	}
	var out []ToolCall
	jsjson.ForEachObject(calls, func(fields []jsjson.Field) {
		var c ToolCall
		for _, f := range fields {
			switch f.Key {
			case "name":
				c.Name, _ = rawString(f.Value)
			case "arguments":
				c.Path = pathArg(f.Value)
			}
		}
		out = append(out, c)
	})
	return out
}

func toolCallsOf(blocks []Block) []ToolCall {
	var out []ToolCall
	for _, b := range blocks {
		if b.Type != "toolCall" {
			continue
		}
		out = append(out, ToolCall{Name: b.Name, ID: b.ID, Path: pathArg(b.Arguments)})
	}
	return out
}

// pathArg is the string "path" member of tool-call arguments, or "".
func pathArg(args []byte) string {
	if len(args) == 0 || args[0] != '{' {
		return ""
	}
	raw, ok := jsjson.LookupField(args, "path")
	if !ok {
		return ""
	}
	p, _ := jsjson.StringView(raw)
	return p
}

// DecodeMessage decodes an AgentMessage from its JSON. Fields of the wrong JSON type are
// treated as absent; nothing here panics on hostile input.
func DecodeMessage(raw json.RawMessage) (*Message, error) {
	var buf [24]jsjson.Field
	fields, err := jsjson.ScanObject(raw, buf[:0])
	if err != nil {
		return nil, fmt.Errorf("message is not a JSON object: %w", err)
	}
	return messageFromFields(raw, fields, nil, nil), nil
}

// messageFromFields decodes a message from its already scanned members. With a decoder
// of many lines it keeps the metadata and none of the body, which is decoded from the
// entry's line when asked for (see Message): copies of the metadata for a loaded file,
// views of the line for one parsed from memory.
func messageFromFields(raw []byte, fields []jsjson.Field, d *decoder, line []byte) *Message {
	var m *Message
	if d == nil {
		m = &Message{}
	} else {
		m = d.message()
	}
	var body *msgBody
	if d == nil || d.single {
		body = &msgBody{raw: raw}
		m.body = body
	}
	var content, usage []byte
	// bash holds the bashExecution members, allocated only for a message that has one.
	bash := func() *Bash {
		x := m.moreRare()
		if x.bash == nil {
			x.bash = &Bash{}
		}
		return x.bash
	}
	for _, f := range fields {
		v := f.Value
		switch f.Key {
		case "role":
			m.Role, _ = d.view(v)
		case "provider":
			m.Provider, _ = d.view(v)
			m.hasProvider = true
			if !plainString(v, m.Provider) {
				m.moreRare().providerRaw = v
			} else if r := m.rareOf(); r != nil {
				r.providerRaw = nil // a later member replaces an earlier one
			}
		case "model":
			m.Model, _ = d.view(v)
			m.hasModel = true
			if !plainString(v, m.Model) {
				m.moreRare().modelRaw = v
			} else if r := m.rareOf(); r != nil {
				r.modelRaw = nil
			}
		case "stopReason":
			m.StopReason, _ = d.view(v)
		case "errorMessage":
			if msg, _ := d.view(v); msg != "" || m.rareOf() != nil {
				m.moreRare().errorMessage = msg // a later member replaces an earlier one
			}
		case "toolCallId":
			m.ToolCallID, _ = d.view(v)
		case "toolName":
			m.ToolName, _ = d.view(v)
		case "command":
			bash().Command, _ = d.view(v)
		case "output":
			if body != nil {
				body.output, _ = d.view(v)
			}
		case "fullOutputPath":
			bash().FullOutputPath, _ = d.view(v)
		case "summary":
			if body != nil {
				body.summary, _ = d.view(v)
			}
		case "isError":
			m.IsError = truthyRaw(v)
		case "cancelled":
			bash().Cancelled = truthyRaw(v)
		case "truncated":
			bash().Truncated = truthyRaw(v)
		case "excludeFromContext":
			bash().ExcludeFromContext = truthyRaw(v)
		case "timestamp":
			m.Timestamp = v
		case "exitCode":
			bash().ExitCode = nil
			if !isNull(v) {
				if x, err := strconv.ParseFloat(string(v), 64); err == nil {
					bash().ExitCode = &x
				}
			}
		case "usage":
			usage = v
		case "content":
			content = v
		case "nestedCalls":
			m.HasNestedCalls = len(v) > 0 && v[0] == '{'
		}
	}
	m.NoContent = len(content) == 0 || isNull(content)
	if body != nil {
		m.Usage = decodeUsage(usage)
		body.content = content
		return m
	}
	if es := &d.scan; es.UsageAt >= 0 && es.UsageAt == offsetIn(line, usage) {
		m.Usage = usageFromFields(es.Usage, d.usage())
	} else {
		m.Usage = decodeUsage(usage)
	}
	if d.inMemory {
		// Parsed from memory: the metadata are views of the line, which is kept, and
		// the body is decoded from it when asked for, as a loaded file's is.
		m.toolCallsOf(d, line, content, func(s string) string { return s })
		return m
	}
	// Keep copies of the metadata; the body stays in the file.
	m.Role = internKnown(m.Role, &d.arena)
	m.Provider, m.Model, m.StopReason = d.intern(m.Provider), d.intern(m.Model), d.intern(m.StopReason)
	m.ToolCallID, m.ToolName = d.str(m.ToolCallID), d.intern(m.ToolName)
	if x := m.rareOf(); x != nil {
		x.errorMessage = d.str(x.errorMessage)
		x.providerRaw, x.modelRaw = d.internBytes(x.providerRaw), d.internBytes(x.modelRaw)
		if x.bash != nil {
			x.bash.Command, x.bash.FullOutputPath = d.str(x.bash.Command), d.str(x.bash.FullOutputPath)
		}
	}
	m.Timestamp = d.bytes(m.Timestamp)
	m.toolCallsOf(d, line, content, d.str)
	return m
}

// toolCallsOf keeps the tool calls of an assistant message decoded without its body:
// file tracking and compaction read those of every assistant message. The scan recorded
// those of every content array; the last array's are the message's. keep copies a
// string out of the line (or keeps it as it is, when the line is kept).
func (m *Message) toolCallsOf(d *decoder, line, content []byte, keep func(string) string) {
	if m.Role != RoleAssistant || len(content) == 0 || content[0] != '[' {
		return
	}
	at, n := offsetIn(line, content), 0
	for _, c := range d.calls {
		if c.contentAt == at {
			n++
		}
	}
	if n == 0 {
		return
	}
	x := m.more()
	x.toolCalls = make([]ToolCall, 0, n)
	intern := d.intern
	if d.inMemory {
		intern = keep
	}
	for _, c := range d.calls {
		if c.contentAt == at {
			x.toolCalls = append(x.toolCalls, ToolCall{Name: intern(c.Name), ID: keep(c.ID), Path: keep(c.Path)})
		}
	}
}

// NewBlocksMessage builds a message of role with the given content blocks (for messages
// that pi-lsp composes itself rather than reads).
func NewBlocksMessage(role string, blocks []Block) *Message {
	m := &Message{Role: role, body: &msgBody{blocks: blocks}}
	m.body.contentOnce.Do(func() {})
	return m
}

// Blocks returns the content blocks (nil when the content is a string or absent).
func (m *Message) Blocks() []Block {
	if m.lazy() {
		return m.loaded().Blocks()
	}
	b := m.b()
	b.contentOnce.Do(b.decodeContent)
	return b.blocks
}

// StringContent returns the content when it is a JSON string.
func (m *Message) StringContent() (string, bool) {
	if m.lazy() {
		return m.loaded().StringContent()
	}
	b := m.b()
	b.contentOnce.Do(b.decodeContent)
	return b.contentStr, b.isString
}

func (m *msgBody) decodeContent() {
	r := m.content
	if len(r) == 0 {
		return
	}
	if s, ok := rawString(r); ok {
		m.isString, m.contentStr = true, s
		return
	}
	if r[0] != '[' {
		return
	}
	jsjson.ForEachObject(r, func(bf []jsjson.Field) { m.blocks = append(m.blocks, blockOf(bf)) })
}

// blockOf is the content block of an element's members.
func blockOf(bf []jsjson.Field) Block {
	var b Block
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
	return b
}

// Text is the message's text: a string content, or its text blocks joined by sep.
func (m *Message) Text(sep string) string {
	m = m.loaded()
	if s, ok := m.StringContent(); ok {
		return s
	}
	var parts []string
	for _, b := range m.Blocks() {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, sep)
}

// Message decodes the AgentMessage of a message entry, once; its content is decoded
// only when asked for. Safe for concurrent use.
func (e *Entry) Message() (*Message, error) {
	m := e.msg.Load()
	if m == nil {
		m = noMessage
		if raw := e.RawField("message"); raw != nil {
			if d, _ := DecodeMessage(raw); d != nil {
				m = d
			}
		}
		if !e.msg.CompareAndSwap(nil, m) {
			m = e.msg.Load()
		}
	}
	if m == noMessage {
		return nil, fmt.Errorf("entry %s: no message object", e.ID)
	}
	return m, nil
}

// decodeUsage reads an assistant usage object: its numeric members, as Pi reads them.
func decodeUsage(v []byte) *Usage {
	if len(v) == 0 || v[0] != '{' {
		return nil
	}
	var buf [8]jsjson.Field
	fields, err := jsjson.ScanObject(v, buf[:0])
	if err != nil {
		return nil
	}
	return usageFromFields(fields, &Usage{})
}

func usageFromFields(fields []jsjson.Field, u *Usage) *Usage {
	for _, f := range fields {
		switch f.Key {
		case "input":
			u.Input = number(f.Value)
		case "output":
			u.Output = number(f.Value)
		case "cacheRead":
			u.CacheRead = number(f.Value)
		case "cacheWrite":
			u.CacheWrite = number(f.Value)
		case "totalTokens":
			u.TotalTokens = number(f.Value)
		}
	}
	return u
}

// number is the value of a JSON number, 0 for anything else. Token counts are small
// integers, read without strconv.
func number(b []byte) float64 {
	if len(b) > 0 && len(b) <= 15 {
		n := 0.0
		for _, c := range b {
			if c < '0' || c > '9' {
				goto general
			}
			n = n*10 + float64(c-'0')
		}
		if len(b) == 1 || b[0] != '0' {
			return n
		}
	}
general:
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0
	}
	return x
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

// synthesized builds the message Pi creates from an entry: the role, the entry's
// members named by keys (in that order, absent ones left out), and the entry's time.
func synthesized(e *Entry, role string, keys ...string) *Message {
	o := newObject()
	o.str("role", role)
	for _, k := range keys {
		o.raw(k, e.RawField(k))
	}
	o.raw("timestamp", jsDateRaw(e.Timestamp))
	m, _ := DecodeMessage(o.done())
	return m
}

// CompactionSummaryMessage is Pi's createCompactionSummaryMessage for a compaction entry.
func CompactionSummaryMessage(e *Entry) *Message {
	return synthesized(e, RoleCompactionSummary, "summary", "tokensBefore")
}

// BranchSummaryMessage is Pi's createBranchSummaryMessage for a branch_summary entry.
func BranchSummaryMessage(e *Entry) *Message {
	return synthesized(e, RoleBranchSummary, "summary", "fromId")
}

// CustomMessage is Pi's createCustomMessage for a custom_message entry.
func CustomMessage(e *Entry) *Message {
	return synthesized(e, RoleCustom, "customType", "content", "display", "details")
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

// NewSummaryMessage is a summary message of role (compactionSummary or branchSummary)
// holding only its text, for estimating what a summary will cost.
func NewSummaryMessage(role, summary string) *Message {
	return &Message{Role: role, body: &msgBody{summary: summary}}
}
