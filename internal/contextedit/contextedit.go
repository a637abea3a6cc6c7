// Package contextedit hides, replaces or restores one message of a Pi session's LLM
// context without touching its history, recorded as the context_edit entry Pi 1.6.0's
// SessionManager.appendContextEdit writes, and lists the context by size so a user sees
// what costs the most.
//
// Invariant: an edit appends exactly one whole line to the session file, the entry
// {type:"context_edit", id, parentId:<leaf>, timestamp, targetId, replacement} in Pi's
// key order, and only for a target Pi itself would accept (it exists, is on the active
// branch, is a user, assistant or toolResult message or a custom_message) that is still
// in the projected context (not summarized away by the newest compaction). Any refusal
// writes nothing: the file stays byte-identical.
package contextedit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Errors of an edit. Each is wrapped with the entry id it is about.
var (
	// ErrNotFound: no entry has the target id.
	ErrNotFound = errors.New("not found")
	// ErrNotOnBranch: the target is not on the active branch (the path to Pi's leaf).
	ErrNotOnBranch = errors.New("is not on the active branch")
	// ErrNotEditable: the target is not a user/assistant/toolResult message or a
	// custom_message (Pi's own wording).
	ErrNotEditable = errors.New("does not contribute editable model content")
	// ErrSummarized: the target lies before the newest compaction's first kept entry,
	// so it is no longer in the context (its summary is).
	ErrSummarized = errors.New("is summarized away by compaction")
	// ErrNotEdited: a restore of a target whose context content is already its own.
	ErrNotEdited = errors.New("is not edited: its context content is already the original")
	// ErrOldFormat: a format v1 file, whose ids Pi invents anew at every open.
	ErrOldFormat = errors.New("the session file is format v1 (entries without ids): an edit cannot name its target; open it in Pi once to migrate it")
	// ErrBadReplacement: a restore whose original content is not a string or an array
	// (Pi refuses such a replacement).
	ErrBadReplacement = errors.New("has content that is neither a string nor an array")
)

// Action says what an edit does.
type Action int

const (
	// Omit hides the target (replacement null).
	Omit Action = iota + 1
	// Replace puts Text in place of the target's content.
	Replace
	// Restore writes the target's original content as its replacement, so the
	// projection equals the untouched message again.
	Restore
)

