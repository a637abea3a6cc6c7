package session

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
)

// ProblemKind names a structural defect of a session tree.
type ProblemKind string

const (
	ProblemOrphan      ProblemKind = "orphan"       // parentId names no entry
	ProblemDuplicateID ProblemKind = "duplicate-id" // a later entry reuses an id
	ProblemSelfParent  ProblemKind = "self-parent"  // parentId == id
	ProblemCycle       ProblemKind = "cycle"        // parent links loop
	ProblemMissingID   ProblemKind = "missing-id"   // no string id
)

// Problem is a structural defect found while indexing. None of them stops loading.
type Problem struct {
	Kind    ProblemKind
	EntryID string
	Line    int
	Detail  string
}

func (p Problem) String() string {
	return fmt.Sprintf("line %d: %s %s %s", p.Line, p.Kind, p.EntryID, p.Detail)
}

// Index is the tree view of a session file: entries by id, children, leaf, labels, name.
// Lookups follow Pi: for a duplicated id the later entry wins.
type Index struct {
	File     *File
	byID     idTable // entries by id
	labels   map[string]string
	problems []Problem       // the first MaxReported
	nProblem int             // all of them
	missing  map[string]bool // parent ids that name no entry (yet)
	dups     bool            // some id is used by more than one entry
	// thinkingChanges counts the thinking_level_change entries: a file without any
	// needs no walk of a whole path to find the level in effect.
	thinkingChanges int
	// linear: every entry with a parent is the child of the line before it (and no id
	// repeats), so a path is the run of entries from the last root before its leaf,
	// roots their positions (see pathFrom).
	linear bool
	roots  []int32
	// projected is the path and projection of the leaf asked for last (see
	// ProjectedPath): a context and a compaction of the same leaf, or one request after
	// another, project it once. Append drops it.
	projected atomic.Pointer[leafProjection]
	// shared: a snapshot shares this index's entries (see Index.snapshot), so no entry
	// may be changed any more (linkParents); its owner (Live) reloads instead.
	shared bool
}

type leafProjection struct {
	leaf *Entry
	path []*Entry
	proj Projection
}

// extended is c with e appended to its leaf's path: the projection of the new leaf
// without projecting the path again (an append of a reply to a long session otherwise
// projects all of it). Only when e continues c's leaf and cannot change what the entries
// before it project to: not a compaction or a context edit, and no context edit on the
// path (one may name an id before the entry that has it). nil otherwise. The parts of
// c's arrays it reads are never written: appends go past their ends.
func (c *leafProjection) extended(ix *Index, e *Entry) *leafProjection {
	if e.parent != c.leaf || e.Type == TypeCompaction || e.Type == TypeContextEdit || c.proj.LastEdit >= 0 {
		return nil
	}
	var path []*Entry
	if ix.linear {
		path = ix.pathFrom(e) // a part of the file's entries
	} else {
		path = append(c.path, e) // past c.path's end, as the projection's appends below
	}
	p := c.proj
	at := len(p.Messages)
	p.Messages = appendEntryMessages(p.Messages, e)
	pe := ProjectedEntry{Entry: e}
	if len(p.Messages) > at {
		pe.Messages = p.Messages[at:len(p.Messages):len(p.Messages)]
	}
	p.Entries = append(p.Entries, pe)
	return &leafProjection{leaf: e, path: path, proj: p}
}

// ProjectedPath is Path(from) with its projection (ProjectPath), both kept until the
// index changes: callers must not modify either. nil and an empty projection when from
// names no entry.
func (ix *Index) ProjectedPath(from string) ([]*Entry, Projection) {
	e := ix.Entry(from)
	if e == nil {
		return nil, ProjectPath(nil)
	}
	return ix.projectionOf(e)
}

func (ix *Index) projectionOf(leaf *Entry) ([]*Entry, Projection) {
	if c := ix.projected.Load(); c != nil && c.leaf == leaf {
		return c.handedOut()
	}
	path := ix.pathFrom(leaf)
	c := &leafProjection{leaf: leaf, path: path, proj: ProjectPath(path)}
	ix.projected.Store(c)
	return c.handedOut()
}

