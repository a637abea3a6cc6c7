package quality

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
)

// HeadingOnly is the baseline a useful summary must beat: Pi's headings with the
// template's placeholders and no content (the file blocks are still appended by the code
// path around it).
type HeadingOnly struct{}

// Name implements compaction.Summarizer.
func (HeadingOnly) Name() string { return "heading-only" }

// Summarize implements compaction.Summarizer.
func (HeadingOnly) Summarize(ctx context.Context, req compaction.Request) (compaction.Result, error) {
	if err := ctx.Err(); err != nil {
		return compaction.Result{}, err
	}
	if req.Kind == compaction.KindTurnPrefix {
		return compaction.Result{Text: "## Original Request\n[What did the user ask for?]\n\n## Progress So Far\n- [Key decisions and work completed]\n\n## Context Needed to Continue\n- [Information needed to understand the later work]"}, nil
	}
	t := "## Goal\n[What is the user trying to accomplish?]\n\n## Constraints & Preferences\n- (none)\n\n## Progress\n### Done\n- [x] [Completed tasks/changes]\n\n### In Progress\n- [ ] [Current work]\n\n### Blocked\n- (none)\n\n## Key Decisions\n- **[Decision]**: [Brief rationale]\n\n## Next Steps\n1. [Ordered list of what should happen next]"
	if req.Kind != compaction.KindBranch {
		t += "\n\n## Critical Context\n- (none)"
	}
	return compaction.Result{Text: t}, nil
}

// Result is one case scored for one summarizer.
type Result struct {
	Case     *Case
	Produced *Produced
	Score    Score
}

// Run is a summarizer's results over cases.
type Run struct {
	Summarizer string
	Results    []Result
}

// RunAll produces and scores every case with s.
func RunAll(ctx context.Context, cases []*Case, s compaction.Summarizer) (*Run, error) {
	r := &Run{Summarizer: s.Name()}
	for _, c := range cases {
		p, err := c.Produce(ctx, s)
		if err != nil {
			return nil, err
		}
		r.Results = append(r.Results, Result{Case: c, Produced: p, Score: ScoreSummary(p)})
	}
	return r, nil
}

// Mean is the mean total of the results chosen by keep (all when nil).
func (r *Run) Mean(keep func(*Case) bool) float64 {
	var sum float64
	n := 0
	for _, res := range r.Results {
		if keep == nil || keep(res.Case) {
			sum += res.Score.Total
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// DimMean is the mean of one dimension over every result.
func (r *Run) DimMean(key string) float64 {
	var sum float64
	for _, res := range r.Results {
		sum += res.Score.Dims[key]
	}
	return sum / float64(len(r.Results))
}

// PenaltyMean is the mean of one penalty over every result.
func (r *Run) PenaltyMean(name string) float64 {
	var sum float64
	for _, res := range r.Results {
		sum += res.Score.Penalty(name)
	}
	return sum / float64(len(r.Results))
}

// Passing counts the results at or above the rubric's "good" gate.
func (r *Run) Passing() int {
	n := 0
	for _, res := range r.Results {
		if res.Score.Total >= GoodGate {
			n++
		}
	}
	return n
}

// The rubric's calibration bands.
const (
	GoodGate         = 0.75 // a good operational checkpoint scores at least this
	GenericCeiling   = 0.45 // a generic, well-structured checkpoint scores below this
	HallucinatedCeil = 0.35 // a checkpoint that claims unfinished work is done scores at most this
)

func dev(c *Case) bool     { return !c.HeldOut }
func heldOut(c *Case) bool { return c.HeldOut }

// WriteTable writes the summary table of runs as Markdown.
func WriteTable(w io.Writer, runs []*Run) {
	fmt.Fprintf(w, "| summarizer | mean (all %d) | tuning set | held-out | ≥ %.2f |\n|---|---:|---:|---:|---:|\n", len(runs[0].Results), GoodGate)
	for _, r := range runs {
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %s | %d / %d |\n", r.Summarizer, r.Mean(nil), r.Mean(dev), fmtMean(r.Mean(heldOut)), r.Passing(), len(r.Results))
	}
}

func fmtMean(m float64) string {
	if math.IsNaN(m) {
		return "–"
	}
	return fmt.Sprintf("%.3f", m)
}

// writeRunsHeader writes a table's header: the columns head and rule, then a column of
// scores for each run.
func writeRunsHeader(w io.Writer, runs []*Run, head, rule string) {
	fmt.Fprint(w, head)
	for _, r := range runs {
		fmt.Fprintf(w, " %s |", r.Summarizer)
	}
	fmt.Fprint(w, "\n"+rule)
	for range runs {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
}

// WriteDimensions writes the per-dimension means of runs, then the mean penalties.
func WriteDimensions(w io.Writer, runs []*Run) {
	writeRunsHeader(w, runs, "| dimension | weight |", "|---|---:|")
	for _, d := range Dimensions {
		fmt.Fprintf(w, "| %s | %.2f |", d.Name, d.Weight)
		for _, r := range runs {
			fmt.Fprintf(w, " %.3f |", r.DimMean(d.Key))
		}
		fmt.Fprintln(w)
	}
	names := map[string]bool{}
	for _, r := range runs {
		for _, res := range r.Results {
			for _, p := range res.Score.Penalties {
				names[p.Name] = true
			}
		}
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		fmt.Fprintf(w, "| penalty: %s | |", strings.ReplaceAll(n, "_", " "))
		for _, r := range runs {
			fmt.Fprintf(w, " −%.3f |", r.PenaltyMean(n))
		}
		fmt.Fprintln(w)
	}
}

// WriteCases writes each case's score for every run.
func WriteCases(w io.Writer, runs []*Run) {
	writeRunsHeader(w, runs, "| case | kind |", "|---|---|")
	for i, res := range runs[0].Results {
		c := res.Case
		kind := string(c.Kind)
		if res.Produced.SplitTurn {
			kind += ", split turn"
		}
		if res.Produced.HasPrevious {
			kind += ", update"
		}
		name := c.Name
		if c.HeldOut {
			name += " (held out)"
		}
		fmt.Fprintf(w, "| %s | %s |", name, kind)
		for _, r := range runs {
			fmt.Fprintf(w, " %.3f |", r.Results[i].Score.Total)
		}
		fmt.Fprintln(w)
	}
}
