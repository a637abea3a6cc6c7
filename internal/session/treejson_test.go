package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// TreeJSON keeps the children's order at every depth, gives a leaf an empty list (not
// null), and a deep linear chain comes out whole; a cancelled walk returns ctx's error.
func TestTreeJSONOrderDepthAndCancel(t *testing.T) {
	node := func(id string, children ...*session.Node) *session.Node {
		return &session.Node{Entry: &session.Entry{Type: session.TypeLabel, ID: id}, Label: "l" + id, Children: children}
	}
	roots := []*session.Node{node("a", node("b"), node("c", node("d"))), node("e")}
	got, err := session.TreeJSON(context.Background(), roots)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `[{"id":"a","type":"label","label":"la","children":[{"id":"b","type":"label","label":"lb","children":[]},` +
		`{"id":"c","type":"label","label":"lc","children":[{"id":"d","type":"label","label":"ld","children":[]}]}]},` +
		`{"id":"e","type":"label","label":"le","children":[]}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}

	const depth = 100000
	deep := node("0")
	for n, i := deep, 1; i < depth; i++ {
		n.Children = []*session.Node{node("x")}
		n = n.Children[0]
	}
	got, err = session.TreeJSON(context.Background(), []*session.Node{deep})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for c := got; len(c) == 1; c = c[0].Children {
		n++
	}
	if n != depth {
		t.Errorf("a chain of %d nodes came out %d deep", depth, n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := session.TreeJSON(ctx, roots); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled walk returned %v", err)
	}
}
