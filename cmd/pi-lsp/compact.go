package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// sessionCwd is the cwd of the session's header ("" when the file does not load).
func sessionCwd(path string) string {
	if f, err := session.Load(path); err == nil {
		return f.Header.Cwd
	}
	return ""
}

// forceFlag declares --force on a command that writes.
func forceFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("force", false, "write even though a running pi process writes the session")
}

// progressLines prints, for a command that summarizes, a stderr line per phase with the
// time since the start ("pi-lsp compact: summarizing (12ms)") and one per request attempt
// of a summarizer that retries ("pi-lsp compact: summarizing: attempt 2 of 2 after stall
// (61s)"), so a slow or failing model is never silence. The lines are printed when stderr
// is a terminal or with --progress, never with --quiet (progressShown).
func progressLines(stderr io.Writer, cmd string) (phase func(string), progress func(compaction.Progress)) {
	if !progressShown(stderr) {
		return func(string) {}, func(compaction.Progress) {}
	}
	start := time.Now()
	var mu sync.Mutex // a split turn's two summaries report at once
	phase = func(p string) {
		fmt.Fprintf(stderr, "pi-lsp %s: %s (%s)\n", cmd, p, time.Since(start).Round(time.Millisecond))
	}
	progress = func(p compaction.Progress) {
		if p.Note() == "" {
			return
		}
		p.Elapsed = time.Since(start)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "pi-lsp %s: %s\n", cmd, p.Message())
	}
	return phase, progress
}

// summarizerFlags declares --summarizer and --model on a command that summarizes.
func summarizerFlags(fs *flag.FlagSet) (kind, model *string) {
	kind = fs.String("summarizer", "", "extractive, model (the session's model, or --model) or openai; default: the session's model when its credential resolves, else extractive")
	model = fs.String("model", "", "summarize with PROVIDER/ID[:THINKING] of Pi's catalog or models.json (default: the session's model)")
	return kind, model
}

// summarizerOf is the summarizer of a job on the session at path, at leaf ("" for Pi's
// leaf), as the session service chooses it; unless --quiet, the one line saying that a
// wanted model could not be used (why, and the fix) goes to stderr.
func summarizerOf(c service.Config, path, leaf, cwd string, stderr io.Writer) (compaction.Summarizer, service.SummarizerConfig, error) {
	var ix *session.Index
	if f, err := session.Load(path); err == nil {
		ix = session.NewIndex(f)
	}
	return summarizerAt(c, ix, leaf, cwd, stderr)
}

// summarizerAt is summarizerOf on the session's index, already loaded (nil: the file
// did not load, and the choice is made without the session's model).
func summarizerAt(c service.Config, ix *session.Index, leaf, cwd string, stderr io.Writer) (compaction.Summarizer, service.SummarizerConfig, error) {
	var entries []*session.Entry
	if ix != nil {
		if leaf == "" || ix.Entry(leaf) == nil {
			leaf = ix.LeafID()
		}
		entries = ix.Path(leaf)
	}
	s, cfg, choice, err := c.Summarizer(cwd, entries)
	if err != nil {
		return nil, cfg, err
	}
	if n := choice.Notice; n != "" && !quietRun(stderr) {
		fmt.Fprintf(stderr, "pi-lsp: %s\n", n)
	}
	return s, cfg, nil
}

// quietRun reports whether the command runs with --quiet.
func quietRun(stderr io.Writer) bool {
	cs, ok := stderr.(*cliStderr)
	return ok && cs.inv != nil && cs.inv.quiet != nil && *cs.inv.quiet
}

