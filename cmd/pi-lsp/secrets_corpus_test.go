package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/secrets"
)

// The secret corpus: every planted form (secrets.All: the forms, one token of
// each format of the rule tables, and the earlier kinds) is written into a session in
// the user's and the assistant's text, a tool call's arguments, its result, an error
// line and a command the user ran; then no output of pi-lsp holds any 12-character piece
// of it: the compaction entry appended and the branch summary entry (extractive
// summarizer), the coverage list (compact --dry-run --coverage), the placeholders
// clear-tool-output writes, the CLI's human and --json output and its stderr, and every
// byte the LSP server writes (answers and notifications) for a preview, a compaction, a
// navigation with a summary (to the first answer: what comes after it, the tool call
// included, is summarized) and a clear. A summary does quote the secrets: the markers
// of the corpus's kinds are found in what was written, so the test checks something.
func TestSecretCorpusLeavesThroughNoOutput(t *testing.T) {
	isolate.Setup(t)
	all := secrets.All()
	if len(all) < 40 {
		t.Fatalf("premise: a corpus of %d forms", len(all))
	}
	var wire lsptest.SyncBuffer
	e := lsptest.NewEnv(t, lsptest.Config{Wire: &wire,
		InitOptions: map[string]any{"summarizer": "extractive", "keepRecentTokens": 100, "drafts": false}})
	dir := t.TempDir()
	markers := map[string]bool{}
	for i, s := range all {
		wireFrom := len(wire.String()) // what the server wrote for the sessions before this one is not this one's
		p := secrets.WriteSession(t, dir, i, s)
		copyOf := func(name string) string {
			data, err := os.ReadFile(p.Path)
			if err != nil {
				t.Fatal(err)
			}
			q := filepath.Join(t.TempDir(), filepath.Base(p.Path))
			if err := os.WriteFile(q, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return q
		}
		// check runs a CLI command and checks its stdout, its stderr and what it
		// appended to the file.
		check := func(what, path string, args ...string) {
			before, _ := os.ReadFile(path)
			code, out, errOut := runCLI(t, append([]string{args[0], path}, args[1:]...)...)
			after, _ := os.ReadFile(path)
			if code != 0 {
				t.Errorf("%s, %s: exit %d: %s", s.Kind, what, code, errOut)
			}
			written := string(after[min(len(before), len(after)):])
			for _, o := range []struct{ name, text string }{{"stdout", out}, {"stderr", errOut}, {"the lines appended", written}} {
				if w := s.Leak(o.text); w != "" {
					t.Errorf("%s (%s): %s of %s holds %q:\n%.600s", s.Kind, s.Use, o.name, what, w, o.text)
				}
			}
			for _, k := range redact.Kinds() {
				if strings.Contains(written+out, redact.Marker(k)) {
					markers[string(k)] = true
				}
			}
		}
		check("compact --dry-run --coverage", p.Path, "compact", "--dry-run", "--coverage", "--keep-recent", "100", "--summarizer", "extractive")
		check("compact --dry-run --coverage --json", p.Path, "compact", "--dry-run", "--coverage", "--keep-recent", "100", "--summarizer", "extractive", "--json")
		check("compact", copyOf("c"), "compact", "--keep-recent", "100", "--summarizer", "extractive")
		check("compact --json", copyOf("cj"), "compact", "--keep-recent", "100", "--summarizer", "extractive", "--json")
		check("navigate --summarize", copyOf("n"), "navigate", p.Answer, "--summarize", "--summarizer", "extractive")
		check("navigate --summarize --json", copyOf("nj"), "navigate", p.Answer, "--summarize", "--summarizer", "extractive", "--json")
		check("clear-tool-output", copyOf("k"), "clear-tool-output", "--keep-recent-tokens", "50", "--min-tokens", "10")
		check("clear-tool-output --json", copyOf("kj"), "clear-tool-output", "--keep-recent-tokens", "50", "--min-tokens", "10", "--json")

		// The same jobs through the server, on a copy in its sessions folder.
		lp := filepath.Join(e.SessionDir, filepath.Base(p.Path))
		data, _ := os.ReadFile(p.Path)
		if err := os.MkdirAll(e.SessionDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(lp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := e.PreviewCompaction(map[string]any{"session": lp}); err != nil {
			t.Errorf("%s: preview: %v", s.Kind, err)
		}
		if _, err := e.ClearToolOutput(map[string]any{"session": lp, "keepRecentTokens": 50, "minTokens": 10}); err != nil {
			t.Errorf("%s: clear: %v", s.Kind, err)
		}
		if _, err := e.Navigate(map[string]any{"session": lp, "targetId": p.Answer, "summarize": true}); err != nil {
			t.Errorf("%s: navigate: %v", s.Kind, err)
		}
		if _, err := e.Compact(map[string]any{"session": lp, "leafId": p.IDs[len(p.IDs)-1]}); err != nil {
			t.Errorf("%s: compact: %v", s.Kind, err)
		}
		wrote := wire.String()[wireFrom:]
		if w := s.Leak(wrote); w != "" {
			i := strings.Index(wrote, w)
			t.Errorf("%s (%s): the server wrote %q: …%s…", s.Kind, s.Use, w, wrote[max(0, i-300):min(len(wrote), i+100)])
		}
		if after, _ := os.ReadFile(lp); true {
			if w := s.Leak(string(after[len(data):])); w != "" {
				t.Errorf("%s: the server appended %q", s.Kind, w)
			}
		}
	}
	for _, k := range redact.Kinds() {
		if !markers[string(k)] {
			t.Errorf("premise: no output quotes the planted %s (as its marker): the test checks nothing for it", k)
		}
	}
	if !t.Failed() {
		t.Logf("RESULT secret corpus: %d forms of %d kinds (%d rules) in 6 places of a session; 8 CLI outputs and 4 LSP jobs each; 0 leaked",
			len(all), len(markers), redact.RuleCount())
	}
}
