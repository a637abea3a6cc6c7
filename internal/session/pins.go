package session

import (
	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// PinCustomType marks the custom entries that pin or unpin an entry.
const PinCustomType = "pi-lsp/pin"

// Pins returns the ids of pinned entries: pin entries anywhere in the file, in file order,
// the last one for a target winning (as labels resolve).
func (ix *Index) Pins() map[string]bool {
	pins := map[string]bool{}
	for _, e := range ix.File.Entries {
		if !e.pin {
			continue
		}
		data := e.RawField("data")
		t, _ := jsjson.LookupField(data, "targetId")
		target, ok := rawString(t)
		if !ok || target == "" {
			continue
		}
		p, _ := jsjson.LookupField(data, "pinned")
		if truthyRaw(p) {
			pins[target] = true
		} else {
			delete(pins, target)
		}
	}
	return pins
}

// PinnedTexts returns the text of every pinned message on a root-first path, in path
// order (user and custom messages; others have no words of the user to keep).
func (ix *Index) PinnedTexts(path []*Entry) []string {
	pins := ix.Pins()
	if len(pins) == 0 {
		return nil
	}
	var out []string
	for _, e := range path {
		if !pins[e.ID] {
			continue
		}
		var m *Message
		switch e.Type {
		case TypeMessage:
			m, _ = e.Message()
		case TypeCustomMessage:
			m = CustomMessage(e)
		}
		if m == nil || (m.Role != RoleUser && m.Role != RoleCustom) {
			continue
		}
		if t := m.Text(""); t != "" {
			out = append(out, t)
		}
	}
	return out
}
