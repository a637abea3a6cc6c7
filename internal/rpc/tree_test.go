package rpc_test

import (
	"encoding/json"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// pi/tree's flat form, page by page, is the nested tree walked depth-first: the same
// nodes in the same order, each with its parent, depth and number of children. Linear
// sessions (read in file order) and sessions that branch (walked) alike.
func TestFlatTreePagesAreTheNestedTreeWalked(t *testing.T) {
	sessions := []string{"full-main", "tree-nav", g16Tree, g16Compact, g16Tools}
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: sessions})
	for _, name := range sessions {
		path := e.Session(name)
		nested, err := e.Tree(map[string]any{"session": path})
		if err != nil {
			t.Fatal(err)
		}
		// The nested tree walked depth-first, children in their order.
		var want []rpc.FlatNode
		type item struct {
			n      *rpc.TreeNode
			parent string
			depth  int
		}
		var stack []item
		for i := len(nested.Roots) - 1; i >= 0; i-- {
			stack = append(stack, item{nested.Roots[i], "", 0})
		}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			node := *it.n
			node.Children = nil
			want = append(want, rpc.FlatNode{TreeNode: node, ParentID: it.parent, Depth: it.depth, ChildCount: len(it.n.Children)})
			for i := len(it.n.Children) - 1; i >= 0; i-- {
				stack = append(stack, item{it.n.Children[i], it.n.ID, it.depth + 1})
			}
		}
		if len(want) < 5 {
			t.Fatalf("%s: %d nodes; the test shows nothing", name, len(want))
		}
		var got []rpc.FlatNode
		for offset := 0; ; offset += 7 {
			page, err := e.FlatTree(map[string]any{"session": path, "flat": true, "offset": offset, "limit": 7})
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != len(want) || page.Offset != min(offset, len(want)) {
				t.Fatalf("%s at %d: total %d offset %d, want %d nodes", name, offset, page.Total, page.Offset, len(want))
			}
			if len(page.Nodes) == 0 {
				break
			}
			got = append(got, page.Nodes...)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("%s: the flat pages are not the nested tree walked:\n flat   %s\n nested %s", name, a, b)
		}
	}
}
