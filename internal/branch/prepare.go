package branch

import (
	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Prepared is the part of a branch that fits a summary request.
type Prepared struct {
	// Messages are the AgentMessages to summarize, oldest first.
	Messages []*session.Message
	// FileOps are the file operations of the branch (see Prepare for which ones).
	FileOps *fileops.Ops
	// TotalTokens is the sum of the estimates of Messages.
	TotalTokens int
}

// PrepareOptions select pi-lsp's behaviour over Pi's where they differ.
type PrepareOptions struct {
	// AccumulateCompactionDetails also merges the file lists stored in the details of
	// compactions among the entries (not written by a hook), as it does for branch
	// summaries (design divergence 6). Pi merges only branch-summary details; Navigate
	// sets this for the summary it writes.
	AccumulateCompactionDetails bool
}

// Prepare is Pi's prepareBranchEntries exactly. First, the file lists in the details of
// every branch_summary among the entries that was not written by a hook are merged
// (whatever the budget). Then the entries are walked newest first: each one's message
// (toolResult messages, settings, labels, custom and session_info entries are skipped)
// has its tool calls recorded as file operations and is kept while the running total
// stays within tokenBudget; the first message that does not fit stops the walk, except
// that a compaction or branch summary is still kept when the total so far is under 90%
// of the budget. A tokenBudget of 0 or less means no limit.
func Prepare(entries []*session.Entry, tokenBudget int) Prepared {
	return PrepareWith(entries, tokenBudget, PrepareOptions{})
}

// PrepareWith is Prepare with pi-lsp's options.
func PrepareWith(entries []*session.Entry, tokenBudget int, opt PrepareOptions) Prepared {
	p := Prepared{FileOps: fileops.New()}
	for _, e := range entries {
		switch e.Type {
		case session.TypeBranchSummary:
			if b := e.BranchSummary(); !b.FromHook && b.Details.Present {
				p.FileOps.AddDetails(b.Details)
			}
		case session.TypeCompaction:
			if !opt.AccumulateCompactionDetails {
				continue
			}
			if c := e.Compaction(); !c.FromHook && c.Details.Present {
				p.FileOps.AddDetails(c.Details)
			}
		}
	}
	// Context edits among the entries hide or replace their targets (Pi 1.5+): the latest
	// edit per target counts.
	edits := map[string]*session.Entry{}
	for _, e := range entries {
		if target, ok := e.ContextEditTarget(); ok {
			edits[target] = e
		}
	}
	var rev []*session.Message
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		m := messageOf(e, edits[e.ID])
		if m == nil {
			continue
		}
		p.FileOps.AddMessage(m)
		t := session.EstimateTokens(m)
		if tokenBudget > 0 && p.TotalTokens+t > tokenBudget {
			if (e.Type == session.TypeCompaction || e.Type == session.TypeBranchSummary) &&
				float64(p.TotalTokens) < float64(tokenBudget)*0.9 {
				rev = append(rev, m)
				p.TotalTokens += t
			}
			break
		}
		rev = append(rev, m)
		p.TotalTokens += t
	}
	p.Messages = make([]*session.Message, len(rev))
	for i, m := range rev {
		p.Messages[len(rev)-1-i] = m
	}
	return p
}

// messageOf is the message an entry contributes to a branch summary: Pi's
// getMessageFromEntry of branch-summarization, which skips tool results and projects a
// message or custom message under its latest context edit (omitted: none).
func messageOf(e, edit *session.Entry) *session.Message {
	m := session.MessageOf(e)
	if m == nil || (e.Type == session.TypeMessage && m.Role == session.RoleToolResult) {
		return nil
	}
	if edit != nil && (e.Type == session.TypeMessage || e.Type == session.TypeCustomMessage) {
		if ms := session.ProjectEntry(e, edit); len(ms) > 0 {
			return ms[0]
		}
		return nil
	}
	return m
}