func (a Action) String() string {
	switch a {
	case Omit:
		return "omit"
	case Replace:
		return "replace"
	case Restore:
		return "restore"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Edit is one requested edit.
type Edit struct {
	TargetID string
	Action   Action
	Text     string // the replacement, for Replace
}

// Result is a written edit.
type Result struct {
	// Entry is the context_edit entry as written to the file.
	Entry *session.Entry
	// TokensBefore and TokensAfter are the projected context figure (Pi 1.6.0's
	// estimateProjectedContextTokens, as `pi-lsp context --json` reports it) of the
	// active branch before and after the edit.
	TokensBefore, TokensAfter float64
}

// Apply validates e against the session at path as Pi's appendContextEdit does (and
// refuses a target summarized away by compaction), then appends the context_edit entry.
// It checks, under the writer's lock, that the file is still the one it read.
func Apply(ctx context.Context, path string, e Edit) (*Result, error) {
	written, branch, err := apply(ctx, path, []Edit{e})
	if err != nil {
		return nil, err
	}
	before := session.ProjectedContextTokens(branch).Tokens
	after := session.ProjectedContextTokens(append(branch[:len(branch):len(branch)], written[0])).Tokens
	return &Result{Entry: written[0], TokensBefore: before, TokensAfter: after}, nil
}

// ApplyAll is Apply for several edits (of distinct messages), appended as one chain
// from the leaf in one write: all of them, or none. Pi's overflow recovery hides a
// failed attempt this way (_omitRecoveryAttempt: one omission per message).
func ApplyAll(ctx context.Context, path string, edits []Edit) ([]*session.Entry, error) {
	written, _, err := apply(ctx, path, edits)
	return written, err
}

// apply validates every edit against the session at path and appends them; it returns
// the entries written and the active branch before them.
func apply(ctx context.Context, path string, edits []Edit) ([]*session.Entry, []*session.Entry, error) {
	return applySized(ctx, path, edits, -1)
}

// applySized is apply refused with session.ErrChanged, nothing written, when the file
// is no longer size bytes long (-1: any size), for a job that read it before it
// summarized.
func applySized(ctx context.Context, path string, edits []Edit, size int64) ([]*session.Entry, []*session.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if len(edits) == 0 {
		return nil, nil, errors.New("no edit")
	}
	f, err := session.Load(path)
	if err != nil {
		return nil, nil, err
	}
	if size >= 0 && f.Size != size {
		return nil, nil, session.ErrChanged
	}
	ix := session.NewIndex(f)
	news := make([]session.NewEntry, len(edits))
	for i, e := range edits {
		replacement, err := Validate(ix, e)
		if err != nil {
			return nil, nil, err
		}
		parent := session.ChainToPrevious
		if i == 0 {
			parent = ix.LeafID()
		}
		news[i] = session.NewEntry{Type: session.TypeContextEdit, ParentID: parent, Fields: []session.Field{
			{Key: "targetId", Value: e.TargetID},
			{Key: "replacement", Value: replacement},
		}}
	}
	if err := f.ReadErr(); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	taken := make(map[string]*session.Entry, len(ix.Entries()))
	for _, x := range ix.Entries() {
		taken[x.ID] = x
	}
	written, err := session.AppendIfSize(path, f.Size, taken, news)
	if err != nil {
		return nil, nil, err
	}
	return written, ix.LeafPath(), nil
}

// Validate checks an edit against an index (Pi's leaf is the last entry) and returns the
// replacement to store, as Pi stores it: null, {content: string|array}, a string for an
// assistant or toolResult target becoming one text block.
func Validate(ix *session.Index, e Edit) (json.RawMessage, error) {
	if ix.File != nil && ix.File.MigratedFrom == 1 {
		return nil, ErrOldFormat
	}
	if e.Action != Omit && e.Action != Replace && e.Action != Restore {
		return nil, fmt.Errorf("unknown edit action %v", e.Action)
	}
	target := ix.Entry(e.TargetID)
	if e.TargetID == "" || target == nil {
		return nil, fmt.Errorf("entry %s %w", e.TargetID, ErrNotFound)
	}
	branch := ix.LeafPath()
	onBranch := false
	for _, x := range branch {
		if x.ID == e.TargetID {
			onBranch = true
			break
		}
	}
	if !onBranch {
		return nil, fmt.Errorf("entry %s %w", e.TargetID, ErrNotOnBranch)
	}
	role, ok := editableRole(target)
	if !ok {
		return nil, fmt.Errorf("entry %s %w", e.TargetID, ErrNotEditable)
	}
	proj := session.Project(branch)
	var in *session.ProjectedEntry
	for i := range proj {
		if proj[i].Entry.ID == e.TargetID {
			in = &proj[i]
			break
		}
	}
	if in == nil {
		return nil, fmt.Errorf("entry %s %w", e.TargetID, ErrSummarized)
	}
	switch e.Action {
	case Omit:
		return json.RawMessage("null"), nil
	case Replace:
		return replacementOf(role, quote(e.Text)), nil
	}
	// Restore.
	if stateOf(*in) == Unedited {
		return nil, fmt.Errorf("entry %s %w", e.TargetID, ErrNotEdited)
	}
	orig, err := originalContent(target)
	if err != nil {
		return nil, fmt.Errorf("entry %s %w", e.TargetID, err)
	}
	return replacementOf(role, orig), nil
}

// editableRole is the role Pi edits the entry as (custom for a custom_message), and
// whether Pi edits it at all.
func editableRole(e *session.Entry) (string, bool) {
	switch e.Type {
	case session.TypeCustomMessage:
		return session.RoleCustom, true
	case session.TypeMessage:
		switch r := e.Role(); r {
		case session.RoleUser, session.RoleAssistant, session.RoleToolResult:
			return r, true
		}
	}
	return "", false
}

// replacementOf is {content} with Pi's normalization: a string for an assistant or
// toolResult target becomes [{type:"text", text}].
func replacementOf(role string, content json.RawMessage) json.RawMessage {
	if s, ok := jsjson.StringView(content); ok && (role == session.RoleAssistant || role == session.RoleToolResult) {
		var b strings.Builder
		b.WriteString(`[{"type":"text","text":`)
		jsjson.Quote(&b, s)
		b.WriteString(`}]`)
		content = json.RawMessage(b.String())
	}
	return json.RawMessage(`{"content":` + string(content) + `}`)
}

// originalContent is the content the target puts in the context untouched, as
// JSON.stringify writes it: a missing or null content is [] (Pi's projection of it).
func originalContent(e *session.Entry) (json.RawMessage, error) {
	var raw []byte
	if e.Type == session.TypeCustomMessage {
		raw = e.RawField("content")
	} else if m, err := e.Message(); err == nil {
		raw, _ = jsjson.LookupField(m.Raw(), "content")
	}
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("[]"), nil
	}
	if raw[0] != '"' && raw[0] != '[' {
		return nil, ErrBadReplacement
	}
	s, err := jsjson.StringifyRaw(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReplacement, err)
	}
	return json.RawMessage(s), nil
}

