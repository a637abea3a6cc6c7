package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The commands that run a job are the session service's jobs (internal/service): it
// decides where a write goes (into the file, to a live pi through pi-lsp's bridge, which
// then writes its own session with its model and settings, or refused), as it does for
// the server; a command only converts its flags and renders the outcome. What they share
// is here: the service's configuration, their flags, and the reporter of a job's steps.

// svc is the session service with the command's own choices.
func svc(summarizer string, keepRecent, reserve int) service.Config {
	agent, _ := session.AgentDir()
	c := service.Config{AgentDir: agent, KeepRecentTokens: keepRecent, ReserveTokens: reserve}
	c.SummarizerConfig.Kind = summarizer
	return c
}

// forceHint says how to force a write a running pi refused.
func forceHint(err error) error {
	var ref *service.Refusal
	if errors.As(err, &ref) {
		return fmt.Errorf("%w (--force)", err)
	}
	return err
}

// setFlags lists which of names were given on the command line.
func setFlags(fs *flag.FlagSet, names ...string) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(names, f.Name) {
			out = append(out, "--"+f.Name)
		}
	})
	return out
}

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
