package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

func runNavigate(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	summarize := fs.Bool("summarize", false, "summarize the branch being left (a branch_summary entry)")
	sf := summaryFlagsOf(fs)
	replace := fs.Bool("replace-instructions", false, "the --instructions text replaces the summary prompt")
	label := fs.String("label", "", "label the summary entry (or, without a summary, the target)")
	budget := fs.Int("budget", 0, "token budget of the summarized messages (0 = none; default: context window - branchSummary.reserveTokens)")
	leaf := fs.String("leaf", "", "navigate from this entry (default: Pi's leaf, the last entry)")
	wf := writeFlagsOf(fs, "show the branch that would be summarized")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	path, target := pos[0], pos[1] // two, or parseArgs refused them
	req := service.NavigateRequest{Path: path, Target: target, FromLeaf: *leaf, Summarize: *summarize,
		Instructions: *sf.instructions, ReplaceInstructions: *replace, Label: *label, Force: *wf.force, DryRun: *wf.dryRun,
		// pi summarizes with its own model and budget.
		Asked: setFlags(fs, "budget", "summarizer", "model")}
	if len(setFlags(fs, "budget")) > 0 {
		req.Budget = *budget
		if *budget <= 0 {
			req.Budget = -1 // no limit
		}
	}
	out, err := sf.config(0, 0).Navigate(ctx, req, newReporter(stderr, "navigate"))
	if err != nil {
		return forceHint(err)
	}
	switch {
	case *wf.dryRun:
		return printNavigateDryRun(stdout, target, out.Result, *wf.json)
	case *wf.json:
		return printNavigatedJSON(stdout, out)
	case out.Via == service.ViaPi:
		return printNavigationByPi(stdout, path, out)
	}
	printNavigation(stdout, path, out.Result)
	return nil
}

// printNavigateDryRun shows the branch a navigation would leave.
func printNavigateDryRun(stdout io.Writer, target string, res *branch.NavigateResult, asJSON bool) error {
	p := res.Preparation
	if asJSON {
		ids := make([]string, len(p.Entries))
		for i, e := range p.Entries {
			ids[i] = e.ID
		}
		return writeJSON(stdout, rpc.NavigatePlan{CommonAncestorID: orNull(p.CommonAncestorID), Entries: ids,
			Messages: len(p.Prepared.Messages), TotalTokens: p.Prepared.TotalTokens,
			ReadFiles: p.ReadFiles, ModifiedFiles: p.ModifiedFiles})
	}
	if res.AlreadyThere {
		fmt.Fprintf(stdout, "already at %s; nothing to do\n", target)
		return nil
	}
	ca := p.CommonAncestorID
	if ca == "" {
		ca = "(none: no shared entry)"
	}
	fmt.Fprintf(stdout, "from %s to %s, common ancestor %s\n", p.OldLeafID, target, ca)
	fmt.Fprintf(stdout, "branch being left: %d entries", len(p.Entries))
	if p.Budget > 0 {
		fmt.Fprintf(stdout, ", %d messages (~%d tokens) within a budget of %d\n", len(p.Prepared.Messages), p.Prepared.TotalTokens, p.Budget)
	} else {
		fmt.Fprintf(stdout, ", %d messages (~%d tokens), no budget\n", len(p.Prepared.Messages), p.Prepared.TotalTokens)
	}
	fmt.Fprintf(stdout, "files read: %d, modified: %d\n", len(p.ReadFiles), len(p.ModifiedFiles))
	where := res.Position
	if where == "" {
		where = "the root (a new branch)"
	}
	fmt.Fprintf(stdout, "would continue from %s\n", where)
	if res.HasEditorText {
		fmt.Fprintf(stdout, "editor text: %s\n", service.OneLine(res.EditorText, 70))
	}
	return nil
}

func printNavigatedJSON(stdout io.Writer, out service.NavigateOutcome) error {
	ans := rpc.CLINavigated{LeafID: orNull(out.LeafID), SummaryEntry: out.SummaryEntry, Cancelled: out.Cancelled, Via: string(out.Via), PID: out.PID}
	if res := out.Result; res != nil {
		if res.HasEditorText {
			ans.EditorText = &res.EditorText
		}
		ans.AlreadyThere = res.AlreadyThere
	}
	return writeJSON(stdout, ans)
}