func quote(s string) json.RawMessage {
	var b strings.Builder
	jsjson.Quote(&b, s)
	return json.RawMessage(b.String())
}

// State is how an entry stands in the context.
type State string

const (
	// Unedited: the entry contributes its own messages (no edit, or a restore).
	Unedited State = ""
	// Omitted: the latest edit hides the entry.
	Omitted State = "omitted"
	// Replaced: the latest edit replaces its content with something else.
	Replaced State = "replaced"
)

// stateOf compares what the entry contributes with what it would contribute unedited.
func stateOf(pe session.ProjectedEntry) State {
	orig := session.EntryMessages(pe.Entry)
	if len(pe.Messages) == 0 && len(orig) > 0 {
		return Omitted
	}
	if len(pe.Messages) != len(orig) {
		return Replaced
	}
	for i := range orig {
		if !sameJSON(orig[i].Raw(), pe.Messages[i].Raw()) {
			return Replaced
		}
	}
	return Unedited
}

func sameJSON(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	sa, err1 := jsjson.StringifyRaw(a)
	sb, err2 := jsjson.StringifyRaw(b)
	return err1 == nil && err2 == nil && sa == sb
}

// States maps the entries of a root-first path whose context content is edited (omitted
// or replaced by the latest edit among the context entries) to their state. Entries
// restored to their original content are not in it.
func States(path []*session.Entry) map[string]State {
	return StatesIn(session.Project(path))
}

// StatesIn is States of a path already projected (as the index keeps its leaf's).
func StatesIn(proj []session.ProjectedEntry) map[string]State {
	out := map[string]State{}
	edited := map[string]bool{}
	for _, pe := range proj {
		if t, ok := pe.Entry.ContextEditTarget(); ok {
			edited[t] = true
		}
	}
	for _, pe := range proj {
		if !edited[pe.Entry.ID] {
			continue
		}
		if s := stateOf(pe); s != Unedited {
			out[pe.Entry.ID] = s
		}
	}
	return out
}

// Editable marks, by entry position (Entry.Pos, n the session's entries), the entries of
// a projected leaf path that an edit may name (Apply's rule, Pi's "can this message be
// edited"): the user, assistant and toolResult messages and the custom messages of the
// context, not those a compaction summarized away. The server marks them in its entry
// tree, so that no editor restates the rule; by position, so that a session of many
// entries is marked without a map of its ids.
func Editable(proj session.Projection, n int) []bool {
	out := make([]bool, n)
	for _, pe := range proj.Entries {
		if _, ok := editableRole(pe.Entry); ok && pe.Entry.Pos() < n {
			out[pe.Entry.Pos()] = true
		}
	}
	return out
}
