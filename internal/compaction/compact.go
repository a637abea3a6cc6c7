package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// ErrNothingToCompact: the span to summarize holds no message (Pi 0.79.8+:
// prepareCompaction gives nothing, and /compact says so in these words).
var ErrNothingToCompact = errors.New("Nothing to compact (session too small)")

// NothingToDo reports whether err says that the path has nothing to compact (an empty
// path, a path that ends in a compaction, a span with no message): an answer to a manual
// compaction, not a failure of an automatic one.
func NothingToDo(err error) bool {
	return errors.Is(err, ErrNothingToCompact) || errors.Is(err, ErrAlreadyCompacted) || errors.Is(err, ErrEmptyPath)
}

// ErrPinnedDropped: the summary does not quote a pinned message; nothing was written.
var ErrPinnedDropped = errors.New("the summary drops a pinned message; edit it, or commit anyway to accept")

// ErrCancelled is returned when a hook or the caller cancels the compaction.
var ErrCancelled = errors.New("compaction cancelled")

// SplitTurnSeparator joins the history summary and the turn-prefix summary, as Pi does.
const SplitTurnSeparator = "\n\n---\n\n**Turn Context (split turn):**\n\n"

// NoPriorHistory is Pi's history part when a split turn has nothing before it.
const NoPriorHistory = "No prior history."

// Details are stored in the compaction entry.
type Details struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
	// Edited marks a summary the user edited before it was committed.
	Edited bool `json:"edited,omitempty"`
}

// Audit is what a check of the summary against the span found.
type Audit struct {
	MissingModifiedFiles []string `json:"missingModifiedFiles,omitempty"`
	FileBlocksIntact     bool     `json:"fileBlocksIntact"`
	MissingPinned        []string `json:"missingPinned,omitempty"`
}

// OK reports whether nothing is missing.
func (a Audit) OK() bool {
	return len(a.MissingModifiedFiles) == 0 && a.FileBlocksIntact && len(a.MissingPinned) == 0
}

// Outcome is Pi's CompactionResult plus the summary call's usage and an audit.
type Outcome struct {
	Summary          string
	FirstKeptEntryID string
	TokensBefore     float64
	TokensAfter      float64
	Details          Details
	Usage            *session.Usage
	Audit            Audit
	FromHook         bool
	// RetainNone keeps nothing before the compaction: its firstKeptEntryId is its own id
	// (Pi 1.6.0 writes that when a hook answers firstKeptEntryId null).
	RetainNone bool
	// SystemMessage is the checkpoint Pi 1.6.0 stores on a compaction: the system
	// messages of the context replayed into one (session.CurrentSystemMessage), nil for a
	// session that has none. Written with the entry's own time as its timestamp.
	SystemMessage *session.Message
}

// Options tune one compaction.
type Options struct {
	CustomInstructions string
	ThinkingLevel      string
	// MaxListedFiles bounds each file list in the summary text (0: default, <0: none).
	MaxListedFiles int
	Pinned         []string
	// AllowDroppedPins commits a summary that does not quote every pinned text; by
	// default such a summary is refused (ErrPinnedDropped) and nothing is written.
	AllowDroppedPins bool
	Progress         func(Progress)
}

