package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/rewind"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// stringList is a flag that may be given several times.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func runRewind(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	code := fs.Bool("code", false, "bring back the files only (the default; nothing is written to the session)")
	conv := fs.Bool("conversation", false, "move the conversation only (navigate)")
	both := fs.Bool("both", false, "bring back the files, then move the conversation")
	summarize := fs.Bool("summarize", false, "with --conversation or --both: a branch summary of what is left")
	instructions := fs.String("instructions", "", "custom focus for the summary")
	var files stringList
	fs.Var(&files, "file", "bring back this conflicting file anyway (repeatable)")
	force := fs.Bool("force", false, "bring back every conflicting file")
	dryRun := fs.Bool("dry-run", false, "print what would change as a unified diff; write nothing")
	undo := fs.Bool("undo", false, "put back the bytes the session's last rewind replaced")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	inv := invocationOf(fs)
	modes := 0
	mode := service.RewindCode
	for _, m := range []struct {
		set  bool
		mode service.RewindMode
	}{{*code, service.RewindCode}, {*conv, service.RewindConversation}, {*both, service.RewindBoth}} {
		if m.set {
			modes++
			mode = m.mode
		}
	}
	switch {
	case modes > 1:
		return inv.fail("--code, --conversation and --both exclude each other")
	case *undo && len(pos) > 1:
		return inv.fail("--undo takes no ENTRY_ID")
	case !*undo && len(pos) < 2:
		return inv.fail("missing ENTRY_ID")
	case *summarize && mode == service.RewindCode:
		return inv.fail("--summarize needs --conversation or --both")
	}
	req := service.RewindRequest{Session: pos[0], Mode: mode, Summarize: *summarize, Instructions: *instructions,
		Files: files, Force: *force, DryRun: *dryRun, Undo: *undo}
	if !*undo {
		req.EntryID = pos[1]
	}
	out, err := svc("", 0, 0).Rewind(ctx, req, newReporter(stderr, "rewind"))
	if err != nil {
		if errors.Is(err, service.ErrRewindUsage) {
			return inv.fail(err.Error())
		}
		return err
	}
	if *asJSON {
		return writeJSON(stdout, rewindJSON(out))
	}
	if *dryRun && out.Plan != nil {
		printRewindDiff(stdout, out.Plan, out.Conflicts)
	}
	printRewind(stdout, pos[0], req, out)
	return nil
}

// rewindJSON is the answer of `rewind --json`.
func rewindJSON(out service.RewindOutcome) map[string]any {
	conflicts := make([]string, 0, len(out.Conflicts))
	for _, f := range out.Conflicts {
		conflicts = append(conflicts, f.Rel)
	}
	nr := out.NotRestorable
	if nr == nil {
		nr = []rewind.NotRestorable{}
	}
	j := map[string]any{
		"restored": nonNil(out.Restored), "removed": nonNil(out.Removed), "conflicts": conflicts,
		"notRestorable": nr, "bashCommands": nonNil(out.BashCommands), "undo": session.IDOrNull(out.Undo),
	}
	if out.DryRun && out.Plan != nil {
		diffs := map[string]string{}
		for _, f := range out.Plan.Files {
			diffs[f.Rel] = rewind.UnifiedDiff(f.Rel, f.Exists, f.Current, f.TargetExists, f.Target)
		}
		j["dryRun"], j["diffs"] = true, diffs
	}
	if n := out.Navigation; n != nil {
		j["leafId"], j["position"] = session.IDOrNull(n.LeafID), session.IDOrNull(n.Position)
	}
	return j
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// printRewindDiff prints, for each file, the change a rewind makes (a conflict's is
// shown too, from the disk to what the rewind would write).
func printRewindDiff(w io.Writer, p *rewind.Plan, conflicts []rewind.File) {
	in := map[string]bool{}
	for _, f := range conflicts {
		in[f.Path] = true
	}
	for _, f := range p.Files {
		if in[f.Path] {
			fmt.Fprintf(w, "# %s: conflict, changed since the session's last change (left alone without --file or --force)\n", f.Rel)
		}
		fmt.Fprint(w, rewind.UnifiedDiff(f.Rel, f.Exists, f.Current, f.TargetExists, f.Target))
	}
}

func printRewind(w io.Writer, path string, req service.RewindRequest, out service.RewindOutcome) {
	verb := "Rewound"
	switch {
	case req.Undo:
		verb = "Undid the last rewind of"
	case out.DryRun:
		verb = "Would rewind"
	}
	if req.Undo {
		fmt.Fprintf(w, "%s %s\n", verb, filepath.Base(path))
	} else if req.Mode != service.RewindConversation {
		fmt.Fprintf(w, "%s the files of %s to %s\n", verb, filepath.Base(path), req.EntryID)
	}
	for _, f := range out.Restored {
		fmt.Fprintf(w, "  restored: %s\n", f)
	}
	for _, f := range out.Removed {
		fmt.Fprintf(w, "  removed:  %s\n", f)
	}
	for _, f := range out.Conflicts {
		fmt.Fprintf(w, "  conflict: %s (changed since; left alone: --file %s or --force to bring it back)\n", f.Rel, f.Rel)
	}
	for _, n := range out.NotRestorable {
		fmt.Fprintf(w, "  not restorable: %s: %s\n", n.Path, n.Reason)
	}
	if len(out.BashCommands) > 0 {
		fmt.Fprintf(w, "commands run after the entry (their changes are not undone):\n")
		for _, c := range out.BashCommands {
			fmt.Fprintf(w, "  $ %s\n", c)
		}
	}
	if !req.Undo && !out.DryRun && req.Mode != service.RewindConversation && len(out.Restored)+len(out.Removed) == 0 {
		fmt.Fprintf(w, "no file to change\n")
	}
	if out.Undo != "" && !req.Undo {
		fmt.Fprintf(w, "the replaced bytes are kept (rewind %s): pi-lsp rewind %s --undo puts them back\n", out.Undo, path)
	}
	if n := out.Navigation; n != nil {
		printNavigation(w, path, n)
	}
}
