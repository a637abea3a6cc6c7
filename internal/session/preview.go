package session

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// PreviewRunes bounds an entry's one-line preview.
const PreviewRunes = 120

// previewClip bounds how much of each text a preview looks at, in bytes (a rune is at
// most four).
const previewClip = PreviewRunes * 4

// Preview is a one-line description of the entry for tree views: the start of its text
// (a command, a tool's name and result, a summary, a label) with whitespace collapsed,
// at most PreviewRunes runes. It is computed while the line is read, so that showing
// the tree of a large session reads nothing again.
func (e *Entry) Preview() string { return e.preview }

// CustomType is the customType of a custom or custom_message entry.
func (e *Entry) CustomType() string { return e.customType }

// previewInput is what a preview is made of, gathered during the scan of a line.
type previewInput struct {
	top       []jsjson.Field
	m         *Message
	content   []byte   // the message's content (string or array)
	texts     [][]byte // raw "text" values of its text blocks, in order
	toolNames []string
}

// entryPreview composes an entry's preview (the rules of a tree view: what a reader
// recognises a line by).
func entryPreview(e *Entry, in *previewInput) string {
	var s string
	switch e.Type {
	case TypeMessage:
		m := in.m
		if m == nil {
			return ""
		}
		switch m.Role {
		case RoleBashExecution:
			s = "$ " + clipText(m.Command)
		case RoleAssistant:
			s = in.firstText()
			if len(in.toolNames) > 0 {
				s = strings.TrimSpace(s + " [" + strings.Join(in.toolNames, ", ") + "]")
			}
			if m.StopReason == "error" {
				s = "error: " + clipText(m.ErrorMessage)
			}
		case RoleToolResult:
			s = m.ToolName + ": " + in.firstText()
		default:
			s = in.firstText()
		}
	case TypeCompaction, TypeBranchSummary:
		s = in.clipped(in.field("summary"))
	case TypeLabel:
		label, _ := rawString(in.field("label"))
		target, _ := rawString(in.field("targetId"))
		s = label + " → " + target
	case TypeModelChange:
		p, _ := rawString(in.field("provider"))
		id, _ := rawString(in.field("modelId"))
		s = p + "/" + id
	case TypeThinkingLevelChange:
		s, _ = rawString(in.field("thinkingLevel"))
	case TypeSessionInfo:
		s, _ = rawString(in.field("name"))
	case TypeCustom, TypeCustomMessage:
		s = e.customType
		if s == PinCustomType {
			data := in.field("data")
			t, _ := jsjson.LookupField(data, "targetId")
			target, _ := rawString(t)
			p, _ := jsjson.LookupField(data, "pinned")
			s = "unpin → " + target
			if p != nil && string(p) == "true" {
				s = "pin → " + target
			}
		}
	}
	return oneLine(s)
}

// field is the last top-level member named key (JSON.parse keeps the last).
func (in *previewInput) field(key string) []byte {
	var v []byte
	for _, f := range in.top {
		if f.Key == key {
			v = f.Value
		}
	}
	return v
}

// firstText is the start of the message's text: a string content, or its text blocks
// joined by spaces, each clipped, until enough for a preview.
func (in *previewInput) firstText() string {
	if len(in.content) > 0 && in.content[0] == '"' {
		return in.clipped(in.content)
	}
	var b strings.Builder
	for _, raw := range in.texts {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(in.clipped(raw))
		if b.Len() >= previewClip {
			break
		}
	}
	return b.String()
}

// clipped decodes at most previewClip bytes of a JSON string ("" for other values).
func (in *previewInput) clipped(raw []byte) string {
	s, _ := jsjson.StringPrefix(raw, previewClip)
	return s
}

func clipText(s string) string {
	if len(s) > previewClip {
		return s[:previewClip]
	}
	return s
}

// oneLine collapses whitespace runs to one space, trims, and cuts to PreviewRunes
// runes (the last one an ellipsis when cut). It stops reading once the cut is certain.
func oneLine(s string) string {
	var b []byte
	runes, space := 0, false
	for i := 0; i < len(s) && runes <= PreviewRunes; {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError && unicode.IsSpace(r) {
			space = runes > 0
			i += w
			continue
		}
		if space {
			b = append(b, ' ')
			runes++
			space = false
			if runes > PreviewRunes {
				break
			}
		}
		b = append(b, s[i:i+w]...)
		runes++
		i += w
	}
	if runes > PreviewRunes {
		r := []rune(string(b))
		return string(r[:PreviewRunes-1]) + "…"
	}
	return string(b)
}