// handedOut is c's path and projection with their capacity cut, so that a caller's
// append copies them instead of writing where an extension of c appends.
func (c *leafProjection) handedOut() ([]*Entry, Projection) {
	p := c.proj
	p.Entries, p.Messages = p.Entries[:len(p.Entries):len(p.Entries)], p.Messages[:len(p.Messages):len(p.Messages)]
	return c.path[:len(c.path):len(c.path)], p
}

// NewIndex indexes a parsed file.
func NewIndex(f *File) *Index {
	ix := &Index{
		File:   f,
		byID:   newIDTable(len(f.Entries)),
		labels: make(map[string]string),
	}
	// Most entries are children of the line before them. While each is indexed, it is
	// linked to that line when it names it; a file where all do (and no id repeats)
	// needs no lookup, and can hold no orphan, self-parent or cycle (every parent lies
	// before its child), so the passes that link and check the others are skipped.
	dups, simple := false, true
	var prev *Entry
	var roots []int32
	for i, e := range f.Entries {
		dups = ix.add(e, i) || dups
		e.parent = nil
		if e.ParentID != "" {
			if prev != nil && prev.ID == e.ParentID {
				e.parent = prev
			} else {
				simple = false
			}
		} else {
			roots = append(roots, int32(i))
		}
		prev = e
	}
	ix.dups = dups
	if simple && !dups {
		ix.missing = map[string]bool{}
		ix.linear, ix.roots = true, roots
		return ix
	}
	ix.linkParentsFast(dups)
	ix.findProblems()
	return ix
}

// linkParentsFast is linkParents for a freshly indexed file: most entries are children
// of the line before them, which needs no lookup when no id is duplicated (with
// duplicates, the later entry of an id is the parent, so every link is looked up).
func (ix *Index) linkParentsFast(dups bool) {
	if dups {
		ix.linkParents()
		return
	}
	ix.missing = map[string]bool{}
	var prev *Entry
	for _, e := range ix.File.Entries {
		e.parent = nil
		if e.ParentID != "" {
			if prev != nil && prev.ID == e.ParentID {
				e.parent = prev
			} else if e.parent = ix.Entry(e.ParentID); e.parent == nil {
				ix.missing[e.ParentID] = true
			}
		}
		prev = e
	}
}

// linkParents resolves every entry's parent pointer (Pi's byId lookup: for a duplicated
// id the later entry), so path walks follow pointers instead of hashing ids.
func (ix *Index) linkParents() {
	ix.missing = map[string]bool{}
	for _, e := range ix.File.Entries {
		e.parent = nil
		if e.ParentID != "" {
			e.parent = ix.Entry(e.ParentID)
			if e.parent == nil {
				ix.missing[e.ParentID] = true
			}
		}
	}
}

// add indexes an entry and reports whether its id was already taken.
func (ix *Index) add(e *Entry, pos int) (dup bool) {
	if e.ID == "" {
		ix.problem(Problem{Kind: ProblemMissingID, Line: e.Line, Detail: e.Type})
	}
	if dup = ix.byID.put(pos, ix.File.Entries); dup && e.ID != "" {
		ix.problem(Problem{Kind: ProblemDuplicateID, EntryID: e.ID, Line: e.Line})
	}
	e.pos = int32(pos)
	if e.Type == TypeThinkingLevelChange {
		ix.thinkingChanges++
	}
	if e.Type == TypeLabel {
		l := e.Label()
		if l.Label != "" {
			ix.labels[l.TargetID] = l.Label
		} else {
			delete(ix.labels, l.TargetID)
		}
	}
	return dup
}

// relinks reports whether Append(e) would change the parent links of entries already
// indexed: e reuses an id, or is the parent an earlier entry names and did not find.
func (ix *Index) relinks(e *Entry) bool { return ix.Entry(e.ID) != nil || ix.missing[e.ID] }

