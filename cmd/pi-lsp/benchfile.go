package main

import (
	"context"
	"flag"
	"io"
	"os"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// runBenchFile measures one session file the way test/bench/pi-bench.mjs measures real
// Pi, and prints one JSON line. It is what scripts/bench.sh runs, one process per file so
// that peak RSS belongs to that file.
func runBenchFile(_ context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	path, err := fileArg(fs, args)
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	ms := func(a, b time.Time) float64 { return float64(b.Sub(a).Nanoseconds()) / 1e6 }
	t0 := time.Now()
	f, err := session.Load(path)
	if err != nil {
		return err
	}
	ix := session.NewIndex(f)
	t1 := time.Now()
	c := ix.BuildContext("")
	t2 := time.Now()
	// As the server prepares a compaction: from the index's projection of the leaf
	// (which the context just made).
	branchPath, proj := ix.ProjectedPath(ix.LeafID())
	prep, err := compaction.PrepareProjected(branchPath, proj, session.DefaultCompactionSettings)
	t3 := time.Now()
	roots := ix.Tree()
	t4 := time.Now()
	read, _ := fileops.ForPath(branchPath)
	t5 := time.Now()
	var tokens any
	if err == nil {
		tokens = prep.TokensBefore
	}
	return writeJSON(stdout, map[string]any{
		"tool": "pi-lsp", "file": path, "bytes": st.Size(), "entries": len(f.Entries),
		"openMs": ms(t0, t1), "contextMs": ms(t1, t2), "prepareMs": ms(t2, t3), "treeMs": ms(t3, t4), "filesMs": ms(t4, t5),
		"messages": len(c.Messages), "tokensBefore": tokens, "roots": len(roots), "readFiles": len(read),
		"maxRssKB": maxRSS(),
	})
}
