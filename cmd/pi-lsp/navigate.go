package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

func runNavigate(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	summarize := fs.Bool("summarize", false, "summarize the branch being left (a branch_summary entry)")
	instructions := fs.String("instructions", "", "custom focus for the summary")
	replace := fs.Bool("replace-instructions", false, "the --instructions text replaces the summary prompt")
	label := fs.String("label", "", "label the summary entry (or, without a summary, the target)")
	budget := fs.Int("budget", 0, "token budget of the summarized messages (0 = none; default: context window - branchSummary.reserveTokens)")
	leaf := fs.String("leaf", "", "navigate from this entry (default: Pi's leaf, the last entry)")
	kind, model := summarizerFlags(fs)
	dryRun := fs.Bool("dry-run", false, "show the branch that would be summarized; write nothing")
	asJSON := fs.Bool("json", false, "print JSON")
	force := forceFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	path, target := pos[0], pos[1] // two, or parseArgs refused them
	budgetSet := false
	fs.Visit(func(f *flag.Flag) { budgetSet = budgetSet || f.Name == "budget" })

	c := svc(*kind, 0, 0)
	c.SummarizerConfig.Model = *model
	cwd := sessionCwd(path)
	reg, err := writerPi(ctx, fs, c, path, cwd, *force, *dryRun, "leaf", "budget", "summarizer", "model")
	if err != nil {
		return err
	}
	if reg != nil {
		phase, _ := progressLines(stderr, "navigate")
		return navigateViaPi(ctx, reg, path, bridge.NavigateRequest{TargetID: target, Summarize: *summarize,
			CustomInstructions: *instructions, ReplaceInstructions: *replace, Label: *label}, *asJSON, stdout, phase)
	}
	opt := branch.NavigateOptions{
		FromLeaf:            *leaf,
		Summarize:           *summarize,
		CustomInstructions:  *instructions,
		ReplaceInstructions: *replace,
		Label:               *label,
		ReserveTokens:       c.BranchReserve(cwd),
		DryRun:              *dryRun,
	}
	if budgetSet {
		opt.Budget = *budget
		if *budget <= 0 {
			opt.Budget = -1 // no limit
		}
	}
	// The job's snapshot of the session, loaded once (see runCompact).
	snap, ix, loadErr := snapshotOf(path)
	var s compaction.Summarizer
	var cfg service.SummarizerConfig
	var serr error
	if *summarize && !*dryRun {
		s, cfg, serr = summarizerAt(c, ix, *leaf, cwd, stderr)
	} else {
		cfg = c.SummarizerConfig // a dry run asks no model: its budget is the configured window
	}
	opt.ContextWindow = cfg.Window()
	if *summarize && !*dryRun {
		if serr != nil {
			return serr
		}
		opt.Summarizer = s
		opt.Phase, opt.Progress = progressLines(stderr, "navigate")
	}
	if loadErr != nil {
		return loadErr
	}
	res, err := branch.Navigate(ctx, snap, target, opt)
	if err != nil {
		return err
	}
	if *dryRun {
		return printNavigateDryRun(stdout, target, res, *asJSON)
	}
	if *asJSON {
		return printNavigatedJSON(stdout, res)
	}
	printNavigation(stdout, path, res)
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
		return writeJSON(stdout, map[string]any{
			"commonAncestorId": session.IDOrNull(p.CommonAncestorID), "entries": ids,
			"messages": len(p.Prepared.Messages), "totalTokens": p.Prepared.TotalTokens,
			"readFiles": p.ReadFiles, "modifiedFiles": p.ModifiedFiles,
		})
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
		fmt.Fprintf(stdout, "editor text: %s\n", oneLinePreview(res.EditorText, 70))
	}
	return nil
}

func printNavigatedJSON(stdout io.Writer, res *branch.NavigateResult) error {
	out := map[string]any{"leafId": session.IDOrNull(res.LeafID)}
	if res.SummaryEntry != nil {
		out["summaryEntry"] = json.RawMessage(res.SummaryEntry.Raw())
	}
	if res.HasEditorText {
		out["editorText"] = res.EditorText
	}
	if res.AlreadyThere {
		out["alreadyThere"] = true
	}
	return writeJSON(stdout, out)
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
	if err := refuseOwned(path, sessionCwd(path), *force); err != nil {
		return err
	}
	snap, err := session.LoadSnapshot(path)
	if err != nil {
		return err
	}
	res, err := branch.UndoCompaction(ctx, snap, *leaf)
	if err != nil {
		return err
	}
	// The compaction and what was written after it stay in the file, on a side branch:
	// entries of the snapshot, which the undo did not change.
	side := sideBranch(snap.Index(), res)
	if *asJSON {
		out := map[string]any{"leafId": session.IDOrNull(res.LeafID), "compactionId": res.UndoneCompactionID, "position": session.IDOrNull(res.Position), "sideBranch": side}
		if res.MarkerEntry != nil {
			out["markerEntry"] = json.RawMessage(res.MarkerEntry.Raw())
		}
		return writeJSON(stdout, out)
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
	r, err := route(ctx, svc("", 0, 0), pos[0], sessionCwd(pos[0]), *force, true)
	if err != nil {
		return err
	}
	if r.Bridge != nil {
		return labelViaPi(ctx, r.Bridge, pos[1], text, *asJSON, stdout)
	}
	e, err := branch.SetLabel(pos[0], pos[1], text)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, json.RawMessage(e.Raw()))
	}
	if text == "" {
		fmt.Fprintf(stdout, "label of %s cleared (entry %s)\n", pos[1], e.ID)
	} else {
		fmt.Fprintf(stdout, "label %q set on %s (entry %s)\n", text, pos[1], e.ID)
	}
	return nil
}
