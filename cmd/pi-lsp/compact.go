package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/service"
)

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
