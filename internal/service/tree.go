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
	Leaf string
	// onPath and editable are by entry position: tree nodes and path entries are the
	// final entries of their ids (and a session of many entries is marked without a map
	// of its ids, which cost most of a tree page on a 100 MB session).
	onPath, editable []bool
	pins             map[string]bool
	edits            map[string]contextedit.State
}

// MarksOf reads the marks of ix's tree at its leaf: a walk over the leaf's path and one
// projection of it, not over every entry.
func MarksOf(ix *session.Index) TreeMarks {
	leaf := ix.LeafID()
	n := len(ix.Entries())
	path, proj := ix.ProjectedPath(leaf) // kept by the index for its leaf
	m := TreeMarks{Leaf: leaf, onPath: make([]bool, n), editable: contextedit.Editable(proj, n), pins: ix.Pins(), edits: contextedit.StatesIn(proj.Entries)}
	for _, e := range path {
		m.onPath[e.Pos()] = true
	}
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
func (m TreeMarks) Editable(e *session.Entry) bool {
	return e.Pos() < len(m.editable) && m.editable[e.Pos()]
}
