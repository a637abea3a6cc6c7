package rpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

type sessionParams struct {
	Session string `json:"session"`
}

// EntryHead names a session entry in an answer: its id, its type and, for a message,
// its role (the members every listing of entries starts with).
type EntryHead struct {
	ID   string `json:"id"`
	Type string `json:"type" ts:"EntryType"`
	Role string `json:"role,omitempty" ts:"MessageRole"`
}

// HeadOf is e's EntryHead.
func HeadOf(e *session.Entry) EntryHead {
	return EntryHead{ID: e.ID, Type: e.Type, Role: e.Role()}
}

// TreeNode is one node of pi/tree's answer.
type TreeNode struct {
	EntryHead
	Label     string `json:"label,omitempty"`
	Preview   string `json:"preview,omitempty"`
	Timestamp string `json:"timestamp"`
	OnPath    bool   `json:"onPath"`
	Pinned    bool   `json:"pinned,omitempty"`
	// ContextEdit is "omitted" or "replaced" for an entry of the active branch whose
	// context content the latest context_edit changes.
	ContextEdit string `json:"contextEdit,omitempty" ts:"ContextEditState"`
	// Editable: pi/editContext may name the entry (a user, assistant, toolResult or
	// custom message of the current context: Pi's rule, decided here for every editor).
	Editable bool        `json:"editable,omitempty"`
	IsLeaf   bool        `json:"isLeaf"`
	Children []*TreeNode `json:"children"`
}

func (s *Server) handleTree(ctx context.Context, p treeParams) (Encoded[TreeAnswer], error) {
	var out Encoded[TreeAnswer]
	_, err := s.withSession(p.Session, func(path string, ix *session.Index) error {
		var err error
		if p.Flat {
			if p.Offset < 0 || p.Limit < 0 {
				return invalidParams("offset and limit must not be negative")
			}
			out, err = memo(s.host, path, fmt.Sprintf("tree/flat/%d/%d", p.Offset, p.Limit), ix, func() (TreeAnswer, error) {
				nodes, total, err := flatTreePage(ctx, ix, p.Offset, p.Limit)
				if err != nil {
					return nil, err
				}
				return FlatTreeResult{Session: path, LeafID: nullable(ix.LeafID()), Total: total, Offset: min(p.Offset, total), Nodes: nodes}, nil
			})
			return err
		}
		out, err = memo(s.host, path, "tree", ix, func() (TreeAnswer, error) {
			roots, err := treeOf(ctx, ix)
			if err != nil {
				return nil, err
			}
			return TreeResult{Session: path, LeafID: nullable(ix.LeafID()), Roots: roots}, nil
		})
		return err
	})
	return out, err
}

// FlatNode is one node of pi/tree's flat answer: the same fields as TreeNode with the
// parent instead of the children, in depth-first order (children sorted as in the tree).
// Long linear sessions nest thousands of levels deep in the nested form, past what some
// JSON decoders accept; the flat form has no depth.
type FlatNode struct {
	TreeNode
	ParentID   string    `json:"parentId,omitempty"`
	Depth      int       `json:"depth"`
	ChildCount int       `json:"childCount"`
	Children   *struct{} `json:"children,omitempty"` // hides TreeNode.Children
}

