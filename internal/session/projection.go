package session

import (
	"encoding/json"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// ProjectedEntry is one entry of the context and the messages it contributes there (Pi's
// ProjectedSessionEntry): none for an omitted target, a settings entry or an older
// compaction inside the kept range; a checkpoint and a summary for the compaction in
// effect.
type ProjectedEntry struct {
	Entry    *Entry
	Messages []*Message
}

// contextEntries is Pi 1.6.0's buildContextEntries over a root-first path: the whole
// path without a compaction; with one, the last compaction, then the kept entries from
// its firstKeptEntryId up to it (system messages left out: the compaction carries their
// replay), then every entry after it.
func contextEntries(path []*Entry, compactionIndex int) []*Entry {
	if compactionIndex < 0 {
		return path
	}
	sp := spanOf(path, compactionIndex)
	out := make([]*Entry, 0, 1+sp.keptTo-sp.keptFrom+len(path)-sp.after)
	out = append(out, sp.summary)
	for _, e := range path[sp.keptFrom:sp.keptTo] {
		if e.Type == TypeMessage && e.Role() == RoleSystem {
			continue
		}
		out = append(out, e)
	}
	return append(out, path[sp.after:]...)
}

// Projection is a projected path: its entries with their messages, all the messages in
// order, and where the path's last compaction and last context edit are.
type Projection struct {
	Entries  []ProjectedEntry
	Messages []*Message // the messages of Entries, in order; each entry's are a part of it
	// LastCompaction and LastEdit are indices in the path (-1: none).
	LastCompaction, LastEdit int
}

// ProjectPath is Project with the whole projection. Its entries' message lists are
// parts of one array (Messages), so that a path of many entries costs two allocations,
// not one per entry; the path's entries are read once to find the compaction and the
// edits, and once to project them.
func ProjectPath(path []*Entry) Projection {
	p := Projection{LastCompaction: -1, LastEdit: -1}
	nEdits := 0
	for i, e := range path {
		switch e.Type {
		case TypeCompaction:
			p.LastCompaction = i
		case TypeContextEdit:
			p.LastEdit = i
			nEdits++
		}
	}
	entries := contextEntries(path, p.LastCompaction)
	var edits map[string]*Entry
	if nEdits > 0 {
		for _, e := range entries {
			if e.Type == TypeContextEdit {
				if edits == nil {
					edits = make(map[string]*Entry, nEdits)
				}
				if target, ok := e.ContextEditTarget(); ok {
					edits[target] = e
				}
			}
		}
	}
	// An entry contributes at most one message but the first (a compaction: its
	// checkpoint and its summary), so the array is never grown; were it grown, the
	// parts already handed out would keep the old array, which holds the same messages.
	msgs := make([]*Message, 0, len(entries)+1)
	out := make([]ProjectedEntry, len(entries))
	for i, e := range entries {
		out[i].Entry = e
		if e.Type == TypeCompaction && i > 0 {
			continue // an older compaction whose id lies in the kept range
		}
		at := len(msgs)
		if edit := edits[e.ID]; edit != nil {
			msgs = append(msgs, ProjectEntry(e, edit)...)
		} else {
			msgs = appendEntryMessages(msgs, e)
		}
		if len(msgs) > at {
			out[i].Messages = msgs[at:len(msgs):len(msgs)]
		}
	}
	p.Entries, p.Messages = out, msgs
	return p
}

// Project is Pi 1.6.0's buildSessionProjection entries for a root-first path: each
// context entry with its messages, the latest context_edit among the context entries
// applied to its target.
func Project(path []*Entry) []ProjectedEntry { return ProjectPath(path).Entries }

// ProjectedMessages is the messages of a projection, in order.
func ProjectedMessages(p []ProjectedEntry) []*Message {
	n := 0
	for _, pe := range p {
		n += len(pe.Messages)
	}
	out := make([]*Message, 0, n)
	for _, pe := range p {
		out = append(out, pe.Messages...)
	}
	return out
}

// EntryMessages is Pi 1.6.0's sessionEntryToContextMessages: what an entry puts in the
// context before any edit.
func EntryMessages(e *Entry) []*Message { return appendEntryMessages(nil, e) }

// appendEntryMessages appends EntryMessages(e) to dst.
func appendEntryMessages(dst []*Message, e *Entry) []*Message {
	switch e.Type {
	case TypeMessage:
		m, err := e.Message()
		if err != nil {
			return dst
		}
		if m.NoContent {
			// Files are read without validation: a missing or null content is empty.
			switch m.Role {
			case RoleSystem:
				return append(dst, withContent(m, json.RawMessage(`""`)))
			case RoleUser, RoleAssistant, RoleToolResult:
				return append(dst, withContent(m, json.RawMessage(`[]`)))
			}
		}
		return append(dst, m)
	case TypeCustomMessage:
		return append(dst, CustomMessage(e))
	case TypeBranchSummary:
		if truthyRaw(e.RawField("summary")) {
			return append(dst, BranchSummaryMessage(e))
		}
	case TypeCompaction:
		summary := CompactionSummaryMessage(e)
		if sys := e.RawField("systemMessage"); truthyRaw(sys) {
			if m, err := DecodeMessage(sys); err == nil {
				return append(dst, m, summary)
			}
		}
		return append(dst, summary)
	}
	return dst
}

// ProjectEntry is Pi's projectContextEntry: an entry's messages under its latest edit.
// An omission (replacement null) leaves nothing; a replacement takes the place of the
// content of user, assistant, toolResult and custom messages (a string becoming one
// text block for assistant and toolResult), every other member kept.
func ProjectEntry(e *Entry, edit *Entry) []*Message {
	msgs := EntryMessages(e)
	if edit == nil {
		return msgs
	}
	repl := edit.RawField("replacement")
	if isNull(repl) {
		return nil
	}
	content, _ := jsjson.LookupField(repl, "content")
	if len(repl) == 0 || repl[0] != '{' {
		content = nil
	}
	out := make([]*Message, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case RoleUser, RoleAssistant, RoleToolResult, RoleCustom:
			c := content
			if s, ok := rawString(content); ok && (m.Role == RoleAssistant || m.Role == RoleToolResult) {
				c = textBlocks(s)
			}
			out[i] = withContent(m, c)
		default:
			out[i] = m
		}
	}
	return out
}