// Generate produces the summary for a preparation, as Pi 1.6.0's compact() does (the
// requests of a split turn one after the other, history first; an answer cut off by the
// output limit or calling a tool is a failure in Pi's words), with the design
// divergences: the previous summary keeps no stale file blocks, an empty answer is a
// failure, and file lists in the text are bounded.
func Generate(ctx context.Context, p *Preparation, s Summarizer, opt Options) (*Outcome, error) {
	if p.NothingToSummarize() {
		return nil, ErrNothingToCompact
	}
	readFiles, modifiedFiles := p.FileOps.Lists()
	base := Request{
		ThinkingLevel: opt.ThinkingLevel,
		ReadFiles:     readFiles,
		ModifiedFiles: modifiedFiles,
		Pinned:        opt.Pinned,
		Progress:      opt.Progress,
	}
	history := func(ctx context.Context) (Result, error) {
		if len(p.MessagesToSummarize) == 0 {
			// Pi 1.6.0 writes the previous summary here verbatim, old file blocks and
			// all; pi-lsp strips those, since fresh accumulated ones are appended.
			if p.HasPrevious && p.PreviousSummary != "" {
				return Result{Text: stripFileBlocks(p.PreviousSummary)}, nil
			}
			return Result{Text: NoPriorHistory}, nil
		}
		req := base
		req.Kind = KindHistory
		req.Messages = p.MessagesToSummarize
		req.Conversation = SerializeAgentMessages(p.MessagesToSummarize)
		req.PreviousSummary = p.PreviousSummary
		req.CustomInstructions = opt.CustomInstructions
		if p.IsSplitTurn {
			req.Later = p.TurnPrefixMessages
		}
		r, err := s.Summarize(ctx, req)
		if err != nil {
			return Result{}, SummaryFailure("Summarization", err)
		}
		return r, nil
	}
	var summary string
	var usage *session.Usage
	if p.IsSplitTurn && len(p.TurnPrefixMessages) > 0 {
		// One after the other, history first, as Pi 1.6.0 runs them (0.80.4+): a
		// failed history summary costs no turn-prefix call.
		h, err := history(ctx)
		if err != nil {
			return nil, err
		}
		req := base
		req.Kind = KindTurnPrefix
		req.Messages = p.TurnPrefixMessages
		req.Conversation = SerializeAgentMessages(p.TurnPrefixMessages)
		req.CustomInstructions = opt.CustomInstructions // Pi 1.4.0+ focuses the prefix too
		pr, err := s.Summarize(ctx, req)
		if err != nil {
			return nil, SummaryFailure("Turn prefix summarization", err)
		}
		summary = h.Text + SplitTurnSeparator + pr.Text
		usage = addUsage(h.Usage, pr.Usage)
	} else {
		h, err := history(ctx)
		if err != nil {
			return nil, err
		}
		summary, usage = h.Text, h.Usage
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	max := opt.MaxListedFiles
	if max == 0 {
		max = fileops.DefaultMaxListed
	}
	recent := fileops.Recent(append(append([]*session.Message(nil), p.MessagesToSummarize...), p.TurnPrefixMessages...))
	summary += fileops.FormatBounded(readFiles, modifiedFiles, recent, max)
	// The summary is re-sent on every later turn and kept in the file for good: it never
	// quotes a credential from the span (the request above stays Pi's own).
	summary = redact.String(summary)
	out := &Outcome{
		Summary:          summary,
		FirstKeptEntryID: p.FirstKeptEntryID,
		TokensBefore:     p.TokensBefore,
		Details:          Details{ReadFiles: readFiles, ModifiedFiles: modifiedFiles},
		Usage:            usage,
	}
	out.TokensAfter = TokensAfter(summary, p)
	out.Audit = AuditSummary(summary, modifiedFiles, opt.Pinned)
	return out, nil
}

// TokensAfter estimates the context after compaction (Pi's estimatedTokensAfter): the
// checkpoint, the summary and the kept messages, each estimated (earlier usage figures
// describe the old, larger context).
func TokensAfter(summary string, p *Preparation) float64 {
	total := float64(session.EstimateTokens(session.NewSummaryMessage(session.RoleCompactionSummary, summary)))
	total += float64(session.EstimateTokens(Checkpoint(p.Path)))
	for _, m := range p.KeptMessages() {
		total += float64(session.EstimateTokens(m))
	}
	return total
}

// addUsage is Pi's combineUsage: every field summed, reasoning present when either part
// has it, and a total from the provider only when both are.
func addUsage(a, b *session.Usage) *session.Usage {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	sum := &session.Usage{Input: a.Input + b.Input, Output: a.Output + b.Output, CacheRead: a.CacheRead + b.CacheRead,
		CacheWrite: a.CacheWrite + b.CacheWrite, TotalTokens: a.TotalTokens + b.TotalTokens}
	if a.Reasoning != nil || b.Reasoning != nil {
		r := deref(a.Reasoning) + deref(b.Reasoning)
		sum.Reasoning = &r
	}
	if a.CacheWrite1h != nil || b.CacheWrite1h != nil {
		w := deref(a.CacheWrite1h) + deref(b.CacheWrite1h)
		sum.CacheWrite1h = &w
	}
	if a.Cost != nil || b.Cost != nil {
		var ca, cb session.UsageCost
		if a.Cost != nil {
			ca = *a.Cost
		}
		if b.Cost != nil {
			cb = *b.Cost
		}
		sum.Cost = &session.UsageCost{Input: ca.Input + cb.Input, Output: ca.Output + cb.Output, CacheRead: ca.CacheRead + cb.CacheRead,
			CacheWrite: ca.CacheWrite + cb.CacheWrite, Total: ca.Total + cb.Total}
		if ca.TotalFromProvider != nil || cb.TotalFromProvider != nil {
			both := ca.TotalFromProvider != nil && *ca.TotalFromProvider && cb.TotalFromProvider != nil && *cb.TotalFromProvider
			sum.Cost.TotalFromProvider = &both
		}
	}
	return sum
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// SummaryFailure words a failed summary call as Pi 1.6.0 does: "<label> failed: <why>",
// and "<label> attempted to call a tool" for an answer that called one.
func SummaryFailure(label string, err error) error {
	var se *SummaryError
	if errors.As(err, &se) && se.Kind == KindToolCall {
		return &labeledError{msg: label + " attempted to call a tool", err: err}
	}
	return fmt.Errorf("%s failed: %w", label, err)
}

type labeledError struct {
	msg string
	err error
}

func (e *labeledError) Error() string { return e.msg }
func (e *labeledError) Unwrap() error { return e.err }

// Checkpoint is the systemMessage a compaction appended at the end of path carries, as Pi
// 1.6.0 computes it: getCurrentSystemMessage of the path's projected context (nil when it
// holds no system message).
func Checkpoint(path []*session.Entry) *session.Message {
	return session.CurrentSystemMessage(session.ProjectedMessages(session.Project(path)))
}

// stripFileBlocks removes the trailing <read-files>/<modified-files> blocks from an
// earlier summary, since the new summary appends fresh, accumulated ones.
func stripFileBlocks(s string) string {
	for _, tag := range []string{"\n\n<read-files>", "\n\n<modified-files>"} {
		if i := strings.Index(s, tag); i >= 0 {
			s = s[:i]
		}
	}
	return s
}

// AuditSummary checks a summary against facts of its span: every modified file appears
// in it, the file blocks are well formed, and every pinned text is quoted (a text that
// holds a credential is quoted as redact.String has it in the summary).
func AuditSummary(summary string, modifiedFiles, pinned []string) Audit {
	a := Audit{FileBlocksIntact: true}
	for _, f := range modifiedFiles {
		if !strings.Contains(summary, f) && !strings.Contains(summary, redact.String(f)) {
			a.MissingModifiedFiles = append(a.MissingModifiedFiles, f)
		}
	}
	for _, tag := range []string{"read-files", "modified-files"} {
		if strings.Count(summary, "<"+tag+">") != strings.Count(summary, "</"+tag+">") {
			a.FileBlocksIntact = false
		}
	}
	folded := fold(summary)
	for _, p := range pinned {
		if !quotes(summary, folded, p) && !quotes(summary, folded, redact.String(p)) {
			a.MissingPinned = append(a.MissingPinned, p)
		}
	}
	return a
}

// quotes reports whether summary holds p, as written or with its white space folded
// (a quote on one line, its indentation and runs of blanks made one space, as a
// summarizer lays a multi-line message into an item).
// folded is fold(summary), made once for every pin.
func quotes(summary, folded, p string) bool {
	return strings.Contains(summary, p) || strings.Contains(folded, fold(p))
}

// fold makes every run of white space one space.
func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

// EntryFields are the fields of the compaction entry for an outcome, in Pi's order
// (summary, firstKeptEntryId, tokensBefore, details, fromHook) plus the usage of the
// summary call.
func (o *Outcome) EntryFields() []session.Field {
	// Pi's appendCompaction order; absent (nil) values are left out.
	var usage, checkpoint any
	if o.Usage != nil {
		usage = o.Usage
	}
	if o.SystemMessage != nil {
		checkpoint = session.AtEntryTime(o.SystemMessage.Raw())
	}
	var firstKept any = o.FirstKeptEntryID
	if o.RetainNone {
		firstKept = session.OwnID
	}
	return []session.Field{
		{Key: "summary", Value: o.Summary},
		{Key: "firstKeptEntryId", Value: firstKept},
		{Key: "tokensBefore", Value: o.TokensBefore},
		{Key: "details", Value: o.Details},
		{Key: "usage", Value: usage},
		{Key: "fromHook", Value: o.FromHook},
		{Key: "systemMessage", Value: checkpoint},
	}
}
