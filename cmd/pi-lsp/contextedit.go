package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// runEditContext hides, replaces or restores one message of the context:
//
//	pi-lsp edit-context FILE ENTRY_ID (--omit | --replace TEXT | --restore) [--force] [--json]
func runEditContext(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	omit := fs.Bool("omit", false, "hide the entry from the context")
	var replace optString
	fs.Var(&replace, "replace", "replace the entry's content in the context with TEXT")
	restore := fs.Bool("restore", false, "restore the entry's original content")
	asJSON := fs.Bool("json", false, `print {"entry", "tokensBefore", "tokensAfter"}`)
	force := forceFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitError{2}
	}
	n := 0
	for _, b := range []bool{*omit, replace.set, *restore} {
		if b {
			n++
		}
	}
	if len(pos) != 2 || n != 1 {
		fmt.Fprintln(stderr, "usage: pi-lsp edit-context FILE ENTRY_ID (--omit | --replace TEXT | --restore) [--force] [--json]")
		return exitError{2}
	}
	e := contextedit.Edit{TargetID: pos[1], Action: contextedit.Omit}
	switch {
	case replace.set:
		e.Action, e.Text = contextedit.Replace, replace.v
	case *restore:
		e.Action = contextedit.Restore
	}
	res, err := svc("", 0, 0).EditContext(ctx, service.EditContextRequest{Path: pos[0], Edit: e, Force: *force}, newReporter(stderr, "edit-context"))
	if err != nil {
		return forceHint(err)
	}
	if *asJSON {
		return writeJSON(stdout, rpc.ContextEdited{Entry: session.Raw[session.ContextEditEntry](res.Entry.Raw()), TokensBefore: res.TokensBefore, TokensAfter: res.TokensAfter})
	}
	verb := map[contextedit.Action]string{contextedit.Omit: "hidden from", contextedit.Replace: "replaced in", contextedit.Restore: "restored to"}[e.Action]
	fmt.Fprintf(stdout, "%s %s the context (entry %s); context ~%d -> ~%d tokens\n", pos[1], verb, res.Entry.ID, int(res.TokensBefore), int(res.TokensAfter))
	return nil
}

// optString is a string flag that remembers whether it was given (an empty
// replacement is a replacement).
type optString struct {
	v   string
	set bool
}

func (o *optString) String() string     { return o.v }
func (o *optString) Set(s string) error { o.v, o.set = s, true; return nil }

// runContextSize lists the context by estimated size, largest first:
//
//	pi-lsp context-size FILE [--leaf ID] [--limit N] [--by kind | --history] [--json]
func runContextSize(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	leaf := fs.String("leaf", "", "leaf entry id (default: Pi's leaf, the last entry)")
	limit := fs.Int("limit", 0, "show only the N largest (0: all)")
	by := fs.String("by", "", "kind: the context's tokens by kind of content")
	history := fs.Bool("history", false, "the context's size after each reply and event along the path")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitError{2}
	}
	if len(pos) != 1 || *limit < 0 || (*by != "" && *by != "kind") || (*by != "" && *history) {
		fmt.Fprintln(stderr, "usage: pi-lsp context-size FILE [--leaf ID] [--limit N] [--by kind | --history] [--json]")
		return exitError{2}
	}
	ix, leafID, err := loadAtLeaf(pos[0], *leaf, stderr)
	if err != nil {
		return err
	}
	if *by != "" || *history {
		return printBreakdown(ctx, stdout, stderr, ix.File.Header.Cwd, ix.Path(leafID), *history, *asJSON)
	}
	sizes, err := contextedit.BySize(ctx, ix.Path(leafID), *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"leafId": session.IDOrNull(sizes.LeafID), "tokens": sizes.Tokens, "messages": sizes.Items})
	}
	fmt.Fprintf(stdout, "leaf %s, context ~%d tokens\n\n", sizes.LeafID, int(sizes.Tokens))
	for _, it := range sizes.Items {
		kind := it.Role
		if it.ToolName != "" {
			kind += " " + it.ToolName
		}
		mark := ""
		switch it.ContextEdit {
		case contextedit.Omitted:
			mark = " [hidden]"
		case contextedit.Replaced:
			mark = " [replaced]"
		}
		if !it.Editable {
			mark += " (not editable)"
		}
		fmt.Fprintf(stdout, "%7d  %-8s  %-22s %s%s\n", it.Tokens, it.EntryID, service.OneLine(kind, 22), service.OneLine(it.Preview, 60), mark)
	}
	return nil
}