// textBlocks is [{type: "text", text: s}] as JSON.
func textBlocks(s string) json.RawMessage {
	o := newObject()
	o.str("type", "text")
	o.str("text", s)
	return json.RawMessage("[" + string(o.done()) + "]")
}

// withContent is {...m, content}: the message with its content member replaced (or
// appended when it had none); a nil content drops the member, as JSON.stringify drops
// undefined.
func withContent(m *Message, content json.RawMessage) *Message {
	v, err := jsjson.Parse(m.Raw())
	if err != nil || v.Kind != jsjson.Object {
		return m
	}
	if content == nil {
		deleteKey(&v, "content")
	} else if c, err := jsjson.Parse(content); err == nil {
		setKey(&v, "content", c)
	}
	out, err := DecodeMessage(json.RawMessage(jsjson.Stringify(v)))
	if err != nil {
		return m
	}
	return out
}

// ContextEditTarget is a context_edit entry's targetId.
func (e *Entry) ContextEditTarget() (string, bool) {
	if e.Type != TypeContextEdit {
		return "", false
	}
	return rawString(e.RawField("targetId"))
}

// CurrentSystemMessage is pi-ai's getCurrentSystemMessage: every system message among
// messages replayed into one (non-empty contents joined by a blank line, sections
// patched by name with null removing one, tools removed then added per message, the
// first one's timestamp), or nil when there is no system message and no tool.
func CurrentSystemMessage(messages []*Message) *Message {
	var contents []string
	sections := jsjson.Value{Kind: jsjson.Object}
	tools := jsjson.Value{Kind: jsjson.Object} // name -> declaration, in declaration order
	var timestamp json.RawMessage
	for _, m := range messages {
		if m.Role != RoleSystem {
			continue
		}
		if timestamp == nil {
			timestamp = m.Timestamp // the first one defined
		}
		if text := m.Text("\n"); text != "" {
			contents = append(contents, text)
		}
		v, err := jsjson.Parse(m.Raw())
		if err != nil {
			continue
		}
		if sec, ok := v.Get("sections"); ok && sec.Kind == jsjson.Object {
			for i, name := range sec.Keys {
				if sec.Vals[i].Kind == jsjson.Null {
					deleteKey(&sections, name)
				} else {
					setKey(&sections, name, sec.Vals[i]) // Map.set: an existing name keeps its place
				}
			}
		}
		if rem, ok := v.Get("toolsRemoved"); ok && rem.Kind == jsjson.Array {
			for _, t := range rem.Items {
				if n, ok := t.Get("name"); ok {
					deleteKey(&tools, jsKeyOf(*n))
				}
			}
		}
		if add, ok := v.Get("toolsAdded"); ok && add.Kind == jsjson.Array {
			for _, t := range add.Items {
				name := "undefined"
				if n, ok := t.Get("name"); ok {
					name = jsKeyOf(*n)
				}
				setKey(&tools, name, t)
			}
		}
	}
	if timestamp == nil && len(tools.Keys) == 0 {
		return nil
	}
	out := jsjson.Value{Kind: jsjson.Object}
	setKey(&out, "role", jsjson.Value{Kind: jsjson.String, Str: RoleSystem})
	setKey(&out, "content", jsjson.Value{Kind: jsjson.String, Str: joinNonEmpty(contents)})
	if len(sections.Keys) > 0 {
		setKey(&out, "sections", sections)
	}
	if len(tools.Keys) > 0 {
		setKey(&out, "toolsAdded", jsjson.Value{Kind: jsjson.Array, Items: tools.Vals})
	}
	ts := jsjson.Value{Kind: jsjson.Number, Num: 0}
	if timestamp != nil {
		if t, err := jsjson.Parse(timestamp); err == nil {
			ts = t
		}
	}
	setKey(&out, "timestamp", ts)
	m, err := DecodeMessage(json.RawMessage(jsjson.Stringify(out)))
	if err != nil {
		return nil
	}
	return m
}

func joinNonEmpty(parts []string) string { return strings.Join(parts, "\n\n") }

// jsKeyOf is the Map key a JSON value stands for when used as a name (its string, or its
// JSON text for anything else; only strings occur in files Pi writes).
func jsKeyOf(v jsjson.Value) string {
	if v.Kind == jsjson.String {
		return v.Str
	}
	return "\x00" + jsjson.Stringify(v)
}
