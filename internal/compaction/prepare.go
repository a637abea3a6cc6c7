package compaction

import (
	"errors"

	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

var (
	// ErrEmptyPath: there is nothing on the path at all.
	ErrEmptyPath = errors.New("nothing to compact: the session path is empty")
	// ErrAlreadyCompacted: the last entry on the path is a compaction.
	ErrAlreadyCompacted = errors.New("Already compacted") // Pi 1.6.0's words
	// ErrNeedsMigration: the first kept entry has no id.
	ErrNeedsMigration = errors.New("first kept entry has no id; the session needs migration")
)

// Preparation is Pi's CompactionPreparation, plus what it was computed from: the path,
// and its projected context (Pi 1.6.0 prepares on the projection), into which the
// boundary, the cut and the previous compaction's index point.
type Preparation struct {
	Path                []*session.Entry
	Projected           []session.ProjectedEntry
	BoundaryStart       int
	Cut                 CutPoint
	FirstKeptEntryID    string
	MessagesToSummarize []*session.Message
	TurnPrefixMessages  []*session.Message
	IsSplitTurn         bool
	TokensBefore        float64
	PreviousSummary     string
	HasPrevious         bool
	PreviousIndex       int // in Projected, -1 without a previous compaction
	FileOps             *fileops.Ops
	Settings            session.CompactionSettings
}

// messagesOf is what projected entries give the summary, in order: their messages but
// system messages (prompt state, which the compaction carries as its checkpoint), and
// nothing from a compaction. Each message is added to ops as it is listed (one visit
// of each message record), when ops is not nil.
func messagesOf(units []session.ProjectedEntry, ops *fileops.Ops) []*session.Message {
	out := make([]*session.Message, 0, len(units)) // most entries give one message
	for _, u := range units {
		if u.Entry.Type == session.TypeCompaction {
			continue
		}
		for _, m := range u.Messages {
			if m.Role != session.RoleSystem {
				out = append(out, m)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	if ops != nil {
		ops.AddMessages(out)
	}
	return out
}

// Prepare is Pi 1.6.0's prepareCompaction over a root-first path: on its projected
// context (the newest compaction first, its kept range without system messages, context
// edits applied), from just after the newest compaction, with the cut walk of findCut and
// tokensBefore the projected estimate. ErrNothingToCompact when neither list would hold a
// message (Pi: "Nothing to compact (session too small)").
func Prepare(path []*session.Entry, settings session.CompactionSettings) (*Preparation, error) {
	return PrepareProjected(path, session.ProjectPath(path), settings)
}

// PrepareProjected is Prepare for a path and its projection (session.Index.ProjectedPath
// keeps both), which it does not modify.
func PrepareProjected(path []*session.Entry, proj session.Projection, settings session.CompactionSettings) (*Preparation, error) {
	return prepare(path, proj, settings, "")
}

// PrepareFrom is Prepare with the kept part starting at the entry keepFrom, which the
// user chose in place of Pi's keepRecentTokens walk (a *CutError when Pi could not cut
// there).
func PrepareFrom(path []*session.Entry, settings session.CompactionSettings, keepFrom string) (*Preparation, error) {
	return prepare(path, session.ProjectPath(path), settings, keepFrom)
}

func prepare(path []*session.Entry, proj session.Projection, settings session.CompactionSettings, keepFrom string) (*Preparation, error) {
	if len(path) == 0 {
		return nil, ErrEmptyPath
	}
	if path[len(path)-1].Type == session.TypeCompaction {
		return nil, ErrAlreadyCompacted
	}
	units := proj.Entries
	p := &Preparation{Path: path, Projected: units, PreviousIndex: -1, Settings: settings}
	// Only the first context entry, the compaction in effect, can be a compaction with
	// messages (an older one in the kept range contributes none).
	if proj.LastCompaction >= 0 && len(units) > 0 && units[0].Entry.Type == session.TypeCompaction && len(units[0].Messages) > 0 {
		p.PreviousIndex = 0
	}
	if p.PreviousIndex >= 0 {
		p.PreviousSummary, p.HasPrevious = units[p.PreviousIndex].Entry.Compaction().Summary, true
		p.BoundaryStart = p.PreviousIndex + 1 // the projection starts the kept tail there
	}
	p.TokensBefore = session.ProjectedTokens(path, proj).Tokens
	if keepFrom != "" {
		cut, err := cutAt(units, p.BoundaryStart, path, keepFrom)
		if err != nil {
			return nil, err
		}
		p.Cut = cut
	} else {
		p.Cut = findCut(units, p.BoundaryStart, len(units), settings.KeepRecentTokens, true)
	}
	if p.Cut.FirstKeptIndex >= len(units) || units[p.Cut.FirstKeptIndex].Entry.ID == "" {
		return nil, ErrNeedsMigration
	}
	p.FirstKeptEntryID = units[p.Cut.FirstKeptIndex].Entry.ID
	p.IsSplitTurn = p.Cut.IsSplitTurn
	historyEnd := p.Cut.FirstKeptIndex
	if p.IsSplitTurn {
		historyEnd = p.Cut.TurnStartIndex
	}
	p.FileOps = fileops.New()
	if p.PreviousIndex >= 0 {
		if c := units[p.PreviousIndex].Entry.Compaction(); !c.FromHook && c.Details.Present {
			p.FileOps.AddDetails(c.Details)
		}
	}
	p.MessagesToSummarize = messagesOf(units[p.BoundaryStart:historyEnd], p.FileOps)
	if p.IsSplitTurn {
		p.TurnPrefixMessages = messagesOf(units[p.Cut.TurnStartIndex:p.Cut.FirstKeptIndex], p.FileOps)
	}
	if len(p.MessagesToSummarize) == 0 && len(p.TurnPrefixMessages) == 0 {
		return nil, ErrNothingToCompact
	}
	return p, nil
}

// SpanEntries are the entries a preparation summarizes: from its boundary to the first
// kept entry (the turn prefix included).
func (p *Preparation) SpanEntries() []session.ProjectedEntry {
	return p.Projected[p.BoundaryStart:p.Cut.FirstKeptIndex]
}

// NothingToSummarize reports whether a compaction would summarize no message at all
// (design divergence 2: Pi still calls the LLM on an empty conversation; pi-lsp does not).
func (p *Preparation) NothingToSummarize() bool {
	return len(p.MessagesToSummarize) == 0 && len(p.TurnPrefixMessages) == 0
}

// KeptMessages are the context messages the compaction keeps verbatim: the projected
// messages from the first kept entry to the end of the path, as they are after the
// compaction (system messages of the kept range are replaced by the checkpoint).
func (p *Preparation) KeptMessages() []*session.Message {
	var out []*session.Message
	for _, u := range p.Projected[p.Cut.FirstKeptIndex:] {
		for _, m := range u.Messages {
			if m.Role != session.RoleSystem {
				out = append(out, m)
			}
		}
	}
	return out
}
