package contextedit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Clearing old tool output without a model: tool results older than a recent window and
// larger than a size are replaced, each by one context_edit entry (Pi 1.6.0's own
// replacement), with a short placeholder that names the tool, its arguments, the size and
// how to restore. Nothing is deleted: the history keeps every result, a restore (of one
// message or of all) is one more edit each, and Pi's context after the edits is exactly
// what pi-lsp reports.

// ClearOptions choose which tool results ClearToolOutput replaces.
type ClearOptions struct {
	// KeepRecentTokens is the recent part of the context left alone, counted back from
	// the leaf with Pi's estimateTokens (0: DefaultKeepRecentTokens).
	KeepRecentTokens int
	// Settings, when KeepRecentTokens is 0, gives the compaction settings of the path
	// cleared: their keepRecentTokens is the window (so that a clear keeps what a
	// compaction would keep). Without it the window is DefaultKeepRecentTokens.
	Settings func(cwd string, path []*session.Entry) (session.CompactionSettings, error)
	// MinTokens: only results larger than this are replaced (0: DefaultMinClearTokens).
	MinTokens int
	// DryRun plans the edits and writes nothing.
	DryRun bool
}

const (
	// DefaultKeepRecentTokens is Pi's compaction.keepRecentTokens.
	DefaultKeepRecentTokens = 20000
	// DefaultMinClearTokens keeps small results, which a placeholder would hardly shrink.
	DefaultMinClearTokens = 200
	// ClearedMarker starts every placeholder: what a restore of all cleared output finds.
	ClearedMarker = "[tool output cleared by pi-lsp:"
)

// Cleared is one tool result replaced (or, in a dry run, that would be).
type Cleared struct {
	EntryID   string `json:"entryId"`
	ToolName  string `json:"toolName"`
	Arguments string `json:"arguments"`
	// Tokens is the result's estimate now; TokensAfter the placeholder's (restored: the
	// other way round).
	Tokens      int    `json:"tokens"`
	TokensAfter int    `json:"tokensAfter"`
	Placeholder string `json:"placeholder,omitempty"`
}

// ClearResult is what ClearToolOutput (or RestoreCleared) did.
type ClearResult struct {
	LeafID  string    `json:"leafId"`
	Cleared []Cleared `json:"cleared"`
	// Saved is the sum of Tokens - TokensAfter.
	Saved int `json:"saved"`
	// TokensBefore and TokensAfter are the projected context figure before and after
	// (after: estimated for a dry run).
	TokensBefore float64 `json:"tokensBefore"`
	TokensAfter  float64 `json:"tokensAfter"`
	DryRun       bool    `json:"dryRun,omitempty"`
	// Entries are the context_edit entries written.
	Entries []*session.Entry `json:"-"`
}

// ErrNothingToClear: no tool result is old and large enough (or, to restore, cleared).
var ErrNothingToClear = errors.New("no tool output to clear")

// PlanClear lists the tool results of a root-first leaf path that ClearToolOutput would
// replace, oldest first, with their placeholders.
func PlanClear(path []*session.Entry, opt ClearOptions) []Cleared {
	keep, min := opt.KeepRecentTokens, opt.MinTokens
	if keep <= 0 {
		keep = DefaultKeepRecentTokens
	}
	if min <= 0 {
		min = DefaultMinClearTokens
	}
	proj := session.Project(path)
	// The recent window: from the leaf back until it holds keep tokens.
	recent, start := 0, len(proj)
	for start > 0 && recent < keep {
		start--
		for _, m := range proj[start].Messages {
			recent += session.EstimateTokens(m)
		}
	}
	calls := map[string]session.Block{}
	var out []Cleared
	for i, pe := range proj {
		for _, m := range pe.Messages {
			if m.Role == session.RoleAssistant {
				for _, b := range m.Blocks() {
					if b.Type == "toolCall" {
						calls[b.ID] = b
					}
				}
			}
		}
		if i >= start || pe.Entry.Type != session.TypeMessage || pe.Entry.Role() != session.RoleToolResult || stateOf(pe) != Unedited {
			continue
		}
		if len(pe.Messages) != 1 {
			continue
		}
		m := pe.Messages[0]
		tokens := session.EstimateTokens(m)
		if tokens <= min {
			continue
		}
		args := argsPreview(calls[m.ToolCallID].Arguments)
		ph := placeholder(m.ToolName, args, tokens, pe.Entry.ID)
		after := (jsjson.Len16(ph) + 3) / 4
		if after >= tokens {
			continue // a placeholder would not be smaller
		}
		out = append(out, Cleared{EntryID: pe.Entry.ID, ToolName: m.ToolName, Arguments: args, Tokens: tokens,
			TokensAfter: after, Placeholder: ph})
	}
	return out
}

// placeholder is what a cleared result says instead: the tool, its arguments, the size
// and how to get it back.
func placeholder(tool, args string, tokens int, id string) string {
	return fmt.Sprintf("%s %s %s, ~%d tokens; the output is kept in the session history. Restore: pi-lsp edit-context SESSION %s --restore (or clear-tool-output SESSION --restore for all)]",
		ClearedMarker, tool, args, tokens, id)
}

