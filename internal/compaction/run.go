package compaction

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// ErrSessionChanged means the file grew while the summary was being produced; the
// compaction is not written, because its cut was computed on an older path.
var ErrSessionChanged = errors.New("the session changed while compacting; nothing was written, try again")

// HookDecision is what a before-compaction hook answers (Pi's session_before_compact).
type HookDecision struct {
	Cancel bool
	// Outcome, when set, is used instead of generating a summary.
	Outcome *Outcome
}

// Hook runs after preparation and before any summary is generated.
type Hook func(ctx context.Context, p *Preparation) (HookDecision, error)

// RunOptions configure a compaction of a session file.
type RunOptions struct {
	Options
	LeafID string // "" for Pi's leaf (the last entry)
	// KeepFrom, when set, is the entry the kept part starts at, chosen by the user in
	// place of Pi's keepRecentTokens cut (see PrepareFrom).
	KeepFrom string
	Settings session.CompactionSettings
	// SettingsFor, when set, gives the settings for the session's model at the leaf
	// instead of Settings (Pi 1.6.0 resolves compaction.modelOverrides per model); an
	// error (settings Pi refuses) stops the run before anything is written.
	SettingsFor func(provider, model string) (session.CompactionSettings, error)
	Summarizer  Summarizer
	Hook        Hook
	// Reuse, when set, may supply the outcome (a background draft) before a summary is
	// generated; nil means generate.
	Reuse  func(ctx context.Context, p *Preparation) (*Outcome, error)
	DryRun bool
	// Phase, when set, is told when the job moves to "preparing", "summarizing" and
	// "writing".
	Phase func(phase string)
}

// RunResult is what a compaction did.
type RunResult struct {
	Preparation *Preparation
	Outcome     *Outcome       // nil on a dry run
	Entry       *session.Entry // the appended entry, nil on a dry run
	Index       *session.Index // the index the preparation was computed on
}

// Phases is a job's phase callback, f, or one that does nothing when f is nil, so that a
// job reports its phases without a check at each.
func Phases(f func(phase string)) func(phase string) {
	if f == nil {
		return func(string) {}
	}
	return f
}

// Run compacts the session snap was taken of: prepare on the snapshot, ask the hook,
// summarize, and append one compaction entry (Snapshot.Append: only while the file is
// still the one snap read, else ErrSessionChanged). The file is not read again. Any
// failure or cancellation leaves the file untouched.
func Run(ctx context.Context, snap *session.Snapshot, opt RunOptions) (*RunResult, error) {
	phase := Phases(opt.Phase)
	phase("preparing")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ix := snap.Index()
	var err error
	leaf := opt.LeafID
	if leaf == "" {
		leaf = ix.LeafID()
	} else if ix.Entry(leaf) == nil {
		return nil, fmt.Errorf("entry %s not found", leaf)
	}
	settings := opt.Settings
	if opt.SettingsFor != nil {
		provider, model := session.ModelOfPath(ix.Path(leaf))
		if settings, err = opt.SettingsFor(provider, model); err != nil {
			return nil, err
		}
	}
	prep, err := PrepareFrom(ix.Path(leaf), settings, opt.KeepFrom)
	if err != nil {
		return nil, err
	}
	res := &RunResult{Preparation: prep, Index: ix}
	if opt.DryRun {
		return res, nil
	}
	if prep.NothingToSummarize() {
		// Design divergence 2: no model call, and no hook is asked about it either.
		return nil, ErrNothingToCompact
	}
	var out *Outcome
	if opt.Hook != nil {
		d, err := opt.Hook(ctx, prep)
		if err != nil {
			return nil, fmt.Errorf("before-compact hook: %w", err)
		}
		if d.Cancel {
			return nil, ErrCancelled
		}
		if d.Outcome != nil {
			out = hookOutcome(d.Outcome, prep, opt.Pinned)
		}
	}
	if out == nil && opt.Reuse != nil {
		// A background draft of the same span (or of its beginning) saves the model call.
		out, err = opt.Reuse(ctx, prep)
		if err != nil {
			return nil, err
		}
	}
	if out == nil {
		if opt.Summarizer == nil {
			return nil, errors.New("no summarizer configured")
		}
		phase("summarizing")
		gopt := opt.Options
		if gopt.ThinkingLevel == "" {
			// Pi passes the session's thinking level to the summary calls.
			gopt.ThinkingLevel = session.ContextOfPath(prep.Path).Level()
		}
		out, err = Generate(ctx, prep, opt.Summarizer, gopt)
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Whatever supplied the summary (Generate, a hook, a --summary-file, an edited
	// preview, a draft), the text written holds no credential.
	out.Summary = redact.String(out.Summary)
	if len(out.Audit.MissingPinned) > 0 && !opt.AllowDroppedPins {
		return nil, fmt.Errorf("%w: %q", ErrPinnedDropped, out.Audit.MissingPinned)
	}
	phase("writing")
	// The checkpoint replayed at the boundary: without it Pi 1.6.0's context after the
	// compaction has no system prompt and no tools (the kept range drops system messages).
	out.SystemMessage = Checkpoint(prep.Path)
	// What was summarized could not all be read back (its read error), or the file is
	// no longer the one the snapshot read (ErrChanged): nothing is written.
	entries, err := snap.Append([]session.NewEntry{{
		Type:     session.TypeCompaction,
		ParentID: leaf,
		Fields:   out.EntryFields(),
	}})
	if errors.Is(err, session.ErrChanged) {
		return nil, ErrSessionChanged
	}
	if err != nil {
		return nil, err
	}
	res.Outcome, res.Entry = out, entries[0]
	return res, nil
}

// hookOutcome completes a hook-supplied outcome: the summary, tokensBefore and details
// are stored as given (as Pi stores an extension's compaction), but an empty first kept
// entry (which Pi would write and then fail to place) becomes the preparation's, absent
// file lists become the preparation's, and the derived figures are computed.
func hookOutcome(o *Outcome, p *Preparation, pinned []string) *Outcome {
	out := *o
	out.FromHook = true
	if out.FirstKeptEntryID == "" && !out.RetainNone {
		out.FirstKeptEntryID = p.FirstKeptEntryID
	}
	readFiles, modifiedFiles := p.FileOps.Lists()
	if out.Details.ReadFiles == nil && out.Details.ModifiedFiles == nil {
		out.Details.ReadFiles, out.Details.ModifiedFiles = readFiles, modifiedFiles
	}
	if out.Details.ReadFiles == nil {
		out.Details.ReadFiles = []string{}
	}
	if out.Details.ModifiedFiles == nil {
		out.Details.ModifiedFiles = []string{}
	}
	if out.TokensAfter == 0 {
		out.TokensAfter = TokensAfter(out.Summary, p)
		if out.RetainNone {
			// Nothing kept: the checkpoint and the summary are the whole context.
			out.TokensAfter = float64(session.EstimateTokens(session.NewSummaryMessage(session.RoleCompactionSummary, out.Summary))) +
				float64(session.EstimateTokens(Checkpoint(p.Path)))
		}
	}
	out.Audit = AuditSummary(out.Summary, modifiedFiles, pinned)
	return &out
}
