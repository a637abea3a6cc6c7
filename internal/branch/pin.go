package branch

import (
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// SetPin pins (or unpins) an entry: a custom entry (customType "pi-lsp/pin") appended as
// a child of the current leaf, as labels are. It never enters the LLM context; pinned user
// messages are quoted verbatim in every later summary.
func SetPin(path, entryID string, pinned bool) (*session.Entry, error) {
	return mark(path, entryID, session.TypeCustom, session.Field{Key: "customType", Value: session.PinCustomType},
		session.Field{Key: "data", Value: map[string]any{"targetId": entryID, "pinned": pinned}})
}

// mark appends one entry of typ with fields that marks entryID (a label, a pin) as a
// child of Pi's leaf (the last entry). An unknown entry is an error and nothing is
// written.
func mark(path, entryID, typ string, fields ...session.Field) (*session.Entry, error) {
	f, err := session.Load(path)
	if err != nil {
		return nil, err
	}
	ix := session.NewIndex(f)
	if entryID == "" || ix.Entry(entryID) == nil {
		return nil, notFound(entryID)
	}
	if err := writable(f); err != nil {
		return nil, err
	}
	written, err := session.Append(path, taken(ix), []session.NewEntry{{Type: typ, ParentID: ix.LeafID(), Fields: fields}})
	if err != nil {
		return nil, err
	}
	return written[0], nil
}

func taken(ix *session.Index) map[string]*session.Entry {
	m := make(map[string]*session.Entry, len(ix.Entries()))
	for _, e := range ix.Entries() {
		m[e.ID] = e
	}
	return m
}
