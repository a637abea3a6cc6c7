package rewind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// ErrNotOnPath: the entry is not on the path from the root to the leaf (errors.Is). A
// rewind goes back along the current path.
var ErrNotOnPath = errors.New("entry is not on the path to the leaf")

// File is one file the rewind would bring back.
type File struct {
	// Path is absolute; Rel is how the rewind names it (relative to the session's cwd
	// when inside it).
	Path, Rel string
	// Exists and Current: the file on disk now.
	Exists  bool
	Current []byte
	// TargetExists and Target: what it held at the entry (absent: the agent created it
	// after the entry, so the rewind removes it).
	TargetExists bool
	Target       []byte
	// ExpectedKnown: the session shows what its last change left (ExpectedExists,
	// Expected); when it does not (edits of a file it never showed whole), the edits
	// were found where they left their text.
	ExpectedKnown, ExpectedExists bool
	Expected                      []byte
	// Conflict: the disk no longer holds what the session's last change left (or that
	// cannot be told): left alone unless picked.
	Conflict bool
}

// Remove reports a file the rewind removes.
func (f File) Remove() bool { return !f.TargetExists }

// NotRestorable is a file the session cannot bring back, and why.
type NotRestorable struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Plan is what a rewind to an entry would do.
type Plan struct {
	Session, Cwd, EntryID, LeafID string
	// Files are the files to bring back (conflicts included), in the order the session
	// first changed them after the entry.
	Files         []File
	NotRestorable []NotRestorable
	// Commands are the shell commands run after the entry: changes no rewind undoes.
	Commands []Command
}

// Conflicts are the files of the plan in conflict.
func (p *Plan) Conflicts() []File {
	var out []File
	for _, f := range p.Files {
		if f.Conflict {
			out = append(out, f)
		}
	}
	return out
}

// Options of Compute.
type Options struct {
	// Leaf is the end of the path ("" for the session's leaf).
	Leaf string
}

// known is what the session says a file holds at a point: nothing (ok false), or that
// it does not exist, or its content.
type known struct {
	ok, exists bool
	content    string
}

func (k known) same(exists bool, b []byte) bool {
	return k.ok && k.exists == exists && (!exists || k.content == string(b))
}

// Compute plans the rewind of snap's files to entryID, reading the disk now.
func Compute(ctx context.Context, snap *session.Snapshot, entryID string, opt Options) (*Plan, error) {
	ix := snap.Index()
	leaf := opt.Leaf
	if leaf == "" {
		leaf = ix.LeafID()
	}
	if ix.Entry(entryID) == nil {
		return nil, fmt.Errorf("rewind: no entry %s in %s", entryID, filepath.Base(snap.Path()))
	}
	path := ix.Path(leaf)
	tpos := -1
	for i, e := range path {
		if e.ID == entryID {
			tpos = i
		}
	}
	if tpos < 0 {
		return nil, fmt.Errorf("rewind: %w: %s is not an ancestor of %s", ErrNotOnPath, entryID, leaf)
	}
	cwd := ix.File.Header.Cwd
	if cwd == "" {
		return nil, fmt.Errorf("rewind: the session header names no cwd to resolve paths against")
	}
	h := historyOf(path, cwd)
	p := &Plan{Session: snap.Path(), Cwd: cwd, EntryID: entryID, LeafID: leaf}
	for _, c := range h.commands {
		if c.Pos > tpos {
			p.Commands = append(p.Commands, c)
		}
	}
	byFile := map[string][]Change{}
	var order []string
	for _, ch := range h.changes {
		if _, seen := byFile[ch.Abs]; !seen {
			order = append(order, ch.Abs)
		}
		byFile[ch.Abs] = append(byFile[ch.Abs], ch)
	}
	for _, abs := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, nr, changed := planFile(abs, cwd, byFile[abs], tpos, p.Commands)
		if !changed {
			continue
		}
		if nr != "" {
			p.NotRestorable = append(p.NotRestorable, NotRestorable{Path: f.Rel, Reason: nr})
			continue
		}
		if !f.Conflict && f.Exists == f.TargetExists && bytes.Equal(f.Current, f.Target) {
			continue // already as it was
		}
		p.Files = append(p.Files, f)
	}
	return p, nil
}

