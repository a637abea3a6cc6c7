package service

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// CompactRequest is a compaction of the session at Path.
type CompactRequest struct {
	Path string
	// Leaf compacts the path to this entry ("" for Pi's leaf). A live pi compacts at its
	// own leaf: a Leaf other than that one is refused (*NotViaPi), that one accepted.
	Leaf string
	// KeepFrom, when set, is the entry the kept part starts at ("summarize up to
	// here"), in place of Pi's keepRecentTokens cut; a live pi cuts where its settings
	// say, so with one the job is refused (*NotViaPi).
	KeepFrom     string
	Instructions string
	// Reason is what asked for the compaction: "manual" ("" too), or "threshold" and
	// "overflow" for an automatic compaction, which only pi-lsp does (a live pi compacts
	// on its own).
	Reason    string
	WillRetry bool
	Force     bool
	// DryRun prepares the compaction and writes nothing: the outcome's Run holds the
	// preparation, its Choice the summarizer the compaction would use.
	DryRun bool
	// Coverage, with DryRun, also generates the summary and checks what of the
	// summarized range it carries.
	Coverage bool
	// Asked names the request's own choices a live pi cannot honour (the CLI's --model,
	// --keep-recent, ...): with a live pi the job is refused (*NotViaPi).
	Asked []string
	// Hook is asked before the summarizer (the client's pi/beforeCompact, the CLI's
	// --summary-file).
	Hook compaction.Hook
	// Reuse, when set, builds the source of a summary made before (a draft): given the
	// summarizer and options of the run, it may supply the outcome.
	Reuse func(compaction.Summarizer, compaction.Options) func(context.Context, *compaction.Preparation) (*compaction.Outcome, error)
	// Previewed: Reuse gives the user's previewed (maybe edited) summary, which only
	// pi-lsp can commit; with a live pi the job is refused.
	Previewed bool
	// AllowDroppedPins commits a summary that does not quote every pinned message.
	AllowDroppedPins bool
}

// CompactOutcome is what a compaction did, whoever did it.
type CompactOutcome struct {
	Via Via
	// PID is the live pi's (Via "pi").
	PID int
	// NothingToCompact, when not "", says why nothing was compacted (an answer, not a
	// failure: nothing was written).
	NothingToCompact string
	// Nothing is that reason as compaction's error (ErrAlreadyCompacted, ...) when
	// pi-lsp found it (nil when a live pi did).
	Nothing error
	// Entry is the compaction entry written (null when a live pi did not say).
	Entry session.Raw[session.CompactionEntry]
	// Result is Pi's CompactionResult of the compaction written.
	Result *session.CompactionResult
	// Run is pi-lsp's run: its preparation and outcome (nil through a live pi).
	Run *compaction.RunResult
	// Choice is the summarizer and model pi-lsp's run used (a dry run: would use).
	Choice SummarizerChoice
	// Coverage and Summary: a dry run with Coverage, the summary generated and what of
	// the summarized range it carries.
	Coverage *compaction.Coverage
	Summary  string
}

// CompactionEnd is how a compaction ended (Pi's compaction_end), whoever ran it.
type CompactionEnd struct {
	Via Via
	// Result is Pi's CompactionResult when the compaction was written.
	Result    *session.CompactionResult
	Aborted   bool
	WillRetry bool
	// ErrorMessage is prefixed as Pi prefixes it ("Compaction failed: ", ...); empty
	// when it did not fail, or when an automatic compaction found nothing to do.
	ErrorMessage string
	// Quiet: an automatic compaction that found nothing to do (no failure to show).
	Quiet bool
}

// CompactionReporter is a Reporter that also renders Pi's compaction_start and
// compaction_end (the server's pi/compactionStart and pi/compactionEnd), sent once each
// per compaction written or attempted, whoever runs it.
type CompactionReporter interface {
	Reporter
	CompactionStart(via Via)
	CompactionEnd(CompactionEnd)
}

// failedPrefix is Pi's prefix of a failed compaction's message, by reason.
var failedPrefix = map[string]string{"manual": "Compaction failed: ", "threshold": "Auto-compaction failed: ", "overflow": "Context overflow recovery failed: "}

// Compact compacts a session: a dry run prepares it; a write goes where RouteWrite
// sends it (the live pi's own compaction, or pi-lsp's on one snapshot of the session,
// with the summarizer chosen for the model of the path compacted, and the session's
// pinned messages quoted). A failed or cancelled compaction writes nothing.
//
// The model of a compaction at a Leaf other than the session's: Pi 1.6.0 compacts the
// path to its leaf with the session's model (agent-session compact: this.model,
// getCompactionSettings(model)), which is the model of that path (Pi resumes a session
// with the model its leaf's path last set). So a compaction of the path to Leaf uses
// the model of the path to Leaf, for its summarizer and for its
// compaction.modelOverrides, as Pi would after resuming the session at Leaf.
func (c Config) Compact(ctx context.Context, req CompactRequest, rep Reporter) (CompactOutcome, error) {
	if req.Reason == "" {
		req.Reason = "manual"
	}
	if rep == nil {
		rep = NoReporter{}
	}
	if req.DryRun {
		return c.compactDry(ctx, req, rep)
	}
	local := req.Reason != "manual" || req.Previewed
	r, err := c.RouteWrite(ctx, req.Path, c.sessions().Cwd(req.Path), req.Force, !local)
	if err != nil {
		return CompactOutcome{}, err
	}
	if r.Bridge != nil {
		return c.compactViaPi(ctx, req, r.Bridge, rep)
	}
	return c.compactHere(ctx, req, rep)
}

