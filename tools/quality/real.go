package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/quality"
	"github.com/pi-lsp/pi-lsp/internal/quality/convert"
)

// importReal fills dir with the manifest's sessions, converted to Pi sessions, read from
// clones of their repositories under from (from/owner/name, from/owner+name or
// from/owner+name/repo, a work tree or a bare repository) at the listed commit.
func importReal(from, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var missing []string
	n := 0
	for _, src := range quality.RealSources() {
		repo := findClone(from, src.Repo)
		if repo == "" {
			missing = append(missing, src.Repo)
			continue
		}
		raw, err := exec.Command("git", "-C", repo, "show", src.Commit+":"+src.Path).Output()
		if err != nil {
			return fmt.Errorf("%s: git show %s:%s: %w", src.Name, src.Commit, src.Path, err)
		}
		out, err := convert.Any(src.Name, raw)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, src.Name+".jsonl"), out, 0o644); err != nil {
			return err
		}
		n++
	}
	fmt.Printf("imported %d sessions into %s\n", n, dir)
	if len(missing) > 0 {
		return fmt.Errorf("no clone under %s of: %s", from, strings.Join(uniq(missing), ", "))
	}
	return nil
}

func findClone(from, repo string) string {
	owner, name, _ := strings.Cut(repo, "/")
	for _, c := range []string{filepath.Join(from, owner, name), filepath.Join(from, owner+"+"+name, "repo"), filepath.Join(from, owner+"+"+name)} {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
	}
	return ""
}

func uniq(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range s {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// runReal runs the summarizers over the real corpus in dir; nil when there is none.
func runReal(ctx context.Context, dir, only string, summarizers []compaction.Summarizer) ([]*quality.RealRun, error) {
	var runs []*quality.RealRun
	for _, s := range summarizers {
		r, err := quality.RunReal(ctx, dir, s, only)
		if errors.Is(err, quality.ErrNoCorpus) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func fmtPct(x float64) string {
	if x != x {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

func fmtF(x float64) string {
	if x != x {
		return "–"
	}
	return fmt.Sprintf("%.3f", x)
}

// realTable writes the overall table of the real corpus.
func realTable(b *bytes.Buffer, runs []*quality.RealRun) {
	fmt.Fprintf(b, "| summarizer | set | sessions | continuation | clean output | stale blocker |\n|---|---|---:|---:|---:|---:|\n")
	for _, r := range runs {
		for _, set := range []struct {
			name string
			keep func(*quality.RealResult) bool
		}{{"all", nil}, {"tuning", quality.RealTuning}, {"held-out", quality.RealHeldOut}} {
			n, c, clean, stale := r.Stats(set.keep)
			fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %d |\n", r.Summarizer, set.name, n, fmtF(c), fmtPct(clean), stale)
		}
	}
}

func realProbeTable(b *bytes.Buffer, r *quality.RealRun) {
	fmt.Fprintf(b, "| probe | applies (all) | all | tuning | held-out |\n|---|---:|---:|---:|---:|\n")
	for _, name := range quality.ProbeNames {
		all, n := r.ProbeMean(name, nil)
		tun, _ := r.ProbeMean(name, quality.RealTuning)
		held, _ := r.ProbeMean(name, quality.RealHeldOut)
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s |\n", name, n, fmtF(all), fmtF(tun), fmtF(held))
	}
}

func realSessionTable(b *bytes.Buffer, runs []*quality.RealRun) {
	fmt.Fprintf(b, "| session | set | span messages | kind |")
	for _, r := range runs {
		fmt.Fprintf(b, " %s |", r.Summarizer)
	}
	fmt.Fprintf(b, " clean | stale |\n|---|---|---:|---|")
	for range runs {
		fmt.Fprintf(b, "---:|")
	}
	fmt.Fprintf(b, "---|---|\n")
	for i, res := range runs[0].Results {
		set := "tuning"
		if res.Source.HeldOut {
			set = "held-out"
		}
		kind := "compaction"
		if res.SplitTurn {
			kind += ", split turn"
		}
		if res.HasPrevious {
			kind += ", update"
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s |", res.Source.Name, set, res.SpanMessages, kind)
		for _, r := range runs {
			fmt.Fprintf(b, " %.3f |", r.Results[i].Continuation)
		}
		// Only the kinds of issue: the report quotes nothing of the sessions.
		clean, stale := "yes", "none"
		if len(res.Clean) > 0 {
			var kinds []string
			for _, c := range res.Clean {
				k, _, _ := strings.Cut(c, ":")
				kinds = uniq(append(kinds, k))
			}
			clean = "no: " + strings.Join(kinds, "; ")
		}
		if len(res.Stale) > 0 {
			stale = fmt.Sprintf("%d", len(res.Stale))
		}
		fmt.Fprintf(b, " %s | %s |\n", clean, stale)
	}
}

func clipTo(s string, n int) string {
	s = strings.ReplaceAll(s, "`", "'")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n]) + "…"
	}
	return s
}

// printReal prints each tuning session's summary and what its probes missed (held-out
// sessions only with showHeld, which tuning never uses).
func printReal(r *quality.RealRun, showHeld bool) {
	for _, res := range r.Results {
		if res.Source.HeldOut && !showHeld {
			continue
		}
		fmt.Printf("==== %s (%.3f) split=%v update=%v span=%d\n%s\n", res.Source.Name, res.Continuation, res.SplitTurn, res.HasPrevious, res.SpanMessages, res.Summary)
		for _, p := range res.Probes {
			if p.Score < 1 {
				fmt.Printf("  probe %s %.2f missed %q\n", p.Name, p.Score, p.Missed)
			}
		}
		for _, c := range res.Clean {
			fmt.Println("  unclean: " + c)
		}
		for _, s := range res.Stale {
			fmt.Println("  stale: " + s)
		}
	}
}
