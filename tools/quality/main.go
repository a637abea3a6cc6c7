// Command quality runs the checkpoint quality benchmark (internal/quality): every session
// compacted (or its branch summarized) by the built-in extractive summarizer, by a
// heading-only template and, when one is configured (PI_LSP_SUMMARIZER=openai with
// PI_LSP_BASE_URL and PI_LSP_MODEL, or Pi's models.json), by a model; each summary is
// scored with the rubric. It prints the table and, with -write, writes docs/QUALITY.md.
//
//	go run ./tools/quality [-write docs/QUALITY.md] [-v] [-case NAME] [-dump DIR]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/quality"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

func main() {
	write := flag.String("write", "", "write the report (Markdown) to this file")
	verbose := flag.Bool("v", false, "print every summary with what it missed")
	only := flag.String("case", "", "run only the cases whose name contains this")
	dump := flag.String("dump", "", "write each case's session file (JSONL) into this directory")
	noModel := flag.Bool("no-model", false, "skip the model even when one is configured")
	realDir := flag.String("real", "testdata/real", "the directory of the real-session corpus (see -import-real)")
	importFrom := flag.String("import-real", "", "import the real sessions of internal/quality/corpus.tsv from clones of their repositories under this directory into -real, then stop")
	realOnly := flag.Bool("real-only", false, "run only the real-session corpus")
	demo := flag.String("demo", "", "write the example session of make demo (quality.DemoSession) to this file, then stop")
	showHeld := flag.Bool("show-held-out", false, "with -v, print the held-out real sessions' summaries too (never while tuning)")
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()
	if *demo != "" {
		if err := os.WriteFile(*demo, quality.DemoSession(), 0o644); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *importFrom != "" {
		if err := importReal(*importFrom, *realDir); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *realOnly {
		runs, err := runReal(ctx, *realDir, *only, []compaction.Summarizer{compaction.Extractive{}, quality.HeadingOnly{}})
		if err != nil {
			log.Fatal(err)
		}
		if runs == nil {
			log.Fatalf("no real-session corpus in %s (go run ./tools/quality -import-real DIR)", *realDir)
		}
		if *verbose {
			printReal(runs[0], *showHeld)
		}
		var b bytes.Buffer
		realTable(&b, runs)
		b.WriteString("\n")
		realProbeTable(&b, runs[0])
		fmt.Print(b.String())
		return
	}

	var cases []*quality.Case
	for _, c := range quality.Cases() {
		if strings.Contains(c.Name, *only) {
			cases = append(cases, c)
		}
	}
	if *dump != "" {
		if err := os.MkdirAll(*dump, 0o755); err != nil {
			log.Fatal(err)
		}
		for _, c := range cases {
			if err := os.WriteFile(filepath.Join(*dump, c.Name+".jsonl"), c.Session(), 0o644); err != nil {
				log.Fatal(err)
			}
		}
	}
	summarizers := []compaction.Summarizer{compaction.Extractive{}, quality.HeadingOnly{}}
	modelNote := "no model configured (set PI_LSP_SUMMARIZER=openai, PI_LSP_BASE_URL and PI_LSP_MODEL to add one)"
	if cfg := service.ConfigFromEnv(); strings.EqualFold(cfg.Kind, "openai") && !*noModel {
		agent, _ := session.AgentDir()
		s, built, err := cfg.Build(agent)
		if err != nil {
			log.Fatalf("model summarizer: %v", err)
		}
		summarizers = append(summarizers, named{s, "model: " + built.Model})
		modelNote = "model: " + built.Model
	}
	var runs []*quality.Run
	for i, s := range summarizers {
		r, err := quality.RunAll(ctx, cases, s)
		if err != nil && i >= 2 {
			// The model's failure (an endpoint down, a timeout) leaves the offline rows.
			log.Printf("%s: %v (left out)", s.Name(), err)
			modelNote = fmt.Sprintf("%s failed (%v) and is left out", s.Name(), err)
			continue
		}
		if err != nil {
			log.Fatalf("%s: %v", s.Name(), err)
		}
		runs = append(runs, r)
	}
	if *verbose {
		for _, res := range runs[0].Results {
			fmt.Printf("==== %s (%.3f) split=%v kept from %s\n%s\n---- dims:", res.Case.Name, res.Score.Total, res.Produced.SplitTurn, res.Produced.Kept, res.Produced.Summary)
			for _, d := range quality.Dimensions {
				fmt.Printf(" %s=%.2f", d.Key, res.Score.Dims[d.Key])
			}
			fmt.Printf("\n---- penalties: %v\n", res.Score.Penalties)
			for _, m := range res.Score.Missed {
				fmt.Println("  missed " + m)
			}
		}
	}
	var b bytes.Buffer
	quality.WriteTable(&b, runs)
	fmt.Print(b.String())
	if *verbose {
		var d bytes.Buffer
		quality.WriteDimensions(&d, runs)
		quality.WriteCases(&d, runs)
		fmt.Print(d.String())
	}
	realRuns, err := runReal(ctx, *realDir, *only, []compaction.Summarizer{compaction.Extractive{}, quality.HeadingOnly{}})
	if err != nil {
		log.Fatal(err)
	}
	if realRuns == nil {
		fmt.Printf("\nno real-session corpus in %s (go run ./tools/quality -import-real DIR): its part of the report is left empty\n", *realDir)
	} else {
		var rb bytes.Buffer
		rb.WriteString("\nreal sessions:\n")
		realTable(&rb, realRuns)
		fmt.Print(rb.String())
	}
	if *write != "" {
		if err := os.WriteFile(*write, report(runs, modelNote, realRuns, *realDir), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// named gives a summarizer another name in the table.
type named struct {
	compaction.Summarizer
	name string
}

func (n named) Name() string { return n.name }
