package session

import (
	"context"
	"sort"
)

// FlatNode is one node of the entry tree in depth-first order (children as Tree sorts
// them): the node without its children, its parent's id ("" for a root), its depth and
// how many children it has.
type FlatNode struct {
	Node       Node // Children is nil
	ParentID   string
	Depth      int
	ChildCount int
}

// FlatTree returns the nodes at depth-first positions [offset, offset+limit) of Tree
// (limit 0: to the end) and how many nodes the tree has. A page costs a walk over the
// tree's pointers, not a node per entry; a linear session (every entry the child of the
// line before it or a root: most sessions, until the user moves in the tree) needs no
// walk at all, as its depth-first order is the file's. It stops with ctx's error once
// ctx ends.
func (ix *Index) FlatTree(ctx context.Context, offset, limit int) ([]FlatNode, int, error) {
	if ix.linear {
		return ix.flatLinear(offset, limit), len(ix.File.Entries), nil
	}
	return ix.flatWalk(ctx, offset, limit)
}

// flatLinear is FlatTree of a linear index: the entries from offset in file order, each
// the child of the one before it unless it is a root.
func (ix *Index) flatLinear(offset, limit int) []FlatNode {
	entries := ix.File.Entries
	from := min(max(offset, 0), len(entries))
	to := len(entries)
	if limit > 0 {
		to = min(to, from+limit)
	}
	out := make([]FlatNode, 0, to-from)
	if from == to {
		return out
	}
	// The depth of entries[from] is its distance from the last root at or before it.
	r := sort.Search(len(ix.roots), func(i int) bool { return int(ix.roots[i]) > from }) - 1
	depth := from
	if r >= 0 {
		depth = from - int(ix.roots[r])
	}
	for p := from; p < to; p++ {
		e := entries[p]
		if e.ParentID == "" {
			depth = 0
		}
		n := FlatNode{Node: Node{Entry: e, Label: ix.labels[e.ID]}, ParentID: e.ParentID, Depth: depth}
		if p+1 < len(entries) && entries[p+1].ParentID != "" {
			n.ChildCount = 1
		}
		out = append(out, n)
		depth++
	}
	return out
}

// flatWalk is FlatTree by a depth-first walk of Tree, building the nodes of the page only.
func (ix *Index) flatWalk(ctx context.Context, offset, limit int) ([]FlatNode, int, error) {
	roots := ix.Tree()
	type item struct {
		n      *Node
		parent string
		depth  int
	}
	stack := make([]item, 0, len(roots))
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, item{roots[i], "", 0})
	}
	out := []FlatNode{}
	total := 0
	for ; len(stack) > 0; total++ {
		if total%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if total >= offset && (limit == 0 || total < offset+limit) {
			out = append(out, FlatNode{Node: Node{Entry: it.n.Entry, Label: it.n.Label}, ParentID: it.parent, Depth: it.depth, ChildCount: len(it.n.Children)})
		}
		for i := len(it.n.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{it.n.Children[i], it.n.Entry.ID, it.depth + 1})
		}
	}
	return out, total, nil
}
