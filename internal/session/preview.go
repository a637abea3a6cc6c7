package session

import (
	"unicode"
	"unicode/utf16"
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
// at most PreviewRunes runes. It is made from the entry's bytes on first use, and kept:
// a tree view shows a page of entries at a time, so loading a session makes none.
func (e *Entry) Preview() string {
	if p := e.preview.Load(); p != nil {
		return *p
	}
	s := ""
	if raw := e.Raw(); raw != nil {
		d := &decoder{inMemory: true, single: true, preview: true}
		if _, err := decodeEntry(raw, d); err == nil {
			s = d.previewText
		}
	}
	e.preview.Store(&s)
	return s
}

// previewInput is what a preview is made of, gathered during the scan of a line.
type previewInput struct {
	top        []jsjson.Field
	m          *Message
	content    []byte   // the message's content (string or array)
	texts      [][]byte // raw "text" values of its text blocks, in order
	toolNames  []string
	customType string
}

// entryPreview composes an entry's preview (the rules of a tree view: what a reader
// recognises a line by) into w, reading no more of the line than the preview shows.
func entryPreview(e *Entry, in *previewInput, w *lineWriter) {
	w.reset()
	switch e.Type {
	case TypeMessage:
		m := in.m
		if m == nil {
			return
		}
		switch m.Role {
		case RoleBashExecution:
			w.str("$ ")
			w.str(clipText(m.Bash().Command))
		case RoleAssistant:
			if m.StopReason == "error" {
				w.str("error: ")
				w.str(clipText(m.ErrorMessage()))
				return
			}
			in.firstText(w)
			if len(in.toolNames) > 0 {
				w.str(" [")
				for i, n := range in.toolNames {
					if i > 0 {
						w.str(", ")
					}
					w.str(n)
				}
				w.str("]")
			}
		case RoleToolResult:
			w.str(m.ToolName)
			w.str(": ")
			in.firstText(w)
		default:
			in.firstText(w)
		}
	case TypeCompaction, TypeBranchSummary:
		w.json(in.field("summary"))
	case TypeLabel:
		w.fields(in, "label", " → ", "targetId")
	case TypeModelChange:
		w.fields(in, "provider", "/", "modelId")
	case TypeThinkingLevelChange:
		s, _ := rawString(in.field("thinkingLevel"))
		w.str(s)
	case TypeSessionInfo:
		s, _ := rawString(in.field("name"))
		w.str(s)
	case TypeCustom, TypeCustomMessage:
		if in.customType != PinCustomType {
			w.str(in.customType)
			return
		}
		data := in.field("data")
		t, _ := jsjson.LookupField(data, "targetId")
		target, _ := rawString(t)
		p, _ := jsjson.LookupField(data, "pinned")
		if p != nil && string(p) == "true" {
			w.str("pin → ")
		} else {
			w.str("unpin → ")
		}
		w.str(target)
	}
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

// firstText writes the start of the message's text: a string content, or its text
// blocks joined by spaces, each clipped to previewClip bytes, until previewClip bytes
// were taken.
func (in *previewInput) firstText(w *lineWriter) {
	if len(in.content) > 0 && in.content[0] == '"' {
		w.json(in.content)
		return
	}
	taken := 0
	for _, raw := range in.texts {
		if w.full() {
			return
		}
		if taken > 0 {
			w.str(" ")
			taken++
		}
		taken += w.json(raw)
		if taken >= previewClip {
			return
		}
	}
}

func clipText(s string) string {
	if len(s) > previewClip {
		return s[:previewClip]
	}
	return s
}

// lineWriter builds a preview as strings.Join(strings.Fields(text), " ") cut to
// PreviewRunes runes would, fed piece by piece, and stops taking input once the cut is
// certain. It is reused from line to line.
type lineWriter struct {
	buf   []byte
	cut   []byte
	runes int
	space bool // whitespace seen since the last rune written
}

func (w *lineWriter) reset() { w.buf, w.runes, w.space = w.buf[:0], 0, false }

func (w *lineWriter) full() bool { return w.runes > PreviewRunes }

// fields writes two string members of the entry with sep between them.
func (w *lineWriter) fields(in *previewInput, a, sep, b string) {
	first, _ := rawString(in.field(a))
	second, _ := rawString(in.field(b))
	w.str(first)
	w.str(sep)
	w.str(second)
}

func (w *lineWriter) str(s string) {
	for i := 0; i < len(s) && !w.full(); {
		c := s[i]
		if c < utf8.RuneSelf {
			w.ascii(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError && unicode.IsSpace(r) {
			w.space = w.runes > 0
		} else {
			w.rune(s[i : i+n])
		}
		i += n
	}
}

func (w *lineWriter) ascii(c byte) {
	if asciiSpace[c] {
		w.space = w.runes > 0
		return
	}
	if w.space {
		w.space = false
		w.buf = append(w.buf, ' ')
		if w.runes++; w.full() {
			return
		}
	}
	w.buf = append(w.buf, c)
	w.runes++
}

func (w *lineWriter) rune(b string) {
	if w.space {
		w.space = false
		w.buf = append(w.buf, ' ')
		if w.runes++; w.full() {
			return
		}
	}
	w.buf = append(w.buf, b...)
	w.runes++
}

// json writes the first previewClip bytes of the decoded value of a JSON string
// (nothing for other values) and returns how many bytes that was. It decodes as it
// goes (escapes, surrogate pairs; invalid UTF-8 becomes U+FFFD, as a decoder makes it)
// and stops as soon as the preview is full.
func (w *lineWriter) json(raw []byte) int {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return 0
	}
	inner := raw[1 : len(raw)-1]
	taken := 0
	var enc [utf8.UTFMax]byte
	for i := 0; i < len(inner) && taken < previewClip; {
		if w.full() {
			// Nothing more shows; what was taken no longer matters either.
			return previewClip
		}
		// A run of plain ASCII, with the writer's state in registers.
		buf, runes, space := w.buf, w.runes, w.space
		for i < len(inner) && taken < previewClip && runes <= PreviewRunes {
			c := inner[i]
			if c >= utf8.RuneSelf || c == '\\' {
				break
			}
			i++
			taken++
			if asciiSpace[c] {
				space = runes > 0
				continue
			}
			if space {
				space = false
				buf = append(buf, ' ')
				if runes++; runes > PreviewRunes {
					break
				}
			}
			buf = append(buf, c)
			runes++
		}
		w.buf, w.runes, w.space = buf, runes, space
		if i >= len(inner) || taken >= previewClip || w.full() {
			continue
		}
		var r rune
		if inner[i] == '\\' {
			r, i = unescape(inner, i)
		} else {
			var n int
			r, n = utf8.DecodeRune(inner[i:])
			i += n // an invalid byte decodes as U+FFFD, one byte long
		}
		n := utf8.EncodeRune(enc[:], r)
		if taken+n > previewClip {
			// The clip cuts this rune: its first bytes stay, each an invalid rune.
			for _, b := range enc[:previewClip-taken] {
				w.rune(string(b))
			}
			return previewClip
		}
		taken += n
		if r < utf8.RuneSelf {
			w.ascii(byte(r))
		} else if unicode.IsSpace(r) {
			w.space = w.runes > 0
		} else {
			w.rune(string(enc[:n]))
		}
	}
	return taken
}

// asciiSpace marks the ASCII bytes unicode.IsSpace accepts.
var asciiSpace = [256]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true}

// unescape decodes the escape at b[i] (valid JSON) and returns the rune and the index
// after it. A lone surrogate decodes to U+FFFD.
func unescape(b []byte, i int) (rune, int) {
	switch b[i+1] {
	case 'n':
		return '\n', i + 2
	case 't':
		return '\t', i + 2
	case 'r':
		return '\r', i + 2
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'u':
		r := hex4(b[i+2 : i+6])
		if utf16.IsSurrogate(r) {
			if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if pair := utf16.DecodeRune(r, hex4(b[i+8:i+12])); pair != utf8.RuneError {
					return pair, i + 12
				}
			}
			return utf8.RuneError, i + 6
		}
		return r, i + 6
	default: // " \ /
		return rune(b[i+1]), i + 2
	}
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// text is the preview: the collapsed text, cut with an ellipsis when longer than
// PreviewRunes runes.
func (w *lineWriter) text() []byte {
	if !w.full() {
		return w.buf
	}
	// As string([]rune(s)[:PreviewRunes-1]) + "…": invalid bytes become U+FFFD.
	w.cut = w.cut[:0]
	if jsjson.PlainASCII(w.buf) {
		w.cut = append(w.cut, w.buf[:PreviewRunes-1]...)
	} else {
		for i, n := 0, 0; n < PreviewRunes-1; n++ {
			r, size := utf8.DecodeRune(w.buf[i:])
			w.cut = utf8.AppendRune(w.cut, r)
			i += size
		}
	}
	w.cut = append(w.cut, "…"...)
	return w.cut
}