// printNavigationByPi shows what the live pi did.
func printNavigationByPi(w io.Writer, path string, out service.NavigateOutcome) error {
	if out.Cancelled {
		fmt.Fprintf(w, "pi (pid %d) did not move: the navigation was cancelled\n", out.PID)
		return nil
	}
	fmt.Fprintf(w, "Moved %s by pi (pid %d) from %s\n", filepath.Base(path), out.PID, out.Pi.OldLeafID)
	if len(out.SummaryEntry) > 0 {
		var e session.BranchSummaryEntry
		if err := json.Unmarshal(out.SummaryEntry, &e); err != nil {
			return fmt.Errorf("pi (pid %d) moved, but its branch summary entry does not decode: %w", out.PID, err)
		}
		fmt.Fprintf(w, "branch summary %s:\n\n%s\n\n", e.ID, e.Summary)
	}
	fmt.Fprintf(w, "leaf: %s\n", out.LeafID)
	return nil
}

func printNavigation(w io.Writer, path string, res *branch.NavigateResult) {
	if res.AlreadyThere {
		fmt.Fprintf(w, "already at %s; nothing written\n", res.LeafID)
		return
	}
	where := res.Position
	if where == "" {
		where = "the root (the next message starts a new branch)"
	}
	if res.UndoneCompactionID != "" {
		fmt.Fprintf(w, "Undid compaction %s in %s: the full context before it is active again, from %s\n", res.UndoneCompactionID, filepath.Base(path), where)
	} else {
		fmt.Fprintf(w, "Moved %s from %s to %s\n", filepath.Base(path), res.OldLeafID, where)
	}
	if e := res.SummaryEntry; e != nil {
		from := ""
		if res.FromHook {
			from = " (from the hook)"
		}
		fmt.Fprintf(w, "branch summary %s%s:\n\n%s\n\n", e.ID, from, e.BranchSummary().Summary)
	}
	if e := res.MarkerEntry; e != nil {
		fmt.Fprintf(w, "recorded as %s (a custom entry Pi skips; its next message continues from there)\n", e.ID)
	}
	if e := res.LabelEntry; e != nil {
		l := e.Label()
		fmt.Fprintf(w, "label %q set on %s\n", l.Label, l.TargetID)
	}
	fmt.Fprintf(w, "leaf: %s\n", res.LeafID)
	if res.HasEditorText {
		fmt.Fprintf(w, "editor text (the message to edit and resend):\n%s\n", res.EditorText)
	}
}

func runUndoCompaction(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	leaf := fs.String("leaf", "", "undo on the path of this entry (default: Pi's leaf, the last entry)")
	asJSON := fs.Bool("json", false, "print JSON")
	force := forceFlag(fs)
	path, err := fileArg(fs, args)
	if err != nil {
		return err
	}
	out, err := svc("", 0, 0).UndoCompaction(ctx, service.UndoRequest{Path: path, Leaf: *leaf, Force: *force}, newReporter(stderr, "undo-compaction"))
	if err != nil {
		return forceHint(err)
	}
	res := out.Result
	// The compaction and what was written after it stay in the file, on a side branch.
	side := rpc.SideBranchOf(out.SideBranch)
	if *asJSON {
		ans := rpc.UndoneCompaction{LeafID: orNull(res.LeafID), CompactionID: res.UndoneCompactionID, Position: orNull(res.Position), SideBranch: side}
		if res.MarkerEntry != nil {
			ans.MarkerEntry = session.Raw[session.CustomEntry](res.MarkerEntry.Raw())
		}
		return writeJSON(stdout, ans)
	}
	printNavigation(stdout, path, res)
	printSideBranch(stdout, path, res, side)
	return nil
}

func runLabel(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	asJSON := fs.Bool("json", false, "print the label entry as JSON")
	force := forceFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	text := ""
	if len(pos) == 3 {
		text = pos[2]
	}
	out, err := svc("", 0, 0).Label(ctx, service.LabelRequest{Path: pos[0], Entry: pos[1], Label: text, Force: *force}, newReporter(stderr, "label"))
	if err != nil {
		return forceHint(err)
	}
	var by string
	if out.Via == service.ViaPi {
		if *asJSON {
			return writeJSON(stdout, rpc.LabelledByPi{EntryID: pos[1], Label: orNull(text), Via: string(out.Via), PID: out.PID})
		}
		by = fmt.Sprintf("by pi (pid %d)", out.PID)
	} else {
		if *asJSON {
			return writeJSON(stdout, json.RawMessage(out.Written.Raw()))
		}
		by = fmt.Sprintf("(entry %s)", out.Written.ID)
	}
	if text == "" {
		fmt.Fprintf(stdout, "label of %s cleared %s\n", pos[1], by)
	} else {
		fmt.Fprintf(stdout, "label %q set on %s %s\n", text, pos[1], by)
	}
	return nil
}
