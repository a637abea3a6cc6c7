package oracle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// CorpusFile is one session file of the test corpus.
type CorpusFile struct {
	Name      string // e.g. "genuine/full-main.jsonl"
	Path      string // absolute
	Synthetic bool
	// SafeLeaves lists the leaf indices Pi can be asked about; nil means all.
	SafeLeaves []int
}

// Safe reports whether Pi can be asked about leaf index i without looping forever.
func (c CorpusFile) Safe(i int) bool {
	if c.SafeLeaves == nil {
		return true
	}
	for _, s := range c.SafeLeaves {
		if s == i {
			return true
		}
	}
	return false
}

// Corpus lists every session of testdata/corpus: genuine 0.73-era files (genuine/),
// genuine Pi 1.6.0 files (genuine-1.6/) and synthetic edge cases.
func Corpus(t testing.TB) []CorpusFile {
	t.Helper()
	root := filepath.Join(RepoRoot(), "testdata", "corpus")
	var out []CorpusFile
	for _, kind := range []string{"genuine", "genuine-1.6", "synthetic"} {
		matches, err := filepath.Glob(filepath.Join(root, kind, "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(matches)
		for _, m := range matches {
			out = append(out, CorpusFile{Name: kind + "/" + filepath.Base(m), Path: m, Synthetic: kind == "synthetic"})
		}
	}
	data, err := os.ReadFile(filepath.Join(root, "synthetic", "manifest.json"))
	if err == nil {
		var m struct {
			Files []struct {
				Name       string          `json:"name"`
				SafeLeaves json.RawMessage `json:"safeLeaves"`
			} `json:"files"`
		}
		if json.Unmarshal(data, &m) == nil {
			for _, f := range m.Files {
				var leaves []int
				if json.Unmarshal(f.SafeLeaves, &leaves) != nil {
					continue // "all"
				}
				for i := range out {
					if out[i].Synthetic && strings.HasSuffix(out[i].Path, "/"+f.Name) {
						out[i].SafeLeaves = append([]int{}, leaves...)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no corpus files under testdata/corpus")
	}
	return out
}

// NormalizeIDs replaces every string equal to one of ids by "#<index>", so results of
// files whose ids were invented by migration compare by position.
func NormalizeIDs(v any, ids []string) any {
	idx := make(map[string]int, len(ids))
	for i, id := range ids {
		if _, dup := idx[id]; !dup {
			idx[id] = i
		}
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if i, ok := idx[x]; ok {
				return "#" + itoa(i)
			}
			return x
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
			return x
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
			return x
		}
		return v
	}
	return walk(v)
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// SampleLeaves are the leaf indexes the differential tests ask Pi about in a file of n
// entries: every one of a small file, about ten spread over a larger one and the last.
// Tests that sample alike share the recorded goldens.
func SampleLeaves(n int) []int { return Spread(n, 12, 10) }

// Spread is every index of n when n is at most all, otherwise about spread indexes
// evenly apart from 0, and the last.
func Spread(n, all, spread int) []int {
	if n <= all {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for i := 0; i < n; i += n / spread {
		out = append(out, i)
	}
	return append(out, n-1)
}
