package branch

import (
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// SetPin pins (or unpins) an entry: a custom entry (customType "pi-lsp/pin") appended as
// a child of the current leaf, as labels are. It never enters the LLM context; pinned user
// messages are quoted verbatim in every later summary.
func SetPin(path, entryID string, pinned bool) (*session.Entry, error) {
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
	written, err := session.Append(path, taken(ix), []session.NewEntry{{
		Type:     session.TypeCustom,
		ParentID: ix.LeafID(),
		Fields: []session.Field{
			{Key: "customType", Value: session.PinCustomType},
			{Key: "data", Value: map[string]any{"targetId": entryID, "pinned": pinned}},
		},
	}})
	if err != nil {
		return nil, err
	}
	return written[0], nil
}