// flatTreePage is the page [offset, offset+limit) of the tree in depth-first order
// (limit 0: to the end) with the tree's marks; total counts every node.
func flatTreePage(ctx context.Context, ix *session.Index, offset, limit int) (nodes []FlatNode, total int, err error) {
	flat, total, err := ix.FlatTree(ctx, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	marks := service.MarksOf(ix)
	nodes = make([]FlatNode, 0, len(flat))
	for i := range flat {
		f := &flat[i]
		t := treeNode(&f.Node, marks)
		t.Children = nil // the flat form has no children
		nodes = append(nodes, FlatNode{TreeNode: *t, ParentID: f.ParentID, Depth: f.Depth, ChildCount: f.ChildCount})
	}
	return nodes, total, nil
}

// treeNode is n as pi/tree shows it, without its children.
func treeNode(n *session.Node, marks service.TreeMarks) *TreeNode {
	e := n.Entry
	return &TreeNode{EntryHead: HeadOf(e), Label: n.Label, Preview: e.Preview(), Timestamp: e.Timestamp,
		OnPath: marks.OnPath(e), Pinned: marks.Pinned(e), IsLeaf: e.ID == marks.Leaf, ContextEdit: marks.ContextEdit(e),
		Editable: marks.Editable(e), Children: []*TreeNode{}}
}

func treeOf(ctx context.Context, ix *session.Index) ([]*TreeNode, error) {
	marks := service.MarksOf(ix)
	return session.MapTree(ctx, ix.Tree(),
		func(n *session.Node) *TreeNode { return treeNode(n, marks) },
		func(parent, child *TreeNode) { parent.Children = append(parent.Children, child) })
}

// withSession resolves a session parameter and runs fn on its up-to-date index under
// the session's lock (see host.withIndex). It returns the resolved path.
func (s *Server) withSession(param string, fn func(path string, ix *session.Index) error) (string, error) {
	path, err := s.host.sessionFor(param)
	if err != nil {
		return "", err
	}
	var fnErr error
	err = s.host.withIndex(path, func(ix *session.Index) error {
		fnErr = fn(path, ix)
		return nil
	})
	if err != nil {
		return "", badSession(err)
	}
	return path, fnErr
}

func (s *Server) handleFiles(ctx context.Context, p sessionParams) (FilesResult, error) {
	var out FilesResult
	_, err := s.withSession(p.Session, func(path string, ix *session.Index) error {
		leafPath := ix.LeafPath()
		read, mod := fileops.ForPath(leafPath)
		out = FilesResult{Session: path, ReadFiles: read, ModifiedFiles: mod,
			Stale: staleFiles(ix.File.Header.Cwd, s.host.readRecords(path, stateKey(ix), leafPath))}
		return nil
	})
	return out, err
}

func (s *Server) handleContext(ctx context.Context, p sessionParams) (Encoded[ContextResult], error) {
	var out Encoded[ContextResult]
	_, err := s.withSession(p.Session, func(path string, ix *session.Index) error {
		var err error
		// The window is configuration: it is part of the answer's name.
		out, err = memo(s.host, path, fmt.Sprintf("context/%d", s.host.window()), ix, func() (ContextResult, error) {
			c := ix.BuildContext("")
			f := s.host.figures(c)
			res := ContextResult{
				Session: path, LeafID: nullable(ix.LeafID()), MessageCount: len(c.Messages),
				Tokens: f.tokens, ContextWindow: f.window, Percent: f.percent, Estimate: f.estimate, Source: f.source,
			}
			if c.CompactionIndex >= 0 {
				e := c.Path[c.CompactionIndex]
				comp := e.Compaction()
				res.LastCompaction = &LastCompaction{ID: e.ID, Summary: comp.Summary, TokensBefore: comp.TokensBefore, FirstKeptEntryID: comp.FirstKeptEntryID}
			}
			return res, nil
		})
		return err
	})
	return out, err
}

func (s *Server) handleSessions(ctx context.Context, p sessionsParams) (SessionsResult, error) {
	s.host.mu.Lock()
	dir, current := s.host.dir, s.host.current
	if p.Cwd != "" {
		dir = session.SessionDir(s.host.agentDir, p.Cwd)
	}
	s.host.mu.Unlock()
	list, err := session.List(dir)
	if err != nil {
		return SessionsResult{}, err
	}
	out := make([]SessionInfo, 0, len(list))
	for _, in := range list {
		out = append(out, SessionInfoOf(in))
	}
	return SessionsResult{Current: nullable(current), Dir: dir, Sessions: out}, nil
}

func (s *Server) handleSelectSession(ctx context.Context, p selectSessionParams) (SelectSessionResult, error) {
	path, err := s.host.select_(p.Path)
	if err != nil {
		return SelectSessionResult{}, err
	}
	s.host.scheduleNotify(path)
	return SelectSessionResult{Session: path}, nil
}

// pinOf reads a pin entry's target and direction.
func pinOf(e *session.Entry) (string, bool) {
	var d struct {
		TargetID string `json:"targetId"`
		Pinned   bool   `json:"pinned"`
	}
	_ = json.Unmarshal(e.RawField("data"), &d)
	return d.TargetID, d.Pinned
}