// planFile is the rewind of one file from its changes on the path: changed reports
// whether the file changed after the entry; nr is why it cannot be brought back.
func planFile(abs, cwd string, changes []Change, tpos int, commands []Command) (f File, nr string, changed bool) {
	f = File{Path: abs, Rel: relTo(cwd, abs)}
	if first := changes[0]; first.Kind == KindRead && first.Pos > tpos {
		// First seen after the entry: when a command ran before, it may have made or
		// changed the file, and what the file held at the entry is unknown.
		for _, c := range commands {
			if c.Pos < first.Pos && !changedByAgent(changes, tpos) {
				return f, fmt.Sprintf("first seen after a command run after the entry (%s); what it held at the entry is not in the session", c.Command), true
			}
		}
	}
	// Replay the changes forward: what the session says the file held after each.
	var state known
	if changes[0].Kind == KindWrite {
		state = known{ok: true} // a write to a path the session never showed creates it
	}
	atTarget := state
	var after []Change // the changes after the entry
	for _, ch := range changes {
		switch ch.Kind {
		case KindRead:
			if ch.Pos > tpos && state.ok && (!state.exists || state.content != ch.Content) {
				changed = true // changed outside write and edit (a command)
			}
			state = known{ok: true, exists: true, content: ch.Content}
		case KindWrite:
			state = known{ok: true, exists: true, content: ch.Content}
		case KindEdit:
			if state.ok && state.exists {
				out, err := applyEdits(state.content, ch.Edits)
				state = known{ok: err == nil, exists: true, content: out}
			} else {
				state = known{}
			}
		}
		if ch.Pos <= tpos {
			atTarget = state
		} else {
			after = append(after, ch)
			if ch.Kind != KindRead {
				changed = true
			}
		}
	}
	if !changed {
		return f, "", false
	}
	cur, err := os.ReadFile(abs)
	switch {
	case err == nil:
		f.Exists, f.Current = true, cur
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		// absent (a parent that is not a directory holds no file either)
	default:
		return f, fmt.Sprintf("cannot read it: %v", err), true
	}
	f.ExpectedKnown, f.ExpectedExists, f.Expected = state.ok, state.exists, []byte(state.content)

	if atTarget.ok {
		f.TargetExists, f.Target = atTarget.exists, []byte(atTarget.content)
		// Without the session's last state the disk cannot be checked: a conflict the
		// user picks or leaves.
		f.Conflict = !state.same(f.Exists, f.Current)
		return f, "", true
	}
	// The entry's content comes back through the edits after it, undone from the first
	// point after the entry whose content is known: a full read before any write, or
	// the disk when no write came.
	start, from := -1, ""
	for i, ch := range after {
		if ch.Kind == KindWrite {
			break
		}
		if ch.Kind == KindRead {
			start, from = i, ch.Content
			break
		}
	}
	if start < 0 {
		for _, ch := range after {
			if ch.Kind == KindWrite {
				return f, fmt.Sprintf("overwritten by a write (entry %s) over content the session never showed", ch.EntryID), true
			}
		}
		if !f.Exists {
			return f, "edited after the entry and missing on disk now; what it held is not in the session", true
		}
		start, from = len(after), string(f.Current)
	} else {
		f.Conflict = !state.same(f.Exists, f.Current)
	}
	content := from
	for i := start - 1; i >= 0; i-- {
		ch := after[i]
		if ch.Kind != KindEdit {
			continue
		}
		before, err := undoEdit(content, ch)
		if err != nil {
			why := err.Error()
			if start == len(after) {
				why += " (the file changed since?)"
			}
			return f, fmt.Sprintf("cannot undo the edit of entry %s: %s", ch.EntryID, why), true
		}
		content = before
	}
	f.TargetExists, f.Target = true, []byte(content)
	return f, "", true
}

// changedByAgent reports a write or edit of the file after the entry.
func changedByAgent(changes []Change, tpos int) bool {
	for _, ch := range changes {
		if ch.Pos > tpos && ch.Kind != KindRead {
			return true
		}
	}
	return false
}

// relTo names abs relative to cwd when it is inside it.
func relTo(cwd, abs string) string {
	if r, err := filepath.Rel(cwd, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return r
	}
	return abs
}
