package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/service"
)

// runClearToolOutput clears old tool output without a model (or, with --restore, brings
// every cleared result back): one context_edit entry per result, in one write.
func runClearToolOutput(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	keep := fs.Int("keep-recent-tokens", 0, fmt.Sprintf("the recent part of the context left alone (default: Pi's compaction.keepRecentTokens for the session's model, %d unless set)", contextedit.DefaultKeepRecentTokens))
	min := fs.Int("min-tokens", 0, fmt.Sprintf("only results larger than this many tokens (default %d)", contextedit.DefaultMinClearTokens))
	dryRun := fs.Bool("dry-run", false, "list what would be cleared and the tokens saved; write nothing")
	restore := fs.Bool("restore", false, "restore every tool result a clear replaced")
	asJSON := fs.Bool("json", false, `print {"leafId", "cleared": [{"entryId", "toolName", "arguments", "tokens", "tokensAfter"}], "saved", "tokensBefore", "tokensAfter"}`)
	force := forceFlag(fs)
	path, err := fileArg(fs, args)
	if err != nil {
		return err
	}
	if *restore && (*dryRun || *keep != 0 || *min != 0) {
		return usageError{"--restore takes no --dry-run, --keep-recent-tokens or --min-tokens"}
	}
	out, err := svc("", 0, 0).ClearToolOutput(ctx, service.ClearRequest{Path: path, KeepRecentTokens: *keep, MinTokens: *min,
		DryRun: *dryRun, Restore: *restore, Force: *force}, newReporter(stderr, "clear-tool-output"))
	if err != nil {
		return forceHint(err)
	}
	res, nothing := out.ClearResult, out.Nothing
	if *asJSON {
		return writeJSON(stdout, res)
	}
	if nothing {
		if *restore {
			fmt.Fprintln(stdout, "no cleared tool output to restore")
		} else {
			fmt.Fprintln(stdout, "no tool output older than the recent window and larger than the minimum; nothing to clear")
		}
		return nil
	}
	verb := "cleared"
	switch {
	case *dryRun:
		verb = "would clear"
	case *restore:
		verb = "restored"
	}
	for _, c := range res.Cleared {
		fmt.Fprintf(stdout, "%s %s  %-6s ~%d -> ~%d tokens  %s\n", verb, c.EntryID, c.ToolName, c.Tokens, c.TokensAfter, service.OneLine(c.Arguments, 60))
	}
	after := fmt.Sprintf("~%d", int(res.TokensAfter))
	if *dryRun {
		after += " (estimated)"
	}
	fmt.Fprintf(stdout, "%d tool results %s: context ~%d -> %s tokens", len(res.Cleared), verb, int(res.TokensBefore), after)
	if !*restore {
		fmt.Fprintf(stdout, ", %d saved", res.Saved)
	}
	fmt.Fprintln(stdout)
	if !*dryRun && !*restore {
		fmt.Fprintln(stdout, "nothing is deleted: pi-lsp edit-context FILE ID --restore brings one back, pi-lsp clear-tool-output FILE --restore all of them")
	}
	return nil
}
