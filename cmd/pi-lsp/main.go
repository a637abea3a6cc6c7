// Command pi-lsp is the Pi session sidecar: an LSP server on stdio for editors, and
// subcommands for terminal users over the same engine.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Version is the pi-lsp version (set with -ldflags "-X main.Version=...").
var Version = "0.1.0"

type command struct {
	name    string
	usage   string
	summary string
	// run gets a flag set named after the command to declare its flags on, and parses
	// its arguments with parseArgs, which checks them against usage (the positional
	// arguments it names: FILE, TARGET_ID, [TEXT]) and resolves FILE.
	run func(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error
}

var commands []command

func init() {
	commands = []command{
		{"serve", "serve [--stdio]", "serve LSP on stdio (what editors spawn)", runServe},
		{"sessions", "sessions [--cwd DIR] [--json]", "sessions of a project, newest first", runSessions},
		{"tree", "tree FILE [--json]", "the entry tree, leaf marked, labels shown", runTree},
		{"context", "context FILE [--leaf ID] [--json]", "what the LLM would be sent, and token usage", runContext},
		{"files", "files FILE [--leaf ID] [--json]", "files read / modified on the current path", runFiles},
		{"compact", "compact FILE [--leaf ID] [--keep-from ENTRY_ID] [--instructions TEXT] [--keep-recent N] [--reserve N] [--summarizer extractive|model|openai] [--model PROVIDER/ID[:THINKING]] [--summary-file F] [--dry-run] [--force] [--json]", "compact the session (summary of older history, recent suffix kept)", runCompact},
		{"navigate", "navigate FILE TARGET_ID [--summarize] [--instructions TEXT] [--label TEXT] [--budget N] [--summarizer extractive|model|openai] [--model PROVIDER/ID[:THINKING]] [--dry-run] [--force] [--json]", "move the leaf to another entry, optionally summarizing the branch left", runNavigate},
		{"undo-compaction", "undo-compaction FILE [--force] [--json]", "make the full pre-compaction context active again", runUndoCompaction},
		{"label", "label FILE ENTRY_ID [TEXT] [--force]", "set (or clear, without TEXT) the label of an entry", runLabel},
		{"edit-context", "edit-context FILE ENTRY_ID (--omit | --replace TEXT | --restore) [--force] [--json]", "hide, replace or restore one message in the LLM context (a context_edit entry; history untouched)", runEditContext},
		{"rewind", "rewind FILE [ENTRY_ID] [--code|--conversation|--both] [--summarize] [--instructions TEXT] [--file PATH]... [--force] [--dry-run] [--undo] [--json]", "bring the files the agent changed after an entry back to what they held there (and with --both the conversation); --undo puts the replaced bytes back", runRewind},
		{"condense", "condense FILE FROM_ID [TO_ID] [--instructions TEXT] [--summarizer extractive|model|openai] [--model PROVIDER/ID[:THINKING]] [--dry-run] [--restore] [--force] [--json]", "replace the context messages from FROM_ID to TO_ID by a summary (context_edit entries; history untouched); --restore puts them back", runCondense},
		{"context-size", "context-size FILE [--leaf ID] [--limit N] [--by kind | --history] [--json]", "the messages of the context by estimated tokens, largest first; --by kind: by kind of content; --history: the size along the path", runContextSize},
		{"clear-tool-output", "clear-tool-output FILE [--keep-recent-tokens N] [--min-tokens M] [--dry-run] [--restore] [--force] [--json]", "replace tool results older than the recent window and larger than M tokens with a placeholder (context_edit entries; --restore brings them all back)", runClearToolOutput},
		{"commands", "commands [--json] [--markdown]", "the LSP command table", runCommands},
		{"gen", "gen [--entries N] [--seed S] [--branch-every N] [--compact-every N] [--image-every N] [-o FILE]", "write a large synthetic session (benchmarks)", runGen},
		{"bench-file", "bench-file FILE", "measure load, context, prepare, tree and file lists of one session (JSON)", runBenchFile},
		{"demo", "demo [--keep-recent N] [--keep]", "compact the embedded example session offline and show the result", runDemo},
		{"version", "version", "print the version (also --version, -v)", runVersion},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "pi-lsp %s: Pi session sidecar (LSP on stdio) and terminal tools\n\nUsage:\n", Version)
	for _, c := range commands {
		fmt.Fprintf(w, "  pi-lsp %s\n      %s\n", c.usage, c.summary)
	}
	fmt.Fprintf(w, "\n%s\n\nWith no command, or with --stdio, pi-lsp serves LSP on stdio. pi-lsp --version (-v)\nprints the version. Usage errors exit 2, refusals and failures 1.\n", fileForms)
}

// exitError carries a process exit code.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	// SIGINT and SIGTERM cancel the command's context, and end the process soon after
	// whatever the command is doing, with 130 or 143 (see withSignals).
	ctx, status, stop := withSignals(context.Background(), os.Stderr, os.Exit)
	code := status(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "-v", "-version", "--version":
			name, args = "version", args[1:]
		default:
			if !strings.HasPrefix(args[0], "-") {
				name, args = args[0], args[1:]
			}
		}
	}
	if name == "help" || (len(args) > 0 && (args[0] == "-h" || args[0] == "--help") && name == "serve") {
		usage(stdout)
		return 0
	}
	for i := range commands {
		c := &commands[i]
		if c.name != name {
			continue
		}
		inv := newInvocation(c, stdout, stderr)
		defer inv.flush()
		return inv.finish(c.run(ctx, inv.fs, args, inv.stdout, inv.errOut))
	}
	fmt.Fprintf(stderr, "pi-lsp: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

func runVersion(_ context.Context, fs *flag.FlagSet, args []string, stdout, _ io.Writer) error {
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pi-lsp %s\n", Version)
	return nil
}