// Append indexes an entry appended to the file (the follower and the writer use it).
// It changes the parent links of indexed entries when e relinks them (see relinks).
func (ix *Index) Append(e *Entry) {
	kept := ix.projected.Swap(nil) // a new entry can change what a leaf's path is
	dup := ix.Entry(e.ID) != nil
	ix.dups = ix.dups || dup
	if ix.linear {
		switch n := len(ix.File.Entries); {
		case dup || n > 0 && e.ParentID != "" && e.ParentID != ix.File.Entries[n-1].ID || n == 0 && e.ParentID != "":
			ix.linear, ix.roots = false, nil
		case e.ParentID == "":
			ix.roots = append(ix.roots, int32(n))
		}
	}
	ix.File.Entries = append(ix.File.Entries, e)
	ix.add(e, len(ix.File.Entries)-1)
	if dup || ix.missing[e.ID] {
		ix.linkParents() // the new entry changes what an existing parentId names
		kept = nil
	} else if e.ParentID != "" {
		e.parent = ix.Entry(e.ParentID)
		if e.parent == nil {
			ix.missing[e.ParentID] = true
		}
	}
	if kept != nil {
		if c := kept.extended(ix, e); c != nil {
			ix.projected.Store(c)
		}
	}
	if e.ParentID == e.ID && e.ID != "" {
		ix.problem(Problem{Kind: ProblemSelfParent, EntryID: e.ID, Line: e.Line})
	} else if e.ParentID != "" && ix.Entry(e.ParentID) == nil {
		ix.orphan(e)
	}
}

// problem records a problem (only the first MaxReported are kept; all are counted).
func (ix *Index) problem(p Problem) {
	ix.nProblem++
	if len(ix.problems) < MaxReported {
		ix.problems = append(ix.problems, p)
	}
}

// orphan records that e's parent names no entry (its detail is built only when kept).
func (ix *Index) orphan(e *Entry) {
	if len(ix.problems) >= MaxReported {
		ix.nProblem++
		return
	}
	ix.problem(Problem{Kind: ProblemOrphan, EntryID: e.ID, Line: e.Line, Detail: "parent " + e.ParentID})
}

func (ix *Index) findProblems() {
	state := make([]uint8, len(ix.File.Entries)) // by file position: 0 unseen, 1 on stack, 2 done
	for _, e := range ix.File.Entries {
		if e.ParentID == "" {
			continue
		}
		if e.ParentID == e.ID {
			ix.problem(Problem{Kind: ProblemSelfParent, EntryID: e.ID, Line: e.Line})
			continue
		}
		if e.parent == nil {
			ix.orphan(e)
		}
	}
	// Cycle detection over parent links (each entry has at most one parent).
	var stack []*Entry
	for _, start := range ix.File.Entries {
		if state[start.pos] != 0 {
			continue
		}
		stack = stack[:0]
		cur := start
		for cur != nil && state[cur.pos] == 0 {
			state[cur.pos] = 1
			stack = append(stack, cur)
			if cur.ParentID == "" || cur.ParentID == cur.ID {
				break
			}
			cur = cur.parent
		}
		if cur != nil && state[cur.pos] == 1 && cur.ParentID != cur.ID && cur.ParentID != "" {
			if len(ix.problems) >= MaxReported {
				ix.nProblem++
			} else {
				ids := []string{}
				for i := len(stack) - 1; i >= 0; i-- {
					ids = append(ids, stack[i].ID)
					if stack[i] == cur {
						break
					}
				}
				ix.problem(Problem{Kind: ProblemCycle, EntryID: cur.ID, Line: cur.Line, Detail: strings.Join(ids, " -> ")})
			}
		}
		for _, e := range stack {
			state[e.pos] = 2
		}
	}
}

// Problems lists structural defects (orphans, duplicate ids, self-parents, cycles): the
// first MaxReported found (see ProblemCount).
func (ix *Index) Problems() []Problem { return ix.problems }

