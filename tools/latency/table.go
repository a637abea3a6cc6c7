//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// parserRun is one line of bench-file (pi-lsp) or pi-bench.mjs (Pi) under taskset.
type parserRun struct {
	MB        int     `json:"mb"`
	Load      string  `json:"load"`
	Tool      string  `json:"tool"`
	Bytes     int64   `json:"bytes"`
	OpenMs    float64 `json:"openMs"`
	ContextMs float64 `json:"contextMs"`
	PrepareMs float64 `json:"prepareMs"`
	MaxRSSKB  float64 `json:"maxRssKB"`
	// TimedOutMs is set when the run was stopped at this limit (Pi past the sizes it is
	// run on in full): its time is at least that.
	TimedOutMs float64 `json:"timedOutMs"`
	// ProcessMs is the wall time of the whole process: start, the work (with the tree
	// and the file lists besides what total counts), exit.
	ProcessMs float64 `json:"processMs"`
	// AnonKB and FileKB are the peaks of a memory run (tool "pi-lsp-memory" or
	// "pi-memory"): anonymous and file-backed resident memory.
	AnonKB float64 `json:"anonKB"`
	FileKB float64 `json:"fileKB"`
}

func (r parserRun) total() float64 {
	if r.TimedOutMs > 0 {
		return r.TimedOutMs
	}
	return r.OpenMs + r.ContextMs + r.PrepareMs
}

