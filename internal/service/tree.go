package service

import (
	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// TreeMarks is what a session's tree shows of each entry beside the entry itself, seen
// from the session's leaf: the read model every front end draws its tree from (the
// server's nested and flat pi/tree, the CLI's tree), so that the marks are decided once.
type TreeMarks struct {
	// Leaf is the session's leaf ("" before the first entry).
	Leaf     string
	onPath   []bool // by entry position: tree nodes and path entries are the final entries of their ids
	pins     map[string]bool
	edits    map[string]contextedit.State
	editable map[string]bool
}

// MarksOf reads the marks of ix's tree at its leaf: a walk over the leaf's path and one
// projection of it, not over every entry.
func MarksOf(ix *session.Index) TreeMarks {
	leaf := ix.LeafID()
	path := ix.Path(leaf)
	m := TreeMarks{Leaf: leaf, onPath: make([]bool, len(ix.Entries())), pins: ix.Pins(), edits: contextedit.States(path)}
	for _, e := range path {
		m.onPath[e.Pos()] = true
	}
	_, proj := ix.ProjectedPath(leaf)
	m.editable = contextedit.Editable(proj)
	return m
}

// OnPath: e is on the path from the root to the leaf.
func (m TreeMarks) OnPath(e *session.Entry) bool {
	return e.Pos() < len(m.onPath) && m.onPath[e.Pos()]
}

// Pinned: e's id carries a pi-lsp pin.
func (m TreeMarks) Pinned(e *session.Entry) bool { return m.pins[e.ID] }

// ContextEdit is "omitted" or "replaced" for an entry of the path whose context content
// the latest context_edit changes, "" otherwise.
func (m TreeMarks) ContextEdit(e *session.Entry) string { return string(m.edits[e.ID]) }

// Editable: a context edit may name e (a user, assistant, toolResult or custom message of
// the current context: Pi's rule).
func (m TreeMarks) Editable(e *session.Entry) bool { return m.editable[e.ID] }
