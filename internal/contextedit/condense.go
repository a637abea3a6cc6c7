package contextedit

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Condensing a range of the context replaces its first message's content by a summary
// of the range and hides the others, as context_edit entries written in one write (the
// replacement first, then one omission per message): the history stays whole, each
// edit can be restored on its own, and RestoreCondensed restores them together.

// ErrBadRange: the range cannot be condensed (errors.Is; the error says why).
var ErrBadRange = errors.New("cannot condense this range")

// CondensePlan is a range of the context about to be condensed.
type CondensePlan struct {
	FromID, ToID string
	// Targets are the entries whose messages the range holds, in order: the first is
	// replaced by the summary, the others hidden.
	Targets []string
	// Messages are those messages, what the summary covers; Units their entries.
	Messages                 []*session.Message
	Units                    []session.ProjectedEntry
	ReadFiles, ModifiedFiles []string
	// TokensBefore is the projected context figure before; TokensRange the estimate of
	// the range's messages.
	TokensBefore, TokensRange float64
	// Size is the size of the file the plan was made on: the write is refused when the
	// file is no longer that one.
	Size          int64
	ThinkingLevel string
}

// PlanCondense checks a range of the current path's context, from fromID to toID
// (both in the context, in that order), as the session at path holds it.
func PlanCondense(path, fromID, toID string) (*CondensePlan, error) {
	f, err := session.Load(path)
	if err != nil {
		return nil, err
	}
	ix := session.NewIndex(f)
	branch := ix.LeafPath()
	proj := session.Project(branch)
	at := func(id string) int {
		for i, pe := range proj {
			if pe.Entry.ID == id && len(pe.Messages) > 0 {
				return i
			}
		}
		return -1
	}
	from, to := at(fromID), at(toID)
	switch {
	case from < 0:
		return nil, fmt.Errorf("%w: %s is not a message of the current context", ErrBadRange, fromID)
	case to < 0:
		return nil, fmt.Errorf("%w: %s is not a message of the current context", ErrBadRange, toID)
	case to < from:
		return nil, fmt.Errorf("%w: %s comes after %s", ErrBadRange, fromID, toID)
	}
	p := &CondensePlan{FromID: fromID, ToID: toID, Size: f.Size, TokensBefore: session.ProjectedContextTokens(branch).Tokens}
	p.ThinkingLevel = session.ContextOfPath(branch).Level()
	calls, results := map[string]string{}, map[string]string{}
	ops := fileops.New()
	for _, pe := range proj[from : to+1] {
		if len(pe.Messages) == 0 {
			continue // hidden already, or contributes nothing
		}
		if pe.Entry.Type == session.TypeCompaction || pe.Messages[0].Role == session.RoleSystem {
			if pe.Entry.Type == session.TypeCompaction {
				return nil, fmt.Errorf("%w: the range holds the compaction summary %s", ErrBadRange, pe.Entry.ID)
			}
			continue // prompt state, not conversation
		}
		if _, ok := editableRole(pe.Entry); !ok {
			return nil, fmt.Errorf("%w: %s (%s) cannot be hidden by a context edit", ErrBadRange, pe.Entry.ID, pe.Entry.Type)
		}
		for _, m := range pe.Messages {
			for _, c := range m.ToolCalls() {
				calls[c.ID] = pe.Entry.ID
			}
			if m.Role == session.RoleToolResult {
				results[m.ToolCallID] = pe.Entry.ID
			}
			p.TokensRange += float64(session.EstimateTokens(m))
		}
		p.Targets = append(p.Targets, pe.Entry.ID)
		p.Messages = append(p.Messages, pe.Messages...)
		p.Units = append(p.Units, pe)
	}
	if len(p.Targets) < 2 {
		return nil, fmt.Errorf("%w: the range holds fewer than two messages", ErrBadRange)
	}
	if p.Targets[0] != fromID {
		return nil, fmt.Errorf("%w: %s cannot carry the summary", ErrBadRange, fromID)
	}
	if r := proj[from].Messages[0].Role; r != session.RoleUser && r != session.RoleAssistant {
		return nil, fmt.Errorf("%w: the range must start at a user or assistant message (%s is a %s)", ErrBadRange, fromID, r)
	}
	// A tool call and its result stay together: both in the range or both out.
	for id, e := range calls {
		if _, ok := results[id]; !ok && resultAfter(proj[to+1:], id) != "" {
			return nil, fmt.Errorf("%w: the result of %s's tool call is %s, after the range: end it there or later", ErrBadRange, e, resultAfter(proj[to+1:], id))
		}
	}
	for id, e := range results {
		if _, ok := calls[id]; !ok {
			return nil, fmt.Errorf("%w: %s is the result of a tool call before the range: start the range at that call", ErrBadRange, e)
		}
	}
	ops.AddMessages(p.Messages)
	p.ReadFiles, p.ModifiedFiles = ops.Lists()
	return p, nil
}

