package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// One exit-code policy for every command: a usage error (a missing or extra argument,
// an unknown flag, a bad flag value) exits 2, printed once with the command's usage
// line; a refusal or a failure exits 1 with its message; success exits 0. The flag set
// run hands a command is tied to an invocation, so parseArgs (which every command calls)
// records what went wrong, and run decides the exit code from that record whatever the
// command returns.

// invocation is one run of a command.
type invocation struct {
	cmd            *command
	fs             *flag.FlagSet
	stdout, stderr io.Writer // the caller's, behind termSafe (the command gets errOut for stderr)
	errOut         *cliStderr

	// Flags every command that takes FILE has.
	cont, contLong, quiet, progress *bool

	usageErr bool  // a usage error was printed
	help     bool  // -h or --help: the help was printed
	refusal  error // a session reference that names no single session
}

// cliStderr is the stderr a command writes to: progressLines asks it whether progress
// lines are shown.
type cliStderr struct {
	io.Writer
	inv *invocation
}

var (
	invMu       sync.Mutex
	invocations = map[*flag.FlagSet]*invocation{}
)

// newInvocation makes the flag set of one run of c. The flag package prints nothing:
// parseArgs prints a flag error once, with the command's usage line. Everything the run
// prints goes through termSafe (stdout too, unless rawOutput names the command).
func newInvocation(c *command, stdout, stderr io.Writer) *invocation {
	if !rawOutput[c.name] {
		stdout = newTermSafe(stdout)
	}
	stderr = newTermSafe(stderr)
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	inv := &invocation{cmd: c, fs: fs, stdout: stdout, stderr: stderr}
	inv.errOut = &cliStderr{Writer: stderr, inv: inv}
	if c.takesFile() {
		inv.cont = fs.Bool("c", false, "the most recent session of the current directory, as pi -c picks it (FILE omitted)")
		inv.contLong = fs.Bool("continue", false, "the same as -c")
		inv.quiet = fs.Bool("quiet", false, "print no progress lines")
		inv.progress = fs.Bool("progress", false, "print progress lines to stderr even when it is not a terminal")
	}
	invMu.Lock()
	invocations[fs] = inv
	invMu.Unlock()
	return inv
}

func invocationOf(fs *flag.FlagSet) *invocation {
	invMu.Lock()
	defer invMu.Unlock()
	return invocations[fs]
}

// finish is the exit code of the run, printing err when nothing was printed for it.
func (inv *invocation) finish(err error) int {
	invMu.Lock()
	delete(invocations, inv.fs)
	invMu.Unlock()
	var ee exitError
	var ue usageError
	switch {
	case inv.usageErr:
		return 2
	case inv.help:
		return 0
	case inv.refusal != nil:
		fmt.Fprintf(inv.stderr, "pi-lsp %s: %s\n", inv.cmd.name, redact.String(fmt.Sprint(inv.refusal)))
		return 1
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		inv.printUsageError(ue.msg)
		return 2
	}
	fmt.Fprintf(inv.stderr, "pi-lsp %s: %s\n", inv.cmd.name, redact.String(err.Error()))
	return 1
}

// flush writes what the terminal-safe writers still hold.
func (inv *invocation) flush() {
	for _, w := range []io.Writer{inv.stdout, inv.stderr} {
		if t, ok := w.(*termSafe); ok {
			_ = t.Flush()
		}
	}
}

// usageError is a usage error a command returns (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func (inv *invocation) printUsageError(msg string) {
	fmt.Fprintf(inv.stderr, "pi-lsp %s: %s\nusage: pi-lsp %s\n", inv.cmd.name, msg, inv.cmd.usage)
}

// fail records and prints a usage error; the run exits 2.
func (inv *invocation) fail(msg string) error {
	if !inv.usageErr {
		inv.printUsageError(msg)
	}
	inv.usageErr = true
	return usageError{msg}
}

// printHelp prints the command's usage, its FILE forms and its flags to stdout.
func (inv *invocation) printHelp() {
	c := inv.cmd
	fmt.Fprintf(inv.stdout, "usage: pi-lsp %s\n\n%s\n", c.usage, c.summary)
	if c.takesFile() {
		fmt.Fprintf(inv.stdout, "\n%s\n", fileForms)
	}
	fmt.Fprintf(inv.stdout, "\nflags:\n")
	inv.fs.SetOutput(inv.stdout)
	inv.fs.PrintDefaults()
	inv.fs.SetOutput(io.Discard)
}

const fileForms = `FILE is a session as pi names it: a path (anything with a / or ending in .jsonl), a
session id or the start of one (looked up in this directory's sessions first, then in
every project's), or left out with -c for the most recent session of this directory.`

