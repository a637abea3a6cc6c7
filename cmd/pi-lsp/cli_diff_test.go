package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The CLI's JSON answers equal Pi 1.6.0's on every corpus file (genuine 1.6.0, genuine
// 0.73.1, synthetic): `context --json` (messages, model, thinking level and the context
// figure Pi reports, estimateProjectedContextTokens), `files --json` and `tree --json`,
// at a spread of leaves (every leaf of a small file), at the entry before each
// compaction and at each context_edit.
func TestCLIMatchesPi16(t *testing.T) {
	o := oracle.Start(t)
	eachCorpusSession(t, func(t *testing.T, cf oracle.CorpusFile, f *session.File, entries []*session.Entry) {
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = e.ID
		}
		leaves, leafArgs := cliLeaves(entries), func(li int) []string { return []string{"--leaf", ids[li]} }
		if f.MigratedFrom == 1 {
			// v1 ids are invented anew at each load: only Pi's default leaf can be named.
			leaves, leafArgs = []int{len(entries) - 1}, func(int) []string { return nil }
		}
		for _, li := range leaves {
			if !cf.Safe(li) {
				continue
			}
			var want struct {
				Messages      []json.RawMessage `json:"messages"`
				ThinkingLevel json.RawMessage   `json:"thinkingLevel"`
				Model         json.RawMessage   `json:"model"`
				Projected     json.RawMessage   `json:"projectedTokens"`
				IDs           []string          `json:"ids"`
			}
			o.Query(t, map[string]any{"op": "context", "file": cf.Path, "leafIndex": li}, &want)
			var got struct {
				Messages      []json.RawMessage `json:"messages"`
				ThinkingLevel json.RawMessage   `json:"thinkingLevel"`
				Model         json.RawMessage   `json:"model"`
				Tokens        json.RawMessage   `json:"tokens"`
			}
			cli(t, &got, append([]string{"context", cf.Path, "--json"}, leafArgs(li)...)...)
			oracle.SameJSON(t, "context messages", got.Messages, want.Messages, ids, want.IDs)
			oracle.SameJSON(t, "thinkingLevel", got.ThinkingLevel, want.ThinkingLevel, ids, want.IDs)
			oracle.SameJSON(t, "model", got.Model, want.Model, ids, want.IDs)
			oracle.SameJSON(t, "tokens", got.Tokens, want.Projected, ids, want.IDs)

			var files, piFiles struct {
				ReadFiles     []string `json:"readFiles"`
				ModifiedFiles []string `json:"modifiedFiles"`
			}
			o.Query(t, map[string]any{"op": "files", "file": cf.Path, "leafIndex": li}, &piFiles)
			cli(t, &files, append([]string{"files", cf.Path, "--json"}, leafArgs(li)...)...)
			oracle.SameJSON(t, "files", files, piFiles, ids, want.IDs)
		}
		var tree struct {
			Roots json.RawMessage `json:"roots"`
		}
		var piTree struct {
			Roots json.RawMessage `json:"roots"`
			IDs   []string        `json:"ids"`
		}
		o.Query(t, map[string]any{"op": "tree", "file": cf.Path}, &piTree)
		if string(piTree.Roots) == "null" || !cf.Safe(len(ids)-1) || f.MigratedFrom == 1 {
			return // too deep to nest, or Pi would loop
		}
		cli(t, &tree, "tree", cf.Path, "--json")
		oracle.SameJSON(t, "tree", tree.Roots, piTree.Roots, ids, piTree.IDs)
	})
}

// eachCorpusSession runs test as a subtest on every corpus file that pi-lsp opens (it
// skips the others), with the loaded file and its entries in file order.
func eachCorpusSession(t *testing.T, test func(t *testing.T, cf oracle.CorpusFile, f *session.File, entries []*session.Entry)) {
	for _, cf := range oracle.Corpus(t) {
		t.Run(cf.Name, func(t *testing.T) {
			f, err := session.Load(cf.Path)
			if err != nil {
				t.Skipf("not a session pi-lsp opens: %v", err)
			}
			test(t, cf, f, session.NewIndex(f).Entries())
		})
	}
}

// cliLeaves: every entry of a small file, a spread of a large one, and the entry before
// each compaction and each context_edit.
func cliLeaves(entries []*session.Entry) []int {
	n := len(entries)
	seen := map[int]bool{}
	var out []int
	add := func(i int) {
		if i >= 0 && i < n && !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	step := 1
	if n > 60 {
		step = n / 30
	}
	for i := 0; i < n; i += step {
		add(i)
	}
	add(n - 1)
	for i, e := range entries {
		switch e.Type {
		case session.TypeCompaction:
			add(i - 1)
		case session.TypeContextEdit:
			add(i)
		}
	}
	return out
}

// cli runs a subcommand in process and decodes its JSON output.
func cli(t *testing.T, out any, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("pi-lsp %v: exit %d: %s", args, code, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("pi-lsp %v: %v: %.300s", args, err, stdout.String())
	}
}