func resultAfter(rest []session.ProjectedEntry, callID string) string {
	for _, pe := range rest {
		for _, m := range pe.Messages {
			if m.Role == session.RoleToolResult && m.ToolCallID == callID {
				return pe.Entry.ID
			}
		}
	}
	return ""
}

// CondenseOptions of Summarize.
type CondenseOptions struct {
	CustomInstructions string
	Progress           func(compaction.Progress)
}

// SummarizeRange asks s for the summary of the plan's messages, and returns the text
// the first message of the range will hold.
func SummarizeRange(ctx context.Context, p *CondensePlan, s compaction.Summarizer, opt CondenseOptions) (string, error) {
	r, err := s.Summarize(ctx, compaction.Request{
		Kind: compaction.KindHistory, Messages: p.Messages, Conversation: compaction.SerializeAgentMessages(p.Messages),
		CustomInstructions: opt.CustomInstructions, ThinkingLevel: p.ThinkingLevel,
		ReadFiles: p.ReadFiles, ModifiedFiles: p.ModifiedFiles, Progress: opt.Progress,
	})
	if err != nil {
		return "", compaction.SummaryFailure("Condensing", err)
	}
	text := r.Text + fileops.FormatBounded(p.ReadFiles, p.ModifiedFiles, fileops.Recent(p.Messages), fileops.DefaultMaxListed)
	return CondensedText(len(p.Targets), redact.String(text)), nil
}

// CondensedText is what the first message of a condensed range holds: the summary,
// saying how many messages it stands for.
func CondensedText(n int, summary string) string {
	return fmt.Sprintf("[The %d messages from here were condensed into this summary]\n\n<summary>\n%s\n</summary>", n, summary)
}

// Condense writes the plan's edits in one write: the first target's content replaced by
// text, the others hidden. Nothing is written when the file is no longer the one the
// plan was made on (session.ErrChanged).
func Condense(ctx context.Context, path string, p *CondensePlan, text string) ([]*session.Entry, error) {
	edits := []Edit{{TargetID: p.Targets[0], Action: Replace, Text: text}}
	for _, id := range p.Targets[1:] {
		edits = append(edits, Edit{TargetID: id, Action: Omit})
	}
	written, _, err := applySized(ctx, path, edits, p.Size)
	return written, err
}

// RestoreCondensed restores, in one write, every edit of the latest condense that
// starts at fromID and is still in effect: the summary's replacement and the
// omissions written with it.
func RestoreCondensed(ctx context.Context, path, fromID string) ([]*session.Entry, error) {
	f, err := session.Load(path)
	if err != nil {
		return nil, err
	}
	ix := session.NewIndex(f)
	branch := ix.LeafPath()
	start := -1
	for i, e := range branch {
		if t, ok := e.ContextEditTarget(); ok && t == fromID && !isNullReplacement(e) {
			start = i
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("%s: no condensed range starts there", fromID)
	}
	targets := []string{fromID}
	for _, e := range branch[start+1:] {
		t, ok := e.ContextEditTarget()
		if !ok || !isNullReplacement(e) {
			break // the omissions a condense writes follow its replacement
		}
		targets = append(targets, t)
	}
	states := States(branch)
	var edits []Edit
	for _, t := range targets {
		if states[t] != Unedited {
			edits = append(edits, Edit{TargetID: t, Action: Restore})
		}
	}
	if len(edits) == 0 {
		return nil, fmt.Errorf("%s: %w", fromID, ErrNotEdited)
	}
	written, _, err := applySized(ctx, path, edits, f.Size)
	return written, err
}

func isNullReplacement(e *session.Entry) bool {
	return string(e.RawField("replacement")) == "null"
}
