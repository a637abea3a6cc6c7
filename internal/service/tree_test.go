package service

import (
	"path/filepath"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// TestMarksOf: on a session with a branch, the entries of the leaf's path and only those
// are on it, the leaf is the index's, and only messages of the path are editable.
func TestMarksOf(t *testing.T) {
	file := filepath.Join(oracle.RepoRoot(), "testdata", "corpus", "genuine-1.6", "tree-nav.jsonl")
	ix := sessiontest.Index(t, file)
	m := MarksOf(ix)
	if m.Leaf == "" || m.Leaf != ix.LeafID() {
		t.Fatalf("leaf %q, the index's %q", m.Leaf, ix.LeafID())
	}
	path := map[string]bool{}
	for _, e := range ix.Path(ix.LeafID()) {
		path[e.ID] = true
	}
	on, off, editable := 0, 0, 0
	var walk func([]*session.Node)
	walk = func(nodes []*session.Node) {
		for _, n := range nodes {
			e := n.Entry
			if m.OnPath(e) != path[e.ID] {
				t.Errorf("%s: on the path %v, in ix.Path %v", e.ID, m.OnPath(e), path[e.ID])
			}
			if m.OnPath(e) {
				on++
			} else {
				off++
			}
			if m.Editable(e) {
				editable++
				if !path[e.ID] || e.Type != session.TypeMessage {
					t.Errorf("%s (%s, on the path %v) is editable", e.ID, e.Type, path[e.ID])
				}
			}
			walk(n.Children)
		}
	}
	walk(ix.Tree())
	if on == 0 || off == 0 || editable == 0 {
		t.Fatalf("%d entries on the path, %d off it, %d editable: the file should have a branch and messages", on, off, editable)
	}
}