// writeTable renders the results of scripts/bench-budget.sh in dir as the markdown of
// docs/BENCHMARKS.md's budget section, with each goal of the latency budget beside it.
func writeTable(w io.Writer, dir string) error {
	lat := map[string]result{}
	pages := map[string]map[string]float64{}
	parser := map[string][]parserRun{}
	for _, load := range []string{"quiet", "hog"} {
		var r result
		if err := readJSON(filepath.Join(dir, "latency-"+load+".json"), &r); err != nil {
			return err
		}
		lat[load] = r
		var p map[string]any
		if readJSON(filepath.Join(dir, "pages-"+load+".json"), &p) == nil {
			pages[load] = map[string]float64{}
			for k, v := range p {
				if f, ok := v.(float64); ok {
					pages[load][k] = f
				}
			}
		}
		runs, err := readLines(filepath.Join(dir, "parser-"+load+".jsonl"))
		if err != nil {
			return err
		}
		parser[load] = runs
	}
	q, h := lat["quiet"], lat["hog"]
	fmt.Fprintf(w, "Measured %s on %d cores, `bash scripts/bench-budget.sh --write-docs`; \"hog\" is the same run with one busy process per core.\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU())
	fmt.Fprintf(w, "| what the user waits for (%d sessions, newest %d MB) | goal | quiet | hog | anchor (quiet) |\n|---|---|---|---|---|\n", q.Sessions, q.BigBytes/1_000_000)
	row := func(name, goal string, a, b stats, pick func(stats) float64, anchor string) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", name, goal, num(pick(a)), num(pick(b)), anchor)
	}
	p50 := func(s stats) float64 { return s.P50 }
	p99 := func(s stats) float64 { return s.P99 }
	row("spawn → `initialize` answered, ms (median)", "", q.InitializeMs, h.InitializeMs, p50, "spawn of `pi-lsp version`: "+num(q.SpawnOnlyMs))
	row("spawn → first `pi/tree` page (500 nodes), ms (median)", "< 150", q.FirstTreeMs, h.FirstTreeMs, p50, "no session in the project: "+num(q.EmptyFirstTree.P50))
	row("appended line → `pi/sessionChanged`, ms p99", "< 20", q.ChangedMs, h.ChangedMs, p99, "p50 "+num(q.ChangedMs.P50))
	row("appended line → refreshed last tree page, ms p99", "< 20", q.RefreshedMs, h.RefreshedMs, p99, "p50 "+num(q.RefreshedMs.P50))
	if pq, ph := pages["quiet"], pages["hog"]; pq != nil && ph != nil {
		fmt.Fprintf(w, "| 100 concurrent 500-node `pi/tree` pages (%.0f MB), ms p99: the first after the load / later | < 20 | %s / %s | %s / %s | p50 %s / %s |\n", pq["mb"],
			num(pq["tree-first-p99-ms"]), num(pq["tree-p99-ms"]), num(ph["tree-first-p99-ms"]), num(ph["tree-p99-ms"]), num(pq["tree-first-p50-ms"]), num(pq["tree-p50-ms"]))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| following %d sessions, entries appended | RSS MB (quiet) | threads | open fds | RSS MB (hog) |\n|---|---|---|---|---|\n", q.Followed)
	for i, m := range q.Memory {
		hog := "-"
		if i < len(h.Memory) {
			hog = num(float64(h.Memory[i].RSSKB) / 1024)
		}
		fmt.Fprintf(w, "| %d | %s | %d | %d | %s |\n", m.Appended, num(float64(m.RSSKB)/1024), m.Threads, m.FDs, hog)
	}
	fmt.Fprintln(w)
	var instr struct {
		Instructions float64 `json:"instructions"`
		Bytes        float64 `json:"bytes"`
	}
	perByte := ""
	if readJSON(filepath.Join(dir, "instructions.json"), &instr) == nil && instr.Bytes > 0 {
		perByte = fmt.Sprintf("; pi-lsp's parse executes %.1f instructions per byte (cachegrind, 16 MB)", instr.Instructions/instr.Bytes)
	}
	fmt.Fprintf(w, "One core (`taskset -c 0`, pi-lsp with `GOMAXPROCS=1`), open + context + prepare, best run%s.\n\n", perByte)
	fmt.Fprintln(w, "| file | load | pi-lsp ms | pi-lsp MB/s per core | Pi ms | Pi MB/s per core | speed-up (goal ≥ 10x) | as a process, ms (pi-lsp / Pi, speed-up) | peak RSS MB (pi-lsp / Pi) | peak anonymous MB (pi-lsp / Pi, goal ≤ 1/3) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, load := range []string{"quiet", "hog"} {
		best := map[string]map[int]parserRun{"pi-lsp": {}, "pi": {}}
		proc := map[string]map[int]float64{"pi-lsp": {}, "pi": {}} // the best process time
		memory := map[string]map[int]parserRun{"pi-lsp-memory": {}, "pi-memory": {}}
		for _, r := range parser[load] {
			if m := memory[r.Tool]; m != nil {
				m[r.MB] = r
			}
		}
		var sizes []int
		for _, r := range parser[load] {
			m := best[r.Tool]
			if m == nil {
				continue
			}
			if _, seen := best["pi-lsp"][r.MB]; !seen && r.Tool == "pi-lsp" {
				sizes = append(sizes, r.MB)
			}
			if b, ok := m[r.MB]; !ok || r.total() < b.total() {
				m[r.MB] = r
			}
			if p, ok := proc[r.Tool][r.MB]; r.ProcessMs > 0 && r.TimedOutMs == 0 && (!ok || r.ProcessMs < p) {
				proc[r.Tool][r.MB] = r.ProcessMs
			}
		}
		sort.Ints(sizes)
		for _, mb := range sizes {
			g := best["pi-lsp"][mb]
			rate := func(r parserRun) string { return num(float64(r.Bytes) / 1e6 / (r.total() / 1000)) }
			piMs, piRate, ratio, piRSS := "-", "-", "-", "-"
			if p, ok := best["pi"][mb]; ok {
				piMs, piRate, ratio, piRSS = num(p.total()), rate(p), fmt.Sprintf("%.1fx", p.total()/g.total()), num(p.MaxRSSKB/1024)
				if p.TimedOutMs > 0 {
					piMs, piRate, ratio, piRSS = "> "+num(p.total()), "< "+rate(p), fmt.Sprintf("> %.0fx", p.total()/g.total()), "-"
				}
			}
			anon := "-"
			if a, ok := memory["pi-lsp-memory"][mb]; ok {
				anon = num(a.AnonKB / 1024)
				if p, ok := memory["pi-memory"][mb]; ok && p.AnonKB > 0 {
					anon = fmt.Sprintf("%s / %s (1/%.1f)", anon, num(p.AnonKB/1024), p.AnonKB/a.AnonKB)
				}
			}
			process := "-"
			if a, ok := proc["pi-lsp"][mb]; ok {
				process = num(a)
				if p, ok := proc["pi"][mb]; ok {
					process = fmt.Sprintf("%s / %s, %.1fx", num(a), num(p), p/a)
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |\n", size(g.Bytes), load, num(g.total()), rate(g), piMs, piRate, ratio, process, num(g.MaxRSSKB/1024), piRSS, anon)
		}
	}
	return nil
}

func size(b int64) string {
	if b >= 1e9 {
		return fmt.Sprintf("%.2f GB", float64(b)/1e9)
	}
	return fmt.Sprintf("%d MB", (b+500_000)/1_000_000)
}

func num(f float64) string {
	switch {
	case f == 0:
		return "-"
	case f >= 100:
		return fmt.Sprintf("%.0f", f)
	case f >= 10:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.2f", f)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func readLines(path string) ([]parserRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []parserRun
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r parserRun
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
