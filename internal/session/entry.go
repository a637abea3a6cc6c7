package session

import (
	"bytes"
	"encoding/json"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// Entry types of the v3 format.
const (
	TypeSession             = "session"
	TypeMessage             = "message"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeModelChange         = "model_change"
	TypeCompaction          = "compaction"
	TypeBranchSummary       = "branch_summary"
	TypeCustom              = "custom"
	TypeCustomMessage       = "custom_message"
	TypeLabel               = "label"
	TypeSessionInfo         = "session_info"
	// Pi 0.86+: model work outside the conversation (e.g. kind "cache_warm"); never in
	// the context, but a tree entry like any other (appending one moves the leaf).
	TypeUsage = "usage"
	// Pi 0.87+: omits (replacement null) or replaces the content of an earlier message.
	TypeContextEdit = "context_edit"
)

// CurrentVersion is the session format version Pi writes (3 from 0.73.1 to 1.6.0).
const CurrentVersion = 3

// Entry is one non-header line of a session file. Its envelope (and, for a message
// entry, the message's metadata) is decoded when the file is read; the rest is decoded
// from Raw on demand.
type Entry struct {
	Type      string
	ID        string
	ParentID  string // "" for a root (null or missing parentId)
	Timestamp string
	Line      int    // 1-based line in the file, 0 when not read from a file
	parent    *Entry // the entry parentId names, set by the index

	// The entry's JSON object: off bytes at mem when held in memory (parsed from
	// memory, appended, migrated), else n bytes at off in src, read again on each use.
	// (A pointer and a length, not a slice: every entry of a loaded file has the
	// field, and only those held in memory use it.)
	mem *byte
	src *source
	off int64
	n   int32
	pos int32 // index in File.Entries, set by the index (next to n: one word for both)

	preview atomic.Pointer[string] // see Preview
	// msg is the entry's message once decoded (noMessage: it has none); decoded at
	// most once but by a race of readers, which decode the same bytes to the same.
	msg atomic.Pointer[Message]
	pin bool // a pin entry (see Pins)
}

// noMessage marks an entry whose message was looked for and is not an object.
var noMessage = &Message{}

// Raw is the entry's JSON object, as stored (or as migrated in memory). For an entry of
// a loaded file it is read again from the file on each call; nil when that fails (see
// File.ReadErr).
func (e *Entry) Raw() []byte {
	if e.mem != nil {
		return unsafe.Slice(e.mem, e.off)
	}
	if e.src == nil {
		return nil
	}
	b, err := e.src.line(e.off, int(e.n), e.ID)
	if err != nil {
		return nil
	}
	return b
}

// Pos is the entry's index in File.Entries (set by the index).
func (e *Entry) Pos() int { return int(e.pos) }

// setRaw replaces the entry's bytes with an in-memory JSON object (migration).
func (e *Entry) setRaw(raw []byte) {
	e.mem, e.off, e.src = unsafe.SliceData(raw), int64(len(raw)), nil
	if len(raw) == 0 {
		e.mem = nil
	}
}

// invalidParent marks a parentId that is present but not a string: Pi never finds
// such a parent, so the entry is an orphan.
const invalidParent = "\x00invalid-parent"

// rawString decodes a JSON string without copying it: session data is never modified
// once read (see jsjson.StringView).
func rawString(r []byte) (string, bool) { return jsjson.StringView(r) }

// view is rawString for a member of the line being decoded: a line that holds nothing
// to unescape or check (jsjson.EntryScan.Plain) gives its strings' bytes as they are.
func (d *decoder) view(r []byte) (string, bool) {
	if d != nil && d.scan.Plain {
		return jsjson.PlainView(r)
	}
	return jsjson.StringView(r)
}

func isNull(r []byte) bool {
	return len(r) == 0 || bytes.Equal(r, []byte("null"))
}

// decoder decodes the lines of a streamed file: what an entry keeps is copied out of the
// line (the read buffer is reused), entries and messages are allocated in blocks, and
// the message's body is left in the file.
type decoder struct {
	// inMemory keeps the line as the entry's bytes and its strings as views of it (the
	// caller never reuses it); single allocates each entry on its own (one line), and
	// its message with its body in memory.
	inMemory, single bool
	arena
	entries []Entry
	msgs    []Message
	usages  []Usage
	// blocks of each kind allocated so far (see next)
	entryBlocks, msgBlocks, usageBlocks int
	scan                                jsjson.EntryScan
	calls                               []pendingCall // tool calls of the line being decoded
	texts                               []pendingText // its text blocks
	names                               []string
	// preview asks for the entry's preview (previewText), which loading skips.
	preview     bool
	previewText string
	pv          previewInput
	lw          lineWriter
	// lastID is the id of the entry decoded last: most entries name it as their
	// parent, and share its copy rather than make one of their own.
	lastID string
}

type pendingText struct {
	contentAt int
	raw       []byte
}

type pendingCall struct {
	contentAt int
	ToolCall
}

func (d *decoder) entry() *Entry {
	if d.single {
		return &Entry{}
	}
	return next(&d.entries, &d.entryBlocks)
}

func (d *decoder) message() *Message {
	if d.single {
		return &Message{}
	}
	return next(&d.msgs, &d.msgBlocks)
}

func (d *decoder) usage() *Usage {
	if d.single {
		return &Usage{}
	}
	return next(&d.usages, &d.usageBlocks)
}

// next hands out a zeroed element of a block, allocating a new block when the last is
// full: fewer, denser allocations than one per entry. The first blocks are about 32 KB,
// at most the allocator's largest size class, so that none is rounded up to whole pages
// (256 entries of 168 bytes were: 43 KB in 48) and a small session stays small. A load
// that has filled slabBlocks of them is a large one: its later blocks are 256 KB, their
// pages faulted in at once (prefault) rather than one fault per page as they fill, which
// on a virtual machine costs microseconds a page.
func next[T any](block *[]T, n *int) *T {
	if len(*block) == cap(*block) {
		var zero T
		size := 32 << 10
		if *n >= slabBlocks {
			size = 256 << 10
		}
		*n++
		*block = make([]T, 0, max(1, size/int(unsafe.Sizeof(zero))))
		if size > 32<<10 {
			prefault(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(*block))), cap(*block)*int(unsafe.Sizeof(zero))))
		}
	}
	var zero T
	*block = append(*block, zero)
	return &(*block)[len(*block)-1]
}

