package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/pi-lsp/pi-lsp/internal/service"
)

func runCondense(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	sf := summaryFlagsOf(fs)
	wf := writeFlagsOf(fs, "summarize and show the result")
	restore := fs.Bool("restore", false, "put back every message of the range condensed from FROM_ID")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	inv := invocationOf(fs)
	dryRun, asJSON := *wf.dryRun, *wf.json
	req := service.CondenseRequest{Session: pos[0], FromID: pos[1], Instructions: *sf.instructions, DryRun: dryRun, Restore: *restore, Force: *wf.force}
	switch {
	case *restore && len(pos) == 3:
		return inv.fail("--restore takes FROM_ID only")
	case !*restore && len(pos) < 3:
		return inv.fail("missing TO_ID")
	case len(pos) == 3:
		req.ToID = pos[2]
	}
	out, err := sf.config(0, 0).Condense(ctx, req, newReporter(stderr, "condense"))
	if err != nil {
		if errors.Is(err, service.ErrCondenseUsage) {
			return inv.fail(err.Error())
		}
		return err
	}
	if asJSON {
		j := map[string]any{"tokensBefore": out.TokensBefore, "tokensAfter": out.TokensAfter}
		if out.Plan != nil {
			j["targets"], j["summary"], j["summarizer"], j["coverage"] = out.Plan.Targets, out.Text, out.Summarizer, out.Coverage
		}
		entries := make([]json.RawMessage, 0, len(out.Written))
		for _, e := range out.Written {
			entries = append(entries, json.RawMessage(e.Raw()))
		}
		j["entries"] = entries
		if dryRun {
			j["dryRun"] = true
		}
		return writeJSON(stdout, j)
	}
	name := filepath.Base(pos[0])
	switch {
	case *restore:
		fmt.Fprintf(stdout, "Restored %d messages of %s condensed from %s\n", len(out.Written), name, req.FromID)
	case dryRun:
		fmt.Fprintf(stdout, "Would condense %d messages of %s (%s to %s) with %s; the first would hold:\n\n%s\n\n", len(out.Plan.Targets), name, req.FromID, req.ToID, out.Summarizer, out.Text)
	default:
		fmt.Fprintf(stdout, "Condensed %d messages of %s (%s to %s) with %s: %d context edits written\n", len(out.Plan.Targets), name, req.FromID, req.ToID, out.Summarizer, len(out.Written))
	}
	fmt.Fprintf(stdout, "context tokens: %d before, %d after\n", int(out.TokensBefore), int(out.TokensAfter))
	if c := out.Coverage; len(c.Entities) > 0 {
		fmt.Fprintf(stdout, "the summary carries %d of %d critical entities of the range", len(c.Entities)-len(c.Missing), len(c.Entities))
		for i, m := range c.Missing {
			if i == 5 {
				fmt.Fprintf(stdout, "; +%d more", len(c.Missing)-5)
				break
			}
			fmt.Fprintf(stdout, "; missing %s %q", m.Kind, service.OneLine(m.Text, 60))
		}
		fmt.Fprintln(stdout)
	}
	if !*restore && !dryRun {
		fmt.Fprintf(stdout, "restore: pi-lsp condense %s %s --restore (or one message: pi-lsp edit-context %s ID --restore)\n", pos[0], req.FromID, pos[0])
	}
	return nil
}
