package service

import (
	"context"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// LabelRequest sets (or, with an empty Label, clears) the label of entry Entry.
type LabelRequest struct {
	Path, Entry, Label string
	Force              bool
}

// LabelOutcome is the label written, whoever wrote it.
type LabelOutcome struct {
	Via Via
	PID int
	// Written is the label entry pi-lsp appended (nil through a live pi).
	Written *session.Entry
}

// Label sets an entry's label where RouteWrite sends the write: the live pi's
// setLabel, or a label entry appended as a child of Pi's leaf.
func (c Config) Label(ctx context.Context, req LabelRequest, _ Reporter) (LabelOutcome, error) {
	r, done, err := c.begin(ctx, req.Path, req.Force, true)
	if err != nil {
		return LabelOutcome{}, err
	}
	defer done()
	if r.Bridge != nil {
		pi, err := dialPi(ctx, r.Bridge, "", nil)
		if err != nil {
			return LabelOutcome{}, err
		}
		defer pi.close()
		return LabelOutcome{Via: ViaPi, PID: r.Bridge.PID}, pi.fail(pi.conn.Label(ctx, req.Entry, req.Label))
	}
	e, err := branch.SetLabel(req.Path, req.Entry, req.Label)
	return LabelOutcome{Written: e}, err
}

// PinRequest pins (or unpins) entry Entry: pi-lsp's own mark, which a live pi's bridge
// cannot write.
type PinRequest struct {
	Path, Entry string
	Pinned      bool
	Force       bool
}

// PinOutcome is the pin entry written.
type PinOutcome struct {
	Written *session.Entry
}

// Pin pins or unpins an entry (refused while a running pi holds the session, unless
// forced).
func (c Config) Pin(ctx context.Context, req PinRequest, _ Reporter) (PinOutcome, error) {
	_, done, err := c.begin(ctx, req.Path, req.Force, false)
	if err != nil {
		return PinOutcome{}, err
	}
	defer done()
	e, err := branch.SetPin(req.Path, req.Entry, req.Pinned)
	return PinOutcome{Written: e}, err
}

// UndoRequest makes the full context from before the newest compaction on the path to
// Leaf ("" for Pi's leaf) active again.
type UndoRequest struct {
	Path, Leaf string
	Force      bool
}

// UndoOutcome is the undo written, and what it left on a side branch.
type UndoOutcome struct {
	Result *branch.NavigateResult
	// SideBranch are the entries written after the undone compaction on the path it
	// undid from, oldest first (the compaction and they stay in the file, off the path).
	SideBranch []SideEntry
}

// UndoCompaction undoes the newest compaction on the path (a live pi's bridge cannot:
// refused while a running pi holds the session, unless forced).
func (c Config) UndoCompaction(ctx context.Context, req UndoRequest, _ Reporter) (UndoOutcome, error) {
	_, done, err := c.begin(ctx, req.Path, req.Force, false)
	if err != nil {
		return UndoOutcome{}, err
	}
	defer done()
	snap, err := c.sessions().Snapshot(req.Path)
	if err != nil {
		return UndoOutcome{}, err
	}
	res, err := branch.UndoCompaction(ctx, snap, req.Leaf)
	if err != nil {
		return UndoOutcome{}, err
	}
	// Entries of the snapshot the undo read, which it did not change.
	return UndoOutcome{Result: res, SideBranch: sideBranch(snap.Index(), res.OldLeafID, res.UndoneCompactionID)}, nil
}