// slabBlocks is how many small blocks of a kind a decoder fills before it takes large
// ones.
const slabBlocks = 4

// block records a tool call while the line is scanned (see jsjson.EntryScan.Block).
func (d *decoder) block(contentAt int, block, args []jsjson.Field) {
	var typ, name, id string
	for _, f := range block {
		switch f.Key {
		case "type":
			typ, _ = d.view(f.Value)
		case "name":
			name, _ = d.view(f.Value)
		case "id":
			id, _ = d.view(f.Value)
		}
	}
	if typ == "text" {
		if !d.preview {
			return
		}
		var text []byte
		for _, f := range block {
			if f.Key == "text" {
				text = f.Value
			}
		}
		d.texts = append(d.texts, pendingText{contentAt, text})
		return
	}
	if typ != "toolCall" {
		return
	}
	path := ""
	for _, f := range args { // the last "path" wins, as in JSON.parse
		if f.Key == "path" {
			path, _ = d.view(f.Value)
		}
	}
	d.calls = append(d.calls, pendingCall{contentAt, ToolCall{Name: name, ID: id, Path: path}})
}

// offsetIn is the offset of v, a sub-slice of line, in line.
func offsetIn(line, v []byte) int {
	if len(v) == 0 {
		return -1
	}
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(line))))
}

// decodeEntry validates one line as a JSON object (as JSON.parse would) and decodes its
// envelope and, for a message entry, the message's metadata. A nil decoder decodes one
// line in memory.
func decodeEntry(line []byte, d *decoder) (*Entry, error) {
	// One pass validates the line and reads the envelope, the message's members, its
	// usage and its tool calls.
	if d == nil {
		d = &decoder{inMemory: true, single: true}
	}
	es := &d.scan
	if es.Block == nil {
		es.Block = d.block
	}
	d.calls, d.texts = d.calls[:0], d.texts[:0]
	if err := jsjson.ScanEntry(line, es); err != nil {
		return nil, err
	}
	e := d.entry()
	var parent, msgRaw []byte
	var typ, id, ts, customType string
	hasParent := false
	for _, f := range es.Fields { // later duplicates win, as in JSON.parse
		switch f.Key {
		case "message":
			msgRaw = f.Value
		case "type":
			typ, _ = d.view(f.Value)
		case "id":
			id, _ = d.view(f.Value)
		case "parentId":
			parent, hasParent = f.Value, true
		case "timestamp":
			ts, _ = d.view(f.Value)
		case "customType":
			customType, _ = d.view(f.Value)
		}
	}
	e.Type, e.ID, e.Timestamp = typ, id, ts
	if hasParent && !isNull(parent) {
		if p, ok := d.view(parent); ok {
			e.ParentID = p
		} else {
			e.ParentID = invalidParent
		}
	}
	e.pin = e.Type == TypeCustom && customType == PinCustomType
	if d.inMemory {
		e.setRaw(line)
	} else {
		e.Type = internKnown(typ, &d.arena)
		e.ID, e.Timestamp = d.str(id), d.str(ts)
		if e.ParentID == d.lastID {
			e.ParentID = d.lastID
		} else if e.ParentID != invalidParent {
			e.ParentID = d.str(e.ParentID)
		}
		d.lastID = e.ID
	}
	var pv *previewInput
	if d.preview {
		pv = &d.pv
		*pv = previewInput{top: es.Fields, texts: pv.texts[:0], toolNames: pv.toolNames[:0], customType: customType}
	}
	if e.Type == TypeMessage && es.MessageFound {
		if pv != nil {
			for _, f := range es.Message {
				if f.Key == "content" {
					pv.content = f.Value
				}
			}
			at := offsetIn(line, pv.content)
			for _, t := range d.texts {
				if t.contentAt == at {
					pv.texts = append(pv.texts, t.raw)
				}
			}
			for _, c := range d.calls {
				if c.contentAt == at {
					pv.toolNames = append(pv.toolNames, c.Name)
				}
			}
		}
		m := messageFromFields(msgRaw, es.Message, d, line)
		if pv != nil {
			pv.m = m
		}
		if m.body == nil {
			m.ent = e
		} else if m.Role == RoleAssistant && !d.preview {
			// Tool calls are what file tracking and compaction read of every assistant
			// message: decode its blocks now, on the loader's goroutines, not later on one.
			m.Blocks()
		}
		e.msg.Store(m)
	}
	if pv != nil {
		entryPreview(e, pv, &d.lw)
		d.previewText = string(d.lw.text())
	}
	return e, nil
}