func runCompact(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	leaf := fs.String("leaf", "", "leaf entry id (default: Pi's leaf, the last entry)")
	keepFrom := fs.String("keep-from", "", "keep the context verbatim from this entry on and summarize what is before it (\"summarize up to here\")")
	instructions := fs.String("instructions", "", "custom focus for the summary")
	keep := fs.Int("keep-recent", 0, "tokens of recent history to keep verbatim (default: Pi settings, 20000)")
	reserve := fs.Int("reserve", 0, "reserve tokens (default: Pi settings, 16384)")
	kind, model := summarizerFlags(fs)
	summaryFile := fs.String("summary-file", "", "use this file's text as the summary instead of generating one")
	dryRun := fs.Bool("dry-run", false, "show the cut and what would be summarized; write nothing")
	coverage := fs.Bool("coverage", false, "with --dry-run: generate the summary and list the entities of the summarized range it does not carry")
	asJSON := fs.Bool("json", false, "print JSON")
	force := forceFlag(fs)
	path, err := fileArg(fs, args)
	if err != nil {
		return err
	}
	c := svc(*kind, *keep, *reserve)
	c.SummarizerConfig.Model = *model
	cwd := sessionCwd(path)
	// pi compacts at its own leaf with its own model and settings.
	reg, err := writerPi(ctx, fs, c, path, cwd, *force, *dryRun, "leaf", "keep-from", "keep-recent", "reserve", "summarizer", "model", "summary-file")
	if err != nil {
		return err
	}
	if reg != nil {
		phase, _ := progressLines(stderr, "compact")
		return compactViaPi(ctx, reg, path, *instructions, *asJSON, stdout, phase)
	}
	// The job's snapshot of the session, loaded once: the summarizer is chosen on it, the
	// compaction computed on it, and written only if the file is still the one it read.
	// A file that does not load fails the run where the run would read it.
	snap, ix, loadErr := snapshotOf(path)
	opt := compaction.RunOptions{
		Options:  compaction.Options{CustomInstructions: *instructions},
		LeafID:   *leaf,
		KeepFrom: *keepFrom,
		DryRun:   *dryRun,
		// Pi 1.6.0 resolves compaction.modelOverrides for the model of the path
		// compacted; the flags win.
		SettingsFor: c.SettingsFor(cwd),
	}
	if !*dryRun {
		s, _, err := summarizerAt(c, ix, *leaf, cwd, stderr)
		if err != nil {
			return err
		}
		opt.Summarizer = s
		opt.Phase, opt.Progress = progressLines(stderr, "compact")
	}
	if *summaryFile != "" {
		if opt.Hook, err = summaryFileHook(*summaryFile); err != nil {
			return err
		}
	}
	if loadErr != nil {
		return loadErr
	}
	res, err := compaction.Run(ctx, snap, opt)
	if compaction.NothingToDo(err) {
		return printNothingToCompact(stdout, err, *asJSON)
	}
	if err != nil {
		return err
	}
	if *dryRun && *coverage {
		return printCoverage(ctx, stdout, stderr, c, path, *leaf, cwd, res.Preparation, *instructions, *asJSON)
	}
	if *dryRun {
		return printCompactDryRun(stdout, res.Preparation, *asJSON, c.SummaryPlan(cwd, res.Preparation.Path))
	}
	return printCompacted(stdout, path, res, *asJSON)
}

// summaryFileHook is the hook of --summary-file: the file's text is the summary.
func summaryFileHook(name string) (compaction.Hook, error) {
	text, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read summary file: %w", err)
	}
	return func(ctx context.Context, p *compaction.Preparation) (compaction.HookDecision, error) {
		read, mod := p.FileOps.Lists()
		return compaction.HookDecision{Outcome: &compaction.Outcome{
			Summary: string(text), FirstKeptEntryID: p.FirstKeptEntryID, TokensBefore: p.TokensBefore,
			TokensAfter: compaction.TokensAfter(string(text), p),
			Details:     compaction.Details{ReadFiles: read, ModifiedFiles: mod},
		}}, nil
	}, nil
}

func printNothingToCompact(stdout io.Writer, reason error, asJSON bool) error {
	if asJSON {
		return writeJSON(stdout, map[string]any{"nothingToCompact": true, "reason": reason.Error()})
	}
	fmt.Fprintln(stdout, reason)
	return nil
}

