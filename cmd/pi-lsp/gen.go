package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
)

// runGen writes a large synthetic session (for benchmarks and load tests).
func runGen(_ context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var opt benchgen.Options
	fs.IntVar(&opt.Entries, "entries", 10000, "approximate number of entries")
	fs.Int64Var(&opt.Seed, "seed", 1, "random seed (output is deterministic per seed)")
	fs.IntVar(&opt.BranchEvery, "branch-every", 0, "start a branch every N turns")
	fs.IntVar(&opt.CompactEvery, "compact-every", 0, "append a compaction every N turns")
	fs.IntVar(&opt.ImageEvery, "image-every", 0, "attach an image every N turns")
	fs.IntVar(&opt.ResultBytes, "result-bytes", 2500, "tool result size in bytes")
	out := fs.String("o", "", "output file (default stdout)")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	w := stdout
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("gen: %w", err)
		}
		defer f.Close()
		w = f
	}
	return benchgen.Write(w, opt)
}