// compactHere is pi-lsp's own compaction: start, the session's lock, its snapshot, the
// summarizer of the path compacted, the run, end.
func (c Config) compactHere(ctx context.Context, req CompactRequest, rep Reporter) (CompactOutcome, error) {
	cr, _ := rep.(CompactionReporter)
	if cr != nil {
		cr.CompactionStart(ViaFile)
	}
	out, err := c.compactLocked(ctx, req, rep)
	if cr != nil {
		end := CompactionEnd{Result: out.Result, WillRetry: req.WillRetry}
		if err != nil {
			end.Result, end.WillRetry = nil, false
			end.Aborted = errors.Is(err, context.Canceled) || errors.Is(err, compaction.ErrCancelled) || ctx.Err() != nil
			end.Quiet = compaction.NothingToDo(err) && req.Reason != "manual"
			if !end.Aborted && !end.Quiet {
				end.ErrorMessage = failedPrefix[req.Reason] + err.Error()
			}
		}
		cr.CompactionEnd(end)
	}
	if err != nil && compaction.NothingToDo(err) && req.Reason == "manual" {
		return CompactOutcome{NothingToCompact: err.Error(), Nothing: err}, nil
	}
	return out, err
}

func (c Config) compactLocked(ctx context.Context, req CompactRequest, rep Reporter) (CompactOutcome, error) {
	unlock, err := c.sessions().Lock(ctx, req.Path)
	if err != nil {
		return CompactOutcome{}, err
	}
	defer unlock()
	// The job computes on one snapshot of the session: the summarizer is chosen on it,
	// the compaction prepared on it, and written only while the file is still the one
	// it read (a refresh of the server's followed index while the model answers changes
	// nothing it sees).
	snap, err := c.sessions().Snapshot(req.Path)
	if err != nil {
		return CompactOutcome{}, err
	}
	ix := snap.Index()
	cwd := ix.File.Header.Cwd
	path := ix.Path(leafOr(ix, req.Leaf))
	sum, _, choice, err := c.Summarizer(cwd, path)
	if err != nil {
		return CompactOutcome{}, err
	}
	if choice.Notice != "" {
		rep.Notice(choice.Notice)
	}
	opt := compaction.RunOptions{
		Options: compaction.Options{
			CustomInstructions: req.Instructions,
			// pi-lsp's pins: the pinned messages of the path are quoted verbatim.
			Pinned:           ix.PinnedTexts(path),
			AllowDroppedPins: req.AllowDroppedPins,
			Progress:         summaryProgress(rep),
		},
		LeafID:      req.Leaf,
		KeepFrom:    req.KeepFrom,
		SettingsFor: c.SettingsFor(cwd),
		Summarizer:  sum,
		Hook:        req.Hook,
		Phase:       phaseReport(rep),
	}
	if req.Reuse != nil {
		opt.Reuse = req.Reuse(sum, opt.Options)
	}
	res, err := compaction.Run(ctx, snap, opt)
	if err != nil {
		return CompactOutcome{Choice: choice}, err
	}
	o := res.Outcome
	firstKept := o.FirstKeptEntryID
	if o.RetainNone {
		firstKept = res.Entry.ID
	}
	after := o.TokensAfter
	details, err := json.Marshal(o.Details)
	if err != nil {
		return CompactOutcome{}, err
	}
	return CompactOutcome{
		Entry: session.Raw[session.CompactionEntry](res.Entry.Raw()),
		Result: &session.CompactionResult{Summary: o.Summary, FirstKeptEntryID: firstKept, TokensBefore: o.TokensBefore,
			EstimatedTokensAfter: &after, Details: details, Usage: o.Usage},
		Run: res, Choice: choice,
	}, nil
}