// positionals are the positional arguments c's usage line names: required ones, then
// optional ones in brackets ("label FILE ENTRY_ID [TEXT] [--force]": FILE and ENTRY_ID,
// then TEXT).
func (c *command) positionals() (required, optional []string) {
	for _, tok := range strings.Fields(c.usage)[1:] {
		name, opt := tok, false
		if strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]") {
			name, opt = tok[1:len(tok)-1], true
		}
		if name == "" || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != "" {
			break
		}
		if opt {
			optional = append(optional, name)
		} else if len(optional) == 0 {
			required = append(required, name)
		}
	}
	return required, optional
}

func (c *command) takesFile() bool {
	req, _ := c.positionals()
	return len(req) > 0 && req[0] == "FILE"
}

// parseArgs parses flags that may sit before, between or after positional arguments,
// checks the positional arguments against the command's usage line, and resolves FILE
// (a path, a session id or prefix, or -c) to a session file. A flag set that run did not
// make gets the parse alone.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			inv := invocationOf(fs)
			if inv == nil {
				return nil, err
			}
			if errors.Is(err, flag.ErrHelp) {
				inv.help = true
				inv.printHelp()
				return nil, err
			}
			return nil, inv.fail(err.Error())
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	inv := invocationOf(fs)
	if inv == nil {
		return pos, nil
	}
	return inv.checkPositionals(pos)
}

func (inv *invocation) checkPositionals(pos []string) ([]string, error) {
	req, opt := inv.cmd.positionals()
	cont := inv.cont != nil && (*inv.cont || *inv.contLong)
	n := len(pos)
	if cont {
		n++ // FILE
	}
	switch {
	case n < len(req):
		return nil, inv.fail("missing " + strings.Join(req[n:], " "))
	case n > len(req)+len(opt):
		extra := pos[len(pos)-(n-len(req)-len(opt)):]
		if cont && len(req)+len(opt) == 1 {
			return nil, inv.fail(fmt.Sprintf("-c names the session: FILE %q is one too many", extra[0]))
		}
		return nil, inv.fail(fmt.Sprintf("unexpected argument %q", strings.Join(extra, " ")))
	}
	if !inv.cmd.takesFile() {
		return pos, nil
	}
	found, err := inv.resolve(pos, cont)
	if err != nil {
		inv.refusal = err
		return nil, err
	}
	if cont {
		pos = append([]string{found.Path}, pos...)
	} else {
		pos[0] = found.Path
	}
	return pos, nil
}

// resolve finds the session FILE (pos[0]) or -c names, as pi does.
func (inv *invocation) resolve(pos []string, cont bool) (session.Found, error) {
	if !cont && pos[0] == "" {
		return session.Found{}, errors.New("FILE is empty")
	}
	if !cont && session.LooksLikePath(pos[0]) {
		// A path needs neither the working directory's nor the agent dir's lookup.
		wd, _ := os.Getwd()
		return session.Found{Path: session.ResolveAgainst(pos[0], wd), Scope: session.ScopePath}, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return session.Found{}, fmt.Errorf("working directory: %w", err)
	}
	agent, err := session.AgentDir()
	if err != nil {
		return session.Found{}, err
	}
	var found session.Found
	if cont {
		found, err = session.ContinueRecent(wd, agent)
	} else {
		found, err = session.FindSession(pos[0], wd, agent)
	}
	if err != nil {
		return found, err
	}
	if inv.showProgress() {
		switch found.Scope {
		case session.ScopeGlobal:
			fmt.Fprintf(inv.stderr, "pi-lsp %s: session %s of another project (%s): %s\n", inv.cmd.name, found.ID, found.Cwd, found.Path)
		default:
			fmt.Fprintf(inv.stderr, "pi-lsp %s: session %s\n", inv.cmd.name, found.Path)
		}
	}
	return found, nil
}

// showProgress reports whether progress lines go to stderr: never with --quiet, always
// with --progress, else when stderr is a terminal.
func (inv *invocation) showProgress() bool {
	switch {
	case inv.quiet != nil && *inv.quiet:
		return false
	case inv.progress != nil && *inv.progress:
		return true
	}
	return isTerminal(inv.stderr)
}

// progressShown reports whether progress lines go to w, the stderr a command got.
func progressShown(w io.Writer) bool {
	if s, ok := w.(*cliStderr); ok {
		return s.inv.showProgress()
	}
	return isTerminal(w)
}

func isTerminal(w io.Writer) bool {
	f, ok := underlying(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
