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
	ErrAlreadyCompacted = errors.New("already compacted")
	// ErrNeedsMigration: the first kept entry has no id.
	ErrNeedsMigration = errors.New("first kept entry has no id; the session needs migration")
)

// Preparation is Pi's CompactionPreparation, plus the indices it was computed from.
type Preparation struct {
	Path                []*session.Entry
	BoundaryStart       int
	Cut                 CutPoint
	FirstKeptEntryID    string
	MessagesToSummarize []*session.Message
	TurnPrefixMessages  []*session.Message
	IsSplitTurn         bool
	TokensBefore        float64
	PreviousSummary     string
	HasPrevious         bool
	PreviousIndex       int
	FileOps             *fileops.Ops
	Settings            session.CompactionSettings
}

func messageForCompaction(e *session.Entry) *session.Message {
	if e.Type == session.TypeCompaction {
		return nil
	}
	return session.MessageOf(e)
}

// Prepare is Pi 0.73.1's prepareCompaction over a root-first path.
func Prepare(path []*session.Entry, settings session.CompactionSettings) (*Preparation, error) {
	if len(path) == 0 {
		return nil, ErrEmptyPath
	}
	if path[len(path)-1].Type == session.TypeCompaction {
		return nil, ErrAlreadyCompacted
	}
	p := &Preparation{Path: path, PreviousIndex: session.LastCompactionIndex(path), Settings: settings}
	if p.PreviousIndex >= 0 {
		prev := path[p.PreviousIndex].Compaction()
		p.PreviousSummary, p.HasPrevious = prev.Summary, true
		p.BoundaryStart = p.PreviousIndex + 1
		for i, e := range path {
			if e.ID == prev.FirstKeptEntryID {
				p.BoundaryStart = i
				break
			}
		}
	}
	p.TokensBefore = session.ContextTokensOfPath(path)
	p.Cut = FindCutPoint(path, p.BoundaryStart, len(path), settings.KeepRecentTokens)
	first := path[p.Cut.FirstKeptIndex]
	if first.ID == "" {
		return nil, ErrNeedsMigration
	}
	p.FirstKeptEntryID = first.ID
	p.IsSplitTurn = p.Cut.IsSplitTurn
	historyEnd := p.Cut.FirstKeptIndex
	if p.IsSplitTurn {
		historyEnd = p.Cut.TurnStartIndex
	}
	p.MessagesToSummarize = make([]*session.Message, 0, max(0, historyEnd-p.BoundaryStart))
	for i := p.BoundaryStart; i < historyEnd; i++ {
		if m := messageForCompaction(path[i]); m != nil {
			p.MessagesToSummarize = append(p.MessagesToSummarize, m)
		}
	}
	if p.IsSplitTurn {
		for i := p.Cut.TurnStartIndex; i < p.Cut.FirstKeptIndex; i++ {
			if m := messageForCompaction(path[i]); m != nil {
				p.TurnPrefixMessages = append(p.TurnPrefixMessages, m)
			}
		}
	}
	p.FileOps = fileops.New()
	if p.PreviousIndex >= 0 {
		if c := path[p.PreviousIndex].Compaction(); !c.FromHook && c.Details.Present {
			p.FileOps.AddDetails(c.Details)
		}
	}
	for _, m := range p.MessagesToSummarize {
		p.FileOps.AddMessage(m)
	}
	for _, m := range p.TurnPrefixMessages {
		p.FileOps.AddMessage(m)
	}
	return p, nil
}

// NothingToSummarize reports whether a compaction would summarize no message at all
// (design divergence 2: Pi still calls the LLM on an empty conversation; pi-lsp does not).
func (p *Preparation) NothingToSummarize() bool {
	return len(p.MessagesToSummarize) == 0 && len(p.TurnPrefixMessages) == 0
}

// KeptMessages are the context messages the compaction keeps verbatim (from the first
// kept entry to the end of the path).
func (p *Preparation) KeptMessages() []*session.Message {
	var out []*session.Message
	for _, e := range p.Path[p.Cut.FirstKeptIndex:] {
		switch e.Type {
		case session.TypeMessage, session.TypeCustomMessage:
			out = append(out, session.MessageOf(e))
		case session.TypeBranchSummary:
			if e.BranchSummary().Summary != "" {
				out = append(out, session.MessageOf(e))
			}
		}
	}
	return out
}