// compactDry prepares the compaction on one snapshot and writes nothing; with Coverage
// it generates the summary the compaction would write and checks it.
func (c Config) compactDry(ctx context.Context, req CompactRequest, rep Reporter) (CompactOutcome, error) {
	snap, err := c.sessions().Snapshot(req.Path)
	if err != nil {
		return CompactOutcome{}, err
	}
	ix := snap.Index()
	cwd := ix.File.Header.Cwd
	res, err := compaction.Run(ctx, snap, compaction.RunOptions{
		Options: compaction.Options{CustomInstructions: req.Instructions},
		LeafID:  req.Leaf, KeepFrom: req.KeepFrom, DryRun: true, SettingsFor: c.SettingsFor(cwd),
	})
	if compaction.NothingToDo(err) {
		return CompactOutcome{NothingToCompact: err.Error(), Nothing: err}, nil
	}
	if err != nil {
		return CompactOutcome{}, err
	}
	p := res.Preparation
	out := CompactOutcome{Run: res}
	if p.NothingToSummarize() {
		out.NothingToCompact, out.Nothing = compaction.ErrNothingToCompact.Error(), compaction.ErrNothingToCompact
		return out, nil
	}
	if !req.Coverage {
		out.Choice = c.SummaryPlan(cwd, p.Path)
		return out, nil
	}
	sum, _, choice, err := c.Summarizer(cwd, p.Path)
	if err != nil {
		return out, err
	}
	out.Choice = choice
	if choice.Notice != "" {
		rep.Notice(choice.Notice)
	}
	opt := compaction.Options{CustomInstructions: req.Instructions, ThinkingLevel: session.ContextOfPath(p.Path).Level(),
		Pinned: ix.PinnedTexts(p.Path), Progress: summaryProgress(rep)}
	gen, err := compaction.Generate(ctx, p, sum, opt)
	if err != nil {
		return out, err
	}
	cov, err := compaction.CheckCoverage(ctx, p, gen.Summary)
	if err != nil {
		return out, err
	}
	after := gen.TokensAfter
	out.Coverage, out.Summary = &cov, gen.Summary
	out.Result = &session.CompactionResult{Summary: gen.Summary, FirstKeptEntryID: p.FirstKeptEntryID, TokensBefore: p.TokensBefore, EstimatedTokensAfter: &after}
	return out, nil
}

// compactViaPi makes the live pi compact its session, reporting its compaction_start
// and compaction_end as pi-lsp's own are.
func (c Config) compactViaPi(ctx context.Context, req CompactRequest, reg *bridge.Registration, rep Reporter) (CompactOutcome, error) {
	asked := req.Asked
	if req.KeepFrom != "" && len(asked) == 0 {
		asked = []string{"keepFrom"} // pi cuts where its own settings say
	}
	pi, err := dialPi(ctx, reg, req.Leaf, asked)
	if err != nil {
		return CompactOutcome{}, err
	}
	defer pi.close()
	cr, _ := rep.(CompactionReporter)
	started, ended := false, false
	start := func() {
		if !started && cr != nil {
			cr.CompactionStart(ViaPi)
		}
		started = true
	}
	rep.Report("pi is compacting", 5)
	events := make(chan bridge.Event, 16)
	done := make(chan struct{})
	// Pi's events are rendered in order, on one goroutine.
	go func() {
		defer close(done)
		for ev := range events {
			switch ev.Type {
			case "compaction_start":
				start()
			case "session_before_compact":
				rep.Report("summarizing (pi's model)", 10)
			case "compaction_end":
				e := decodeEvent[bridge.CompactionEndEvent](ev)
				start()
				ended = true
				if cr != nil {
					cr.CompactionEnd(CompactionEnd{Via: ViaPi, Result: e.Result, Aborted: e.Aborted, WillRetry: e.WillRetry, ErrorMessage: e.ErrorMessage})
				}
			}
		}
	}()
	res, err := pi.conn.Compact(ctx, req.Instructions, func(ev bridge.Event) { events <- ev })
	close(events)
	<-done
	err = pi.fail(err)
	if started && !ended && cr != nil {
		// pi went away (or the request was cancelled) before it said how it ended.
		end := CompactionEnd{Via: ViaPi, Aborted: ctx.Err() != nil}
		if ctx.Err() == nil && err != nil {
			end.ErrorMessage = failedPrefix["manual"] + err.Error()
		}
		cr.CompactionEnd(end)
	}
	out := CompactOutcome{Via: ViaPi, PID: reg.PID}
	var be *bridge.Error
	if errors.As(err, &be) && be.Code == bridge.CodeNothingToCompact {
		out.NothingToCompact = be.Message
		return out, nil
	}
	if err != nil {
		return out, err
	}
	out.Entry, out.Result = res.Entry, res.Result
	return out, nil
}

// phasePercent is where each phase of a summarizing job puts its progress.
var phasePercent = map[string]int{"preparing": 5, "summarizing": 10, "writing": 95}

// phaseReport reports a job's phases.
func phaseReport(rep Reporter) func(string) {
	return func(phase string) { rep.Report(phase, phasePercent[phase]) }
}

// Ticker is a Reporter that also wants a summarizer's frequent reports (tokens
// streamed): a progress bar. Without it a job reports its phases and each request
// attempt only.
type Ticker interface {
	Tick(message string, percentage int)
}

// summaryProgress reports a summarizer's progress: each request attempt as a step,
// the tokens streamed as ticks.
func summaryProgress(rep Reporter) func(compaction.Progress) {
	t, _ := rep.(Ticker)
	return func(p compaction.Progress) {
		pct := 10 + min(80, p.Tokens*80/400)
		switch {
		case p.Note() != "":
			rep.Report(p.Message(), pct)
		case t != nil:
			t.Tick(p.Message(), pct)
		}
	}
}
