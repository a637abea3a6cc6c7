package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// exampleSession is a Pi session shipped in the binary for the demo: a coding task with
// reads, edits, a failing and a passing test run, and three user requests.
//
//go:embed example/session.jsonl
var exampleSession []byte

// runDemo compacts the embedded example session with the built-in summarizer, offline,
// in a temporary directory, and shows the result.
func runDemo(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	keep := fs.Int("keep-recent", 400, "tokens of recent history to keep verbatim")
	keepFile := fs.Bool("keep", false, "keep the temporary session file and print its path")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pi-lsp-demo-")
	if err != nil {
		return err
	}
	if !*keepFile {
		defer os.RemoveAll(dir)
	}
	path := filepath.Join(dir, "example-session.jsonl")
	if err := os.WriteFile(path, exampleSession, 0o644); err != nil {
		return err
	}
	snap, err := session.LoadSnapshot(path)
	if err != nil {
		return err
	}
	before, ixBefore := snap.File(), snap.Index()
	ctxBefore := ixBefore.BuildContext("")
	fmt.Fprintf(stdout, "Example Pi session: %d entries, %d context messages, ~%d tokens (Pi's estimate)\n",
		len(before.Entries), len(ctxBefore.Messages), int(session.EstimateContextTokens(ctxBefore.Messages).Tokens))
	fmt.Fprintf(stdout, "Compacting with the built-in extractive summarizer (offline), keeping ~%d recent tokens...\n\n", *keep)
	settings := session.DefaultCompactionSettings
	settings.KeepRecentTokens = *keep
	res, err := compaction.Run(ctx, snap, compaction.RunOptions{Settings: settings, Summarizer: compaction.Extractive{}})
	if err != nil {
		return err
	}
	o := res.Outcome
	fmt.Fprintln(stdout, "──── summary written to the session (compaction entry "+res.Entry.ID+") ────")
	fmt.Fprintln(stdout, o.Summary)
	fmt.Fprintln(stdout, "────")
	after, err := session.Load(path)
	if err != nil {
		return err
	}
	ctxAfter := session.NewIndex(after).BuildContext("")
	var est float64
	for _, m := range ctxAfter.Messages {
		est += float64(session.EstimateTokens(m))
	}
	fmt.Fprintf(stdout, "\nsummarized %d messages (split turn: %v), kept from entry %s\n",
		len(res.Preparation.MessagesToSummarize)+len(res.Preparation.TurnPrefixMessages), res.Preparation.IsSplitTurn, o.FirstKeptEntryID)
	fmt.Fprintf(stdout, "tokens before: %d, after: ~%d (%d context messages now)\n", int(o.TokensBefore), int(est), len(ctxAfter.Messages))
	if !o.Audit.OK() {
		fmt.Fprintf(stdout, "audit: modified files missing from the summary text: %v\n", o.Audit.MissingModifiedFiles)
	}
	if *keepFile {
		fmt.Fprintf(stdout, "session file: %s\n", path)
	}
	return nil
}