// ProblemCount is the number of defects found, of which Problems lists the first.
func (ix *Index) ProblemCount() int { return ix.nProblem }

// Entry returns the entry with id (the later one for duplicated ids).
func (ix *Index) Entry(id string) *Entry { return ix.byID.get(id, ix.File.Entries) }

// Entries returns all non-header entries in file order (do not modify).
func (ix *Index) Entries() []*Entry { return ix.File.Entries }

// Leaf is Pi's leaf on open: the last entry in file order, or nil for an empty session.
func (ix *Index) Leaf() *Entry {
	if n := len(ix.File.Entries); n > 0 {
		return ix.File.Entries[n-1]
	}
	return nil
}

// LeafID is the id of Leaf, or "".
func (ix *Index) LeafID() string {
	if l := ix.Leaf(); l != nil {
		return l.ID
	}
	return ""
}

// Label is the label currently set on an entry ("" when none).
func (ix *Index) Label(id string) string { return ix.labels[id] }

// Labels returns target id → label for every labelled entry.
func (ix *Index) Labels() map[string]string { return ix.labels }

// Name is the session name: the newest session_info entry's trimmed name (Pi 0.73: an
// empty name clears it).
func (ix *Index) Name() string {
	for i := len(ix.File.Entries) - 1; i >= 0; i-- {
		e := ix.File.Entries[i]
		if e.Type == TypeSessionInfo {
			return strings.TrimSpace(e.StringField("name"))
		}
	}
	return ""
}

// Path returns the entries from the root to from (inclusive), root first, as Pi's
// getBranch does. It stops at a missing parent and, unlike Pi, at a repeated entry, so a
// cycle never hangs. An unknown id gives nil.
func (ix *Index) Path(from string) []*Entry {
	e := ix.Entry(from)
	if e == nil {
		return nil
	}
	return ix.pathFrom(e)
}

// LeafPath is the path of Pi's default leaf (the last entry), as BuildContext("") walks
// it; nil for an empty session.
func (ix *Index) LeafPath() []*Entry {
	if leaf := ix.Leaf(); leaf != nil {
		return ix.pathFrom(leaf)
	}
	return nil
}

