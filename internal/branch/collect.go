package branch

import "github.com/pi-lsp/pi-lsp/internal/session"

// Collected is the branch being left when navigating from one position to another.
type Collected struct {
	// Entries are the entries from just below the common ancestor down to the old leaf,
	// in chronological (root-first) order.
	Entries []*session.Entry
	// CommonAncestorID is the deepest entry on both paths, "" when there is none.
	CommonAncestorID string
}

// Collect is Pi's collectEntriesForBranchSummary: the common ancestor is the deepest
// entry of the target's path that is also on the old leaf's path, and the entries are
// those from the old leaf up to (excluding) that ancestor. The walk does not stop at
// compactions. It stops at a missing parent and, unlike Pi, at an entry seen before, so
// cycles never hang. An empty oldLeafID collects nothing.
func Collect(ix *session.Index, oldLeafID, targetID string) Collected {
	if oldLeafID == "" {
		return Collected{}
	}
	oldPath := map[string]bool{}
	for _, e := range ix.Path(oldLeafID) {
		oldPath[e.ID] = true
	}
	var c Collected
	target := ix.Path(targetID)
	for i := len(target) - 1; i >= 0; i-- {
		if oldPath[target[i].ID] {
			c.CommonAncestorID = target[i].ID
			break
		}
	}
	seen := map[*session.Entry]bool{}
	found := c.CommonAncestorID != ""
	for cur := oldLeafID; cur != "" && !(found && cur == c.CommonAncestorID); {
		e := ix.Entry(cur)
		if e == nil || seen[e] {
			break
		}
		seen[e] = true
		c.Entries = append(c.Entries, e)
		cur = e.ParentID
	}
	for i, j := 0, len(c.Entries)-1; i < j; i, j = i+1, j-1 {
		c.Entries[i], c.Entries[j] = c.Entries[j], c.Entries[i]
	}
	return c
}
