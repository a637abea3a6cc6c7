package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// fileArg parses the flags and the one FILE argument of a subcommand: a session file, a
// session id or the start of one, or -c for the most recent session of the working
// directory (parseArgs checks the arguments and resolves FILE as pi does).
func fileArg(fs *flag.FlagSet, args []string) (string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return "", err
	}
	return oneFile(pos, "FILE")
}

// fileAtLeaf declares --leaf, parses FILE (with the flags fs already has) and loads the
// session at that leaf: the arguments of a command that reads a session at a leaf.
func fileAtLeaf(fs *flag.FlagSet, args []string, stderr io.Writer) (*session.Index, string, error) {
	leaf := fs.String("leaf", "", "leaf entry id (default: Pi's leaf, the last entry)")
	path, err := fileArg(fs, args)
	if err != nil {
		return nil, "", err
	}
	return loadAtLeaf(path, *leaf, stderr)
}

// loadAtLeaf loads a session and resolves a --leaf flag (empty: Pi's leaf).
func loadAtLeaf(path, leaf string, stderr io.Writer) (*session.Index, string, error) {
	ix, err := loadIndex(path, stderr)
	if err != nil {
		return nil, "", err
	}
	id, err := pickLeaf(ix, leaf)
	return ix, id, err
}

func oneFile(pos []string, what string) (string, error) {
	if len(pos) != 1 {
		return "", usageError{fmt.Sprintf("expected %s, got %d arguments", what, len(pos))}
	}
	return pos[0], nil
}

func loadIndex(path string, stderr io.Writer) (*session.Index, error) {
	f, err := session.Load(path)
	if err != nil {
		return nil, err
	}
	for _, s := range f.Skipped {
		fmt.Fprintf(stderr, "pi-lsp: %s: skipped line %d (%s)\n", path, s.Line, s.Reason)
	}
	if more := f.SkippedLines - len(f.Skipped); more > 0 {
		fmt.Fprintf(stderr, "pi-lsp: %s: %d more skipped lines\n", path, more)
	}
	ix := session.NewIndex(f)
	for _, p := range ix.Problems() {
		fmt.Fprintf(stderr, "pi-lsp: %s: %s\n", path, p)
	}
	if more := ix.ProblemCount() - len(ix.Problems()); more > 0 {
		fmt.Fprintf(stderr, "pi-lsp: %s: %d more problems\n", path, more)
	}
	return ix, nil
}

func runSessions(_ context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	cwd := fs.String("cwd", "", "project directory (default: the current directory)")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		*cwd = wd
	}
	agent, err := session.AgentDir()
	if err != nil {
		return err
	}
	dir := session.SessionDir(agent, *cwd)
	list, err := session.List(dir)
	if err != nil {
		return err
	}
	if *asJSON {
		out := rpc.SessionList{Dir: dir, Sessions: make([]rpc.SessionInfo, 0, len(list))}
		for _, s := range list {
			out.Sessions = append(out.Sessions, rpc.SessionInfoOf(s))
		}
		return writeJSON(stdout, out)
	}
	if len(list) == 0 {
		fmt.Fprintf(stdout, "no sessions in %s\n", dir)
		return nil
	}
	for _, s := range list {
		name := s.Name
		if name == "" {
			name = service.OneLine(s.FirstMessage, 60)
		}
		fmt.Fprintf(stdout, "%s  %3d msgs  %s\n    %s\n", s.Modified.Local().Format("2006-01-02 15:04"), s.MessageCount, name, s.Path)
	}
	return nil
}

func runTree(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	asJSON := fs.Bool("json", false, "print JSON")
	path, err := fileArg(fs, args)
	if err != nil {
		return err
	}
	ix, err := loadIndex(path, stderr)
	if err != nil {
		return err
	}
	roots := ix.Tree()
	if *asJSON {
		nodes, err := session.TreeJSON(ctx, roots)
		if err != nil {
			return err
		}
		return writeJSON(stdout, map[string]any{"leafId": session.IDOrNull(ix.LeafID()), "roots": nodes})
	}
	printTree(stdout, roots, service.MarksOf(ix))
	return nil
}

