package compaction

import (
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// ErrNotACut: a compaction cannot keep from the entry the user chose (errors.Is on a
// *CutError).
var ErrNotACut = errors.New("not a valid cut point")

// CutError says why an entry cannot start the kept part of a compaction, and names the
// nearest entries that can, before and after it ("" when there is none).
type CutError struct {
	EntryID, Reason string
	Before, After   string
}

func (e *CutError) Error() string {
	s := fmt.Sprintf("cannot keep from %s: %s", e.EntryID, e.Reason)
	switch {
	case e.Before != "" && e.After != "":
		s += fmt.Sprintf("; the nearest valid cuts are %s (before) and %s (after)", e.Before, e.After)
	case e.Before != "":
		s += fmt.Sprintf("; the nearest valid cut is %s (before)", e.Before)
	case e.After != "":
		s += fmt.Sprintf("; the nearest valid cut is %s (after)", e.After)
	}
	return s
}

func (e *CutError) Unwrap() error { return ErrNotACut }

// cutAt is the cut of a compaction whose kept part starts at the entry id of the
// projected context, as Pi 1.6.0 would cut there: only before a user-like or assistant
// message (a tool result must follow its call), after the compaction in effect; a cut
// inside a turn is a split turn whose prefix is summarized on its own.
func cutAt(units []session.ProjectedEntry, boundary int, path []*session.Entry, id string) (CutPoint, error) {
	isCut := func(u session.ProjectedEntry) bool {
		return u.Entry.Type != session.TypeCompaction && anyMessage(u.Messages, isCutPointMessage)
	}
	at := -1
	for i, u := range units {
		if u.Entry.ID == id {
			at = i
		}
	}
	if at < 0 {
		for _, e := range path {
			if e.ID == id {
				return CutPoint{}, &CutError{EntryID: id, Reason: "it is not in the context (summarized by an earlier compaction, or not a message)"}
			}
		}
		return CutPoint{}, fmt.Errorf("keep from %s: %w", id, ErrNotOnPath)
	}
	if at < boundary {
		return CutPoint{}, &CutError{EntryID: id, Reason: "the compaction in effect already summarizes it", After: nearestCut(units, boundary, len(units), 1, isCut)}
	}
	if !isCut(units[at]) {
		why := "Pi cuts only before a user, assistant, bash, custom or summary message"
		for _, m := range units[at].Messages {
			if m.Role == session.RoleToolResult {
				why = "it is a tool result, which must stay after its tool call"
			}
		}
		if len(units[at].Messages) == 0 {
			why = "it brings no message to the context (a setting, a label or a hidden message)"
		}
		return CutPoint{}, &CutError{EntryID: id, Reason: why,
			Before: nearestCut(units, at-1, boundary-1, -1, isCut), After: nearestCut(units, at+1, len(units), 1, isCut)}
	}
	if isTurnStart(units[at]) {
		return CutPoint{FirstKeptIndex: at, TurnStartIndex: -1}, nil
	}
	ts := findTurnStart(units, at, boundary)
	return CutPoint{FirstKeptIndex: at, TurnStartIndex: ts, IsSplitTurn: ts != -1}, nil
}

// nearestCut walks from i by step until stop and names the first cut point's entry.
func nearestCut(units []session.ProjectedEntry, i, stop, step int, isCut func(session.ProjectedEntry) bool) string {
	for ; i != stop && i >= 0 && i < len(units); i += step {
		if isCut(units[i]) {
			return units[i].Entry.ID
		}
	}
	return ""
}

// ErrNotOnPath: the entry is not on the path compacted (errors.Is).
var ErrNotOnPath = errors.New("entry is not on the path to the leaf")