func (ix *Index) pathFrom(e *Entry) []*Entry {
	if entries := ix.File.Entries; ix.linear && int(e.pos) < len(entries) && entries[e.pos] == e {
		// The entries from the last root before e, as they lie in the file (the
		// capacity cut, so that an append to the path does not write into the file's).
		if r := sort.Search(len(ix.roots), func(i int) bool { return ix.roots[i] > e.pos }) - 1; r >= 0 {
			return entries[ix.roots[r] : e.pos+1 : e.pos+1]
		}
	}
	// A path is at most as long as the file; a longer walk is a cycle, cut before the
	// first entry it repeats. The walk is latency-bound (each step waits for the parent
	// pointer it follows), so it is made once: leaf first into a slice sized for the
	// usual case (parents earlier in the file, so at most the entry's position plus
	// one), then reversed in place.
	limit := len(ix.File.Entries) + 1
	path := make([]*Entry, 0, min(limit, int(e.pos)+1))
	for cur := e; cur != nil && len(path) <= limit; cur = cur.parent {
		path = append(path, cur)
	}
	if len(path) > limit {
		n := distinctWalk(e)
		path = path[:n]
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	if cap(path) > 2*len(path)+64 {
		path = append([]*Entry(nil), path...) // a short branch of a long file: not the file's length held
	}
	return path
}

// distinctWalk is the number of entries the parent walk from e visits before it repeats
// one, for a walk that runs into a cycle: Brent's cycle detection, which finds the
// cycle's length c and the m entries before it without remembering the entries seen.
func distinctWalk(e *Entry) int {
	power, c := 1, 1
	slow, fast := e, e.parent
	for slow != fast {
		if fast == nil {
			break // the walk ends: no cycle after all
		}
		if power == c {
			slow, power, c = fast, 2*power, 0
		}
		fast = fast.parent
		c++
	}
	if fast == nil {
		n := 0
		for cur := e; cur != nil; cur = cur.parent {
			n++
		}
		return n
	}
	slow, fast = e, e
	for range c {
		fast = fast.parent
	}
	m := 0
	for slow != fast {
		slow, fast = slow.parent, fast.parent
		m++
	}
	return m + c
}

// Children returns the entries whose parentId is id, in file order.
func (ix *Index) Children(id string) []*Entry {
	var out []*Entry
	for _, e := range ix.File.Entries {
		if e.ParentID == id && id != "" {
			out = append(out, e)
		}
	}
	return out
}

// Node is one node of the entry tree.
type Node struct {
	Entry    *Entry
	Label    string
	Children []*Node
}

// Tree returns the roots of the entry tree as Pi's getTree does: roots are entries with
// no parent, a self parent, or a missing parent, in file order; children are sorted by
// timestamp (stable, so ties keep file order). Entries caught in a cycle are not
// reachable from a root and, as in Pi, do not appear.
func (ix *Index) Tree() []*Node {
	entries := ix.File.Entries
	// One node per entry, by file position; the node of an id is its final entry's.
	nodes := make([]Node, len(entries))
	for i, e := range entries {
		nodes[i] = Node{Entry: e}
		if len(ix.labels) > 0 {
			nodes[i].Label = ix.labels[e.ID]
		}
	}
	// Children lists are carved from one array: count, then place (in file order).
	final := func(e *Entry) bool { return !ix.dups || ix.Entry(e.ID) == e }
	hasParent := func(e *Entry) bool { return e.ParentID != "" && e.ParentID != e.ID && e.parent != nil }
	counts := make([]int32, len(entries))
	for _, e := range entries {
		if final(e) && hasParent(e) {
			counts[e.parent.pos]++
		}
	}
	all := make([]*Node, len(entries))
	off := 0
	for i := range nodes {
		nodes[i].Children = all[off : off : off+int(counts[i])]
		off += int(counts[i])
	}
	var roots []*Node
	for i, e := range entries {
		if !final(e) {
			// A duplicated id: its node is the later entry's (as in Pi), placed once,
			// where that entry says. Pi places it again for every earlier duplicate,
			// which can make its tree a cycle (and getTree loop forever).
			continue
		}
		n := &nodes[i]
		if hasParent(e) { // e.parent is the final entry of ParentID (see linkParents)
			p := &nodes[e.parent.pos]
			p.Children = append(p.Children, n)
		} else {
			roots = append(roots, n)
		}
	}
	stack := append([]*Node(nil), roots...)
	visited := make([]bool, len(entries))
	var times []float64
	var oks []bool
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if visited[n.Entry.pos] {
			continue
		}
		visited[n.Entry.pos] = true
		if len(n.Children) > 1 {
			sortByTime(n.Children, &times, &oks)
		}
		stack = append(stack, n.Children...)
	}
	return roots
}

// sortByTime sorts children by timestamp, stably, as Pi's getTree does (an invalid
// timestamp compares false both ways). Times are parsed once per child.
func sortByTime(children []*Node, times *[]float64, oks *[]bool) {
	*times, *oks = (*times)[:0], (*oks)[:0]
	for _, c := range children {
		t, ok := c.Entry.TimeMillis()
		*times, *oks = append(*times, t), append(*oks, ok)
	}
	idx := make([]int, len(children))
	for i := range idx {
		idx[i] = i
	}
	ts, ok := *times, *oks
	sort.SliceStable(idx, func(a, b int) bool {
		return ok[idx[a]] && ok[idx[b]] && ts[idx[a]] < ts[idx[b]]
	})
	sorted := make([]*Node, len(children))
	for i, k := range idx {
		sorted[i] = children[k]
	}
	copy(children, sorted)
}