func printTree(w io.Writer, roots []*session.Node, marks service.TreeMarks) {
	type item struct {
		n      *session.Node
		prefix string // drawn before the glyph
		glyph  string // "├─ ", "└─ " or "" for a straight run
	}
	var stack []item
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, item{roots[i], "", ""})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		mark := "  "
		if marks.OnPath(it.n.Entry) {
			mark = "│ "
		}
		if it.n.Entry.ID == marks.Leaf {
			mark = "▶ "
		}
		label := ""
		if it.n.Label != "" {
			label = " [" + it.n.Label + "]"
		}
		fmt.Fprintf(w, "%s%s%s%s %s%s\n", mark, it.prefix, it.glyph, it.n.Entry.ID, service.Describe(it.n.Entry), label)
		childPrefix := it.prefix
		switch it.glyph {
		case "├─ ":
			childPrefix += "│  "
		case "└─ ":
			childPrefix += "   "
		}
		kids := it.n.Children
		if len(kids) == 1 {
			stack = append(stack, item{kids[0], childPrefix, ""})
			continue
		}
		for i := len(kids) - 1; i >= 0; i-- {
			g := "├─ "
			if i == len(kids)-1 {
				g = "└─ "
			}
			stack = append(stack, item{kids[i], childPrefix, g})
		}
	}
}

func pickLeaf(ix *session.Index, leaf string) (string, error) {
	if leaf == "" {
		return ix.LeafID(), nil
	}
	if ix.Entry(leaf) == nil {
		return "", fmt.Errorf("entry %s not found", leaf)
	}
	return leaf, nil
}

func runContext(_ context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	asJSON := fs.Bool("json", false, "print JSON")
	ix, leafID, err := fileAtLeaf(fs, args, stderr)
	if err != nil {
		return err
	}
	c := ix.BuildContext(leafID)
	// The figure Pi 1.6.0 reports and compacts on: usage recorded before the newest
	// compaction or context edit is not trusted.
	tokens := c.Tokens()
	if *asJSON {
		msgs := make([]json.RawMessage, len(c.Messages))
		for i, m := range c.Messages {
			msgs[i] = m.Raw()
		}
		var model any
		if c.Model != nil {
			model = c.Model
		}
		return writeJSON(stdout, map[string]any{
			"leafId": session.IDOrNull(leafID), "messages": msgs, "thinkingLevel": c.ThinkingLevel,
			"model": model, "tokens": tokens,
		})
	}
	fmt.Fprintf(stdout, "leaf %s, %d messages, ~%d tokens", leafID, len(c.Messages), int(tokens.Tokens))
	if c.Model != nil {
		var p, m string
		_ = json.Unmarshal(c.Model.Provider, &p)
		_ = json.Unmarshal(c.Model.ModelID, &m)
		fmt.Fprintf(stdout, ", model %s/%s", p, m)
	}
	var level string
	_ = json.Unmarshal(c.ThinkingLevel, &level)
	fmt.Fprintf(stdout, ", thinking %s\n\n", level)
	for i, m := range c.Messages {
		text := m.Text(" ")
		switch m.Role {
		case session.RoleCompactionSummary, session.RoleBranchSummary:
			text = m.SummaryText()
		case session.RoleBashExecution:
			text = m.Bash().Command
		}
		fmt.Fprintf(stdout, "%3d %-17s %6d  %s\n", i, m.Role, session.EstimateTokens(m), service.OneLine(text, 70))
	}
	return nil
}

func runFiles(_ context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	asJSON := fs.Bool("json", false, "print JSON")
	ix, leafID, err := fileAtLeaf(fs, args, stderr)
	if err != nil {
		return err
	}
	read, modified := fileops.ForPath(ix.Path(leafID))
	if *asJSON {
		return writeJSON(stdout, map[string]any{"readFiles": read, "modifiedFiles": modified})
	}
	fmt.Fprintf(stdout, "read (%d):\n", len(read))
	for _, f := range read {
		fmt.Fprintf(stdout, "  %s\n", f)
	}
	fmt.Fprintf(stdout, "modified (%d):\n", len(modified))
	for _, f := range modified {
		fmt.Fprintf(stdout, "  %s\n", f)
	}
	return nil
}

var errUsage = errors.New("usage")