// argsPreview is a call's arguments on one line, cut at a rune boundary and never inside
// a short value (the whole JSON up to 120 characters), its strings redacted (as decoded:
// an escape does not hide a secret) before it is cut: the placeholder goes to the model
// in every later request, and a cut secret would no longer be recognised.
func argsPreview(raw []byte) string {
	s := strings.Join(strings.Fields(string(redact.JSON(raw))), " ")
	if s == "" {
		return "{}"
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

// ClearToolOutput replaces the tool results PlanClear lists for the session's leaf, in
// one write (all or none), and reports the context figure before and after.
func ClearToolOutput(ctx context.Context, path string, opt ClearOptions) (*ClearResult, error) {
	f, err := session.Load(path)
	if err != nil {
		return nil, err
	}
	ix := session.NewIndex(f)
	res, err := PreviewClear(ix, opt)
	if err != nil {
		return nil, err
	}
	res.DryRun = opt.DryRun
	if len(res.Cleared) == 0 {
		return res, ErrNothingToClear
	}
	if opt.DryRun {
		return res, nil
	}
	edits := make([]Edit, len(res.Cleared))
	for i, c := range res.Cleared {
		edits[i] = Edit{TargetID: c.EntryID, Action: Replace, Text: c.Placeholder}
	}
	written, before, err := apply(ctx, path, edits)
	if err != nil {
		return nil, err
	}
	res.Entries = written
	res.TokensAfter = session.ProjectedContextTokens(append(before[:len(before):len(before)], written...)).Tokens
	return res, nil
}

// PreviewClear is what ClearToolOutput would do on the index's leaf path, written
// nowhere: the results it would replace, the tokens saved, and the figure before and
// after (after: every message estimated, as Pi counts after an edit).
func PreviewClear(ix *session.Index, opt ClearOptions) (*ClearResult, error) {
	branch, leafID := ix.LeafPath(), ix.LeafID()
	if opt.KeepRecentTokens <= 0 && opt.Settings != nil {
		st, err := opt.Settings(ix.File.Header.Cwd, branch)
		if err != nil {
			return nil, err
		}
		opt.KeepRecentTokens = st.KeepRecentTokens
	}
	plan := PlanClear(branch, opt)
	res := &ClearResult{LeafID: leafID, Cleared: plan, TokensBefore: session.ProjectedContextTokens(branch).Tokens, DryRun: true}
	if res.Cleared == nil {
		res.Cleared = []Cleared{}
	}
	for _, c := range plan {
		res.Saved += c.Tokens - c.TokensAfter
	}
	res.TokensAfter = res.TokensBefore
	if len(plan) > 0 {
		res.TokensAfter = estimateAfter(branch, plan)
	}
	return res, nil
}

// RestoreCleared brings back every tool result of the leaf's context that a clear
// replaced (its latest edit is a placeholder), in one write.
func RestoreCleared(ctx context.Context, path string) (*ClearResult, error) {
	f, err := session.Load(path)
	if err != nil {
		return nil, err
	}
	ix := session.NewIndex(f)
	branch := ix.LeafPath()
	res := &ClearResult{LeafID: ix.LeafID(), Cleared: []Cleared{}, TokensBefore: session.ProjectedContextTokens(branch).Tokens}
	var edits []Edit
	for _, pe := range session.Project(branch) {
		if pe.Entry.Role() != session.RoleToolResult || stateOf(pe) != Replaced || len(pe.Messages) != 1 {
			continue
		}
		m := pe.Messages[0]
		if !strings.HasPrefix(m.Text(""), ClearedMarker) {
			continue
		}
		orig := session.EntryMessages(pe.Entry)
		n := 0
		for _, o := range orig {
			n += session.EstimateTokens(o)
		}
		res.Cleared = append(res.Cleared, Cleared{EntryID: pe.Entry.ID, ToolName: m.ToolName, Tokens: session.EstimateTokens(m), TokensAfter: n})
		edits = append(edits, Edit{TargetID: pe.Entry.ID, Action: Restore})
	}
	if len(edits) == 0 {
		res.TokensAfter = res.TokensBefore
		return res, ErrNothingToClear
	}
	written, before, err := apply(ctx, path, edits)
	if err != nil {
		return nil, err
	}
	for _, c := range res.Cleared {
		res.Saved += c.Tokens - c.TokensAfter
	}
	res.Entries = written
	res.TokensAfter = session.ProjectedContextTokens(append(before[:len(before):len(before)], written...)).Tokens
	return res, nil
}

// estimateAfter is the figure after the plan's edits without writing them: every message
// counted (as Pi counts after an edit), the cleared ones as their placeholders.
func estimateAfter(branch []*session.Entry, plan []Cleared) float64 {
	cleared := map[string]int{}
	for _, c := range plan {
		cleared[c.EntryID] = c.TokensAfter
	}
	total := 0
	for _, pe := range session.Project(branch) {
		if n, ok := cleared[pe.Entry.ID]; ok {
			total += n
			continue
		}
		for _, m := range pe.Messages {
			total += session.EstimateTokens(m)
		}
	}
	return float64(total)
}
