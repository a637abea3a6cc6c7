package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/service"
)

// forceFlag declares --force on a command that writes.
func forceFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("force", false, "write even though a running pi process writes the session")
}

// reporter shows a job's steps on stderr, a line each with the time since the start
// ("pi-lsp compact: summarizing (12ms)", "pi-lsp compact: summarizing: attempt 2 of 2
// after stall (61s)"), so a slow or failing model is never silence: when stderr is a
// terminal or with --progress, never with --quiet (progressShown). A notice (a wanted
// model that could not be used: why, and the fix) is one line, unless --quiet.
type reporter struct {
	stderr io.Writer
	cmd    string
	start  time.Time
	show   bool
	mu     sync.Mutex // a split turn's two summaries report at once
}

func newReporter(stderr io.Writer, cmd string) *reporter {
	return &reporter{stderr: stderr, cmd: cmd, start: time.Now(), show: progressShown(stderr)}
}

func (r *reporter) Report(message string, _ int) {
	if !r.show {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !strings.HasSuffix(message, ")") { // an attempt's line says its own time
		message += fmt.Sprintf(" (%s)", time.Since(r.start).Round(time.Millisecond))
	}
	fmt.Fprintf(r.stderr, "pi-lsp %s: %s\n", r.cmd, message)
}

func (r *reporter) Notice(message string) {
	if !quietRun(r.stderr) {
		fmt.Fprintf(r.stderr, "pi-lsp: %s\n", message)
	}
}

// summaryFlags are the flags of a command whose job writes a summary: its focus, and the
// summarizer and model that write it.
type summaryFlags struct{ instructions, kind, model *string }

func summaryFlagsOf(fs *flag.FlagSet) summaryFlags {
	return summaryFlags{
		instructions: fs.String("instructions", "", "custom focus for the summary"),
		kind:         fs.String("summarizer", "", "extractive, model (the session's model, or --model) or openai; default: the session's model when its credential resolves, else extractive"),
		model:        fs.String("model", "", "summarize with PROVIDER/ID[:THINKING] of Pi's catalog or models.json (default: the session's model)"),
	}
}

// config is the application layer's configuration for the job, summarizing as the flags
// ask.
func (f summaryFlags) config(keepRecent, reserve int) service.Config {
	c := svc(*f.kind, keepRecent, reserve)
	c.SummarizerConfig.Model = *f.model
	return c
}

// writeFlags are the flags of a command whose job may write the session: --dry-run
// (shows instead what dryRun says), --json and --force.
type writeFlags struct{ dryRun, json, force *bool }

func writeFlagsOf(fs *flag.FlagSet, dryRun string) writeFlags {
	return writeFlags{
		dryRun: fs.Bool("dry-run", false, dryRun+"; write nothing"),
		json:   fs.Bool("json", false, "print JSON"),
		force:  forceFlag(fs),
	}
}

// quietRun reports whether the command runs with --quiet.
func quietRun(stderr io.Writer) bool {
	cs, ok := stderr.(*cliStderr)
	return ok && cs.inv != nil && cs.inv.quiet != nil && *cs.inv.quiet
}

func runCompact(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	leaf := fs.String("leaf", "", "leaf entry id (default: Pi's leaf, the last entry)")
	keepFrom := fs.String("keep-from", "", "keep the context verbatim from this entry on and summarize what is before it (\"summarize up to here\")")
	sf := summaryFlagsOf(fs)
	keep := fs.Int("keep-recent", 0, "tokens of recent history to keep verbatim (default: Pi settings, 20000)")
	reserve := fs.Int("reserve", 0, "reserve tokens (default: Pi settings, 16384)")
	summaryFile := fs.String("summary-file", "", "use this file's text as the summary instead of generating one")
	wf := writeFlagsOf(fs, "show the cut and what would be summarized")
	coverage := fs.Bool("coverage", false, "with --dry-run: generate the summary and list the entities of the summarized range it does not carry")
	path, err := fileArg(fs, args)
	if err != nil {
		return err
	}
	dryRun, asJSON := *wf.dryRun, *wf.json
	req := service.CompactRequest{Path: path, Leaf: *leaf, KeepFrom: *keepFrom, Instructions: *sf.instructions, Force: *wf.force,
		DryRun: dryRun, Coverage: dryRun && *coverage,
		// pi compacts with its own model and settings, where its settings cut.
		Asked: setFlags(fs, "keep-from", "keep-recent", "reserve", "summarizer", "model", "summary-file")}
	if *summaryFile != "" {
		if req.Hook, err = summaryFileHook(*summaryFile); err != nil {
			return err
		}
	}
	out, err := sf.config(*keep, *reserve).Compact(ctx, req, newReporter(stderr, "compact"))
	if err != nil {
		return forceHint(err)
	}
	switch {
	case out.NothingToCompact != "":
		return printNothingToCompact(stdout, out, asJSON)
	case dryRun && *coverage:
		return printCoverage(stdout, out, asJSON)
	case dryRun:
		return printCompactDryRun(stdout, out.Run.Preparation, asJSON, out.Choice)
	}
	return printCompacted(stdout, path, out, asJSON)
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

func printNothingToCompact(stdout io.Writer, out service.CompactOutcome, asJSON bool) error {
	if asJSON {
		return writeJSON(stdout, rpc.NothingToCompact{NothingToCompact: true, Reason: out.NothingToCompact, Via: string(out.Via)})
	}
	fmt.Fprintln(stdout, out.NothingToCompact)
	return nil
}

// printCompactDryRun shows the cut a compaction would make.
func printCompactDryRun(stdout io.Writer, p *compaction.Preparation, asJSON bool, plan service.SummarizerChoice) error {
	read, mod := p.FileOps.Lists()
	if asJSON {
		return writeJSON(stdout, rpc.CompactPlan{
			FirstKeptEntryID: p.FirstKeptEntryID, IsSplitTurn: p.IsSplitTurn, TokensBefore: p.TokensBefore,
			MessagesToSummarize: len(p.MessagesToSummarize), TurnPrefixMessages: len(p.TurnPrefixMessages),
			PreviousSummary: p.HasPrevious, ReadFiles: read, ModifiedFiles: mod,
			TokensAfterEstimate: compaction.TokensAfter("", p),
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

// printCoverage shows the summary a compaction would write (nothing is written) and
// what of the summarized range it does not carry.
func printCoverage(stdout io.Writer, out service.CompactOutcome, asJSON bool) error {
	r, cov := out.Result, out.Coverage
	if asJSON {
		return writeJSON(stdout, rpc.CompactCoverage{FirstKeptEntryID: r.FirstKeptEntryID, Summary: r.Summary,
			TokensBefore: r.TokensBefore, TokensAfter: *r.EstimatedTokensAfter, Coverage: *cov})
	}
	fmt.Fprintf(stdout, "would keep from %s; the summary carries %d of %d entities of the summarized range (%.0f%%)\n",
		r.FirstKeptEntryID, len(cov.Entities)-len(cov.Missing), len(cov.Entities), cov.Covered*100)
	if len(cov.Missing) > 0 {
		fmt.Fprintln(stdout, "not carried:")
		for _, e := range cov.Missing {
			fmt.Fprintf(stdout, "  [%s] %s\n", e.Kind, service.OneLine(e.Text, 100))
		}
		fmt.Fprintln(stdout, "to keep one: pi-lsp compact FILE --instructions \"keep <it>\" regenerates with it as the focus; pinning its message (the editors' Pin Entry) quotes it verbatim")
	}
	return nil
}

// printCompacted shows the compaction written, by pi-lsp or by the live pi.
func printCompacted(stdout io.Writer, path string, out service.CompactOutcome, asJSON bool) error {
	if out.Via == service.ViaPi {
		if asJSON {
			ans := rpc.CompactedViaPi{Entry: out.Entry, Via: string(out.Via), PID: out.PID}
			if out.Result != nil {
				ans.TokensBefore = out.Result.TokensBefore
			}
			return writeJSON(stdout, ans)
		}
		id, err := out.Entry.ID()
		if err != nil {
			return fmt.Errorf("pi (pid %d) compacted, but %w", out.PID, err)
		}
		r := out.Result
		if r == nil {
			return fmt.Errorf("pi (pid %d) compacted (entry %s) without saying its result", out.PID, id)
		}
		fmt.Fprintf(stdout, "Compacted %s by pi (pid %d)\n", filepath.Base(path), out.PID)
		fmt.Fprintf(stdout, "entry %s, kept from %s\n\n%s\n\ntokens before: %d\n", id, r.FirstKeptEntryID, r.Summary, int(r.TokensBefore))
		return nil
	}
	res := out.Run
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
