package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The context at a glance in a terminal: `context-size FILE --by kind` (the tokens by
// kind) and `--history` (the size per reply and event along the path), plain text that
// reads without colour, or JSON.

// kindRow is one kind in `--by kind --json`.
type kindRow struct {
	Kind    string `json:"kind"`
	Tokens  int    `json:"tokens"`
	Entries int    `json:"entries"`
}

// historyRow is one point in `--history --json`.
type historyRow struct {
	EntryID string  `json:"entryId"`
	Tokens  float64 `json:"tokens"`
	Source  string  `json:"source"`
	Event   *string `json:"event"`
}

// barWidth is the width of a kind's bar at 100%.
const barWidth = 20

// printBreakdown prints the context of path by kind.
func printBreakdown(ctx context.Context, stdout, stderr io.Writer, cwd string, path []*session.Entry, history, asJSON bool) error {
	b, err := svc("", 0, 0).ContextBreakdown(ctx, service.BreakdownRequest{Cwd: cwd, Path: path, History: history}, stderrReporter{stderr})
	if err != nil {
		return err
	}
	if history {
		return printHistory(stdout, b, asJSON)
	}
	if asJSON {
		kinds := make([]kindRow, len(b.Kinds))
		for i, k := range b.Kinds {
			kinds[i] = kindRow{k.Kind, k.Tokens, k.Entries}
		}
		return writeJSON(stdout, struct {
			LeafID        any       `json:"leafId"`
			Total         int       `json:"total"`
			UsageTokens   *float64  `json:"usageTokens"`
			ContextWindow int       `json:"contextWindow"`
			ReserveTokens int       `json:"reserveTokens"`
			Kinds         []kindRow `json:"kinds"`
		}{session.IDOrNull(b.LeafID), b.Total, b.UsageTokens, b.ContextWindow, b.ReserveTokens, kinds})
	}
	fmt.Fprintf(stdout, "leaf %s: context ~%s tokens (Pi's estimate), %s of the %s window\n",
		orDash(b.LeafID), thousands(b.Total), percentOf(float64(b.Total), b.ContextWindow), thousands(b.ContextWindow))
	if b.UsageTokens != nil {
		fmt.Fprintf(stdout, "last reply's usage: %s tokens\n", thousands(int(*b.UsageTokens)))
	} else {
		fmt.Fprintln(stdout, "last reply's usage: none to trust (after a compaction or context edit, or none yet)")
	}
	if b.CompactionOn {
		fmt.Fprintf(stdout, "Pi compacts above %s tokens (window %s - reserve %s)\n",
			thousands(b.ContextWindow-b.ReserveTokens), thousands(b.ContextWindow), thousands(b.ReserveTokens))
	} else {
		fmt.Fprintln(stdout, "automatic compaction is off")
	}
	fmt.Fprintln(stdout)
	width := len("total")
	for _, k := range b.Kinds {
		width = max(width, len(k.Kind))
	}
	fmt.Fprintf(stdout, "%-*s  %9s  %6s  %7s\n", width, "kind", "tokens", "share", "entries")
	for _, k := range b.Kinds {
		share := 0.0
		if b.Total > 0 {
			share = float64(k.Tokens) / float64(b.Total)
		}
		bar := strings.Repeat("#", int(share*barWidth+0.5))
		fmt.Fprintln(stdout, strings.TrimRight(fmt.Sprintf("%-*s  %9s  %5.1f%%  %7d  %s", width, k.Kind, thousands(k.Tokens), share*100, k.Entries, bar), " "))
	}
	fmt.Fprintf(stdout, "%-*s  %9s  %5.1f%%\n", width, "total", thousands(b.Total), 100.0)
	return nil
}

// printHistory prints the size of the context along the path.
func printHistory(stdout io.Writer, b service.Breakdown, asJSON bool) error {
	if asJSON {
		rows := make([]historyRow, len(b.History))
		for i, p := range b.History {
			rows[i] = historyRow{p.EntryID, p.Tokens, p.Source, p.Event}
		}
		return writeJSON(stdout, rows)
	}
	fmt.Fprintf(stdout, "%-8s  %9s  %6s  %-8s  %s\n", "entry", "tokens", "window", "source", "event")
	for _, p := range b.History {
		event := ""
		if p.Event != nil {
			event = *p.Event
			if p.TokensBefore != nil {
				event += fmt.Sprintf(" (%s before)", thousands(int(*p.TokensBefore)))
			}
			if p.Cleared {
				event += " (tool output cleared)"
			}
		}
		fmt.Fprintln(stdout, strings.TrimRight(fmt.Sprintf("%-8s  %9s  %6s  %-8s  %s", p.EntryID, thousands(int(p.Tokens)),
			percentOf(p.Tokens, b.ContextWindow), p.Source, event), " "))
	}
	return nil
}

// stderrReporter prints a job's notices on stderr.
type stderrReporter struct{ w io.Writer }

func (r stderrReporter) Report(string, int) {}
func (r stderrReporter) Notice(msg string)  { fmt.Fprintln(r.w, "pi-lsp: "+msg) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func percentOf(tokens float64, window int) string {
	if window <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", tokens/float64(window)*100)
}

// thousands writes n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
