package session

import "context"

// MapTree copies the tree under roots into a tree of T, node by node: convert makes a
// node's copy (without children), adopt appends a child's copy to its parent's. It walks
// iteratively, a deep linear session must not overflow the stack, and stops with ctx's
// error once ctx ends. Children are adopted in the order of Node.Children.
func MapTree[T any](ctx context.Context, roots []*Node, convert func(*Node) T, adopt func(parent, child T)) ([]T, error) {
	type work struct {
		src *Node
		dst T
	}
	out := make([]T, 0, len(roots))
	var stack []work
	for _, r := range roots {
		t := convert(r)
		out = append(out, t)
		stack = append(stack, work{r, t})
	}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range w.src.Children {
			t := convert(c)
			adopt(w.dst, t)
			stack = append(stack, work{c, t})
		}
	}
	return out, nil
}

// TreeJSONNode is one node of the entry tree as Pi's getTree shows it in JSON (its
// entry's id, type and role, its label and its children): what `pi-lsp tree --json`
// prints and what the differential tests compare with Pi's tree.
type TreeJSONNode struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Role     string          `json:"role,omitempty"`
	Label    string          `json:"label,omitempty"`
	Children []*TreeJSONNode `json:"children"`
}

// TreeJSON converts the nodes of Tree to their JSON form (a leaf's children are an
// empty list, never null, as in Pi).
func TreeJSON(ctx context.Context, roots []*Node) ([]*TreeJSONNode, error) {
	return MapTree(ctx, roots,
		func(n *Node) *TreeJSONNode {
			return &TreeJSONNode{ID: n.Entry.ID, Type: n.Entry.Type, Role: n.Entry.Role(), Label: n.Label, Children: []*TreeJSONNode{}}
		},
		func(parent, child *TreeJSONNode) { parent.Children = append(parent.Children, child) })
}
