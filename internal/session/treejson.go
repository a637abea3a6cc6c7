package session

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

// TreeJSON converts the nodes of Tree to their JSON form. It walks iteratively: a deep
// linear session must not overflow the stack.
func TreeJSON(nodes []*Node) []*TreeJSONNode {
	out := make([]*TreeJSONNode, 0, len(nodes))
	type work struct {
		src *Node
		dst *TreeJSONNode
	}
	var stack []work
	for _, n := range nodes {
		t := treeJSONNode(n)
		out = append(out, t)
		stack = append(stack, work{n, t})
	}
	for len(stack) > 0 {
		w := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range w.src.Children {
			t := treeJSONNode(c)
			w.dst.Children = append(w.dst.Children, t)
			stack = append(stack, work{c, t})
		}
	}
	return out
}

// treeJSONNode is n without its children (an empty list, never null, as in Pi).
func treeJSONNode(n *Node) *TreeJSONNode {
	return &TreeJSONNode{ID: n.Entry.ID, Type: n.Entry.Type, Role: n.Entry.Role(), Label: n.Label, Children: []*TreeJSONNode{}}
}