// Field decodes one top-level field of the entry into v. Missing fields leave v untouched
// and report false.
func (e *Entry) Field(name string, v any) bool {
	raw := e.RawField(name)
	if raw == nil {
		return false
	}
	return json.Unmarshal(raw, v) == nil
}

// RawField returns the raw JSON of one top-level field, or nil when absent.
func (e *Entry) RawField(name string) json.RawMessage {
	v, ok := jsjson.LookupField(e.Raw(), name)
	if !ok {
		return nil
	}
	return v
}

// TimeMillis is new Date(timestamp).getTime() of the entry, or NaN-like ok=false.
func (e *Entry) TimeMillis() (float64, bool) { return ParseJSDate(e.Timestamp) }

// ParseJSDate parses an ISO timestamp as JavaScript's Date does for Pi's timestamps.
func ParseJSDate(s string) (float64, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return float64(t.UnixMilli()), true
		}
	}
	return 0, false
}

// FileDetails are the file lists stored in compaction and branch-summary details.
type FileDetails struct {
	ReadFiles     []string
	ModifiedFiles []string
	Present       bool // details is an object
}

func (e *Entry) fileDetails() FileDetails {
	raw := e.RawField("details")
	var d FileDetails
	if len(raw) == 0 || raw[0] != '{' {
		return d
	}
	d.Present = true
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return d
	}
	d.ReadFiles = stringArray(m["readFiles"])
	d.ModifiedFiles = stringArray(m["modifiedFiles"])
	return d
}

// stringArray decodes a JSON array, keeping only string members (Pi adds whatever the
// array holds to a Set; non-strings never match a tool-call path).
func stringArray(raw json.RawMessage) []string {
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, ok := rawString(it); ok {
			out = append(out, s)
		}
	}
	return out
}

func (e *Entry) truthy(name string) bool {
	raw := e.RawField(name)
	return truthyRaw(raw)
}

func truthyRaw(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch string(raw) {
	case "null", "false", "0", `""`, "-0":
		return false
	}
	if raw[0] >= '0' && raw[0] <= '9' || raw[0] == '-' {
		var f float64
		if json.Unmarshal(raw, &f) == nil && f == 0 {
			return false
		}
	}
	return true
}

// Summarized is what a compaction and a branch_summary entry both carry.
type Summarized struct {
	Summary  string
	Details  FileDetails
	FromHook bool
}

func (e *Entry) summarized() Summarized {
	s := Summarized{Details: e.fileDetails(), FromHook: e.truthy("fromHook")}
	e.Field("summary", &s.Summary)
	return s
}

// Compaction is the decoded body of a compaction entry.
type Compaction struct {
	Summarized
	FirstKeptEntryID string
	TokensBefore     float64
}

// Compaction decodes a compaction entry's fields.
func (e *Entry) Compaction() Compaction {
	c := Compaction{Summarized: e.summarized()}
	e.Field("firstKeptEntryId", &c.FirstKeptEntryID)
	e.Field("tokensBefore", &c.TokensBefore)
	return c
}

// BranchSummary is the decoded body of a branch_summary entry.
type BranchSummary struct {
	Summarized
	FromID string
}

// BranchSummary decodes a branch_summary entry's fields.
func (e *Entry) BranchSummary() BranchSummary {
	b := BranchSummary{Summarized: e.summarized()}
	e.Field("fromId", &b.FromID)
	return b
}

// LabelChange is the decoded body of a label entry. An empty Label clears.
type LabelChange struct {
	TargetID string
	Label    string
}

// Label decodes a label entry's fields.
func (e *Entry) Label() LabelChange {
	var l LabelChange
	e.Field("targetId", &l.TargetID)
	e.Field("label", &l.Label)
	return l
}

// StringField returns a string field or "".
func (e *Entry) StringField(name string) string {
	var s string
	e.Field(name, &s)
	return s
}

// IDOrNull is an entry id as a JSON value: null for none, as Pi writes a first entry's
// parentId and a tree's missing leaf.
func IDOrNull(id string) any {
	if id == "" {
		return nil
	}
	return id
}