// printCompactDryRun shows the cut a compaction would make.
func printCompactDryRun(stdout io.Writer, p *compaction.Preparation, asJSON bool, plan service.SummarizerChoice) error {
	if p.NothingToSummarize() {
		return printNothingToCompact(stdout, compaction.ErrNothingToCompact, asJSON)
	}
	read, mod := p.FileOps.Lists()
	if asJSON {
		return writeJSON(stdout, map[string]any{
			"firstKeptEntryId": p.FirstKeptEntryID, "isSplitTurn": p.IsSplitTurn, "tokensBefore": p.TokensBefore,
			"messagesToSummarize": len(p.MessagesToSummarize), "turnPrefixMessages": len(p.TurnPrefixMessages),
			"previousSummary": p.HasPrevious, "readFiles": read, "modifiedFiles": mod,
			"tokensAfterEstimate": compaction.TokensAfter("", p),
		})
	}
	fmt.Fprintf(stdout, "would summarize with: %s\n", plan.Label)
	if plan.Notice != "" {
		fmt.Fprintf(stdout, "  %s\n", plan.Notice)
	}
	fmt.Fprintf(stdout, "would keep from %s (split turn: %v)\n", p.FirstKeptEntryID, p.IsSplitTurn)
	fmt.Fprintf(stdout, "would summarize %d messages (+%d of the split turn), previous summary: %v\n", len(p.MessagesToSummarize), len(p.TurnPrefixMessages), p.HasPrevious)
	fmt.Fprintf(stdout, "tokens before: %d, kept part after: ~%d (+ the summary)\n", int(p.TokensBefore), int(compaction.TokensAfter("", p)))
	fmt.Fprintf(stdout, "files read: %d, modified: %d\n", len(read), len(mod))
	return nil
}

// printCoverage generates the summary a compaction would write (nothing is written) and
// lists what of the summarized range it does not carry.
func printCoverage(ctx context.Context, stdout, stderr io.Writer, c service.Config, path, leaf, cwd string, p *compaction.Preparation, instructions string, asJSON bool) error {
	if p.NothingToSummarize() {
		return printNothingToCompact(stdout, compaction.ErrNothingToCompact, asJSON)
	}
	sum, _, err := summarizerOf(c, path, leaf, cwd, stderr)
	if err != nil {
		return err
	}
	opt := compaction.Options{CustomInstructions: instructions, ThinkingLevel: session.ContextOfPath(p.Path).Level()}
	_, opt.Progress = progressLines(stderr, "compact")
	out, err := compaction.Generate(ctx, p, sum, opt)
	if err != nil {
		return err
	}
	cov := compaction.CheckCoverage(p, out.Summary)
	if asJSON {
		return writeJSON(stdout, map[string]any{"firstKeptEntryId": p.FirstKeptEntryID, "summary": out.Summary,
			"tokensBefore": p.TokensBefore, "tokensAfter": out.TokensAfter, "coverage": cov})
	}
	fmt.Fprintf(stdout, "would keep from %s; the summary carries %d of %d entities of the summarized range (%.0f%%)\n",
		p.FirstKeptEntryID, len(cov.Entities)-len(cov.Missing), len(cov.Entities), cov.Covered*100)
	if len(cov.Missing) > 0 {
		fmt.Fprintln(stdout, "not carried:")
		for _, e := range cov.Missing {
			fmt.Fprintf(stdout, "  [%s] %s\n", e.Kind, oneLinePreview(e.Text, 100))
		}
		fmt.Fprintln(stdout, "to keep one: pi-lsp compact FILE --instructions \"keep <it>\" regenerates with it as the focus; pinning its message (the editors' Pin Entry) quotes it verbatim")
	}
	return nil
}

// printCompacted shows the compaction written.
func printCompacted(stdout io.Writer, path string, res *compaction.RunResult, asJSON bool) error {
	if asJSON {
		return writeJSON(stdout, json.RawMessage(res.Entry.Raw()))
	}
	o, p := res.Outcome, res.Preparation
	fmt.Fprintf(stdout, "Compacted %s\n", filepath.Base(path))
	fmt.Fprintf(stdout, "entry %s, kept from %s (split turn: %v), %d messages summarized\n\n", res.Entry.ID, o.FirstKeptEntryID, p.IsSplitTurn, len(p.MessagesToSummarize)+len(p.TurnPrefixMessages))
	fmt.Fprintln(stdout, o.Summary)
	fmt.Fprintf(stdout, "\ntokens before: %d, after: ~%d\n", int(o.TokensBefore), int(o.TokensAfter))
	if !o.Audit.OK() {
		fmt.Fprintf(stdout, "audit: missing modified files %v, file blocks intact %v\n", o.Audit.MissingModifiedFiles, o.Audit.FileBlocksIntact)
	}
	return nil
}
