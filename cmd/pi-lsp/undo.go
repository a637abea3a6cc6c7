package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/service"
)

// maxSideListed is how many side-branch entries the text output of undo-compaction names.
const maxSideListed = 3

// printSideBranch says which entries stay on a side branch and how to get back to them.
func printSideBranch(w io.Writer, path string, res *branch.NavigateResult, side []rpc.SideEntry) {
	back := fmt.Sprintf("pi-lsp navigate %s %s", shellWord(path), res.OldLeafID)
	if len(side) == 0 {
		fmt.Fprintf(w, "compaction %s stays on a side branch (nothing was written after it); %s returns to it\n", res.UndoneCompactionID, back)
		return
	}
	var names []string
	for i, e := range side {
		if i == maxSideListed {
			names = append(names, "…")
			break
		}
		names = append(names, e.ID+" "+service.OneLine(e.Description, 40))
	}
	n := fmt.Sprintf("%d entries", len(side))
	if len(side) == 1 {
		n = "1 entry"
	}
	fmt.Fprintf(w, "%s written after the compaction (%s) stay on a side branch; %s returns to them\n", n, strings.Join(names, ", "), back)
}

// shellWord quotes s for a POSIX shell when it needs quoting.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+:@=,%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
