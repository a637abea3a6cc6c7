package quality

import (
	"os"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

func spanOf(t *testing.T, s *Script) []*session.Message {
	t.Helper()
	f, err := session.Parse(s.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	ix := session.NewIndex(f)
	var out []*session.Message
	for _, e := range ix.Path(ix.LeafID()) {
		if m := session.MessageOf(e); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// The probes are derived from the span by code: requests without harness text and
// pasted logs, files modified, the failure the span ends on (reads after it aside), the
// last stated intent, the open todo items, the ids typed, the last action, and the
// failures moved past.
func TestDeriveFacts(t *testing.T) {
	s := NewScript("probe-facts", "/srv/app")
	s.User("<system-reminder>house rules</system-reminder>\nmake the invoice export include the tax column")
	s.Do("", Tool("TodoWrite", []kv{{"todos", []any{
		map[string]any{"content": "Add the tax column", "status": "completed"},
		map[string]any{"content": "Update the CSV fixtures", "status": "in_progress"},
		map[string]any{"content": "Rerun the export job", "status": "pending"}}}}, "ok", false))
	s.Do("", Edit("export/invoice.go", "cols := base", "cols := append(base, tax)"))
	s.Do("", ShFail("go test ./export/", "--- FAIL: TestInvoiceCSV", 1))
	s.Do("", Sh("go test ./export/", "ok"))
	s.Do("", Sh("git show 3f9c2ab1 --stat", "1 file changed"))
	s.User(strings.Repeat("2026-01-02 10:00:01 INFO export row ok\n", 8))
	s.Do("Now I'll regenerate the CSV fixtures from the new export.", ShFail("make fixtures", "make: *** No rule to make target 'fixtures'", 2))
	s.Do("", Read("Makefile", "all: build"))
	f := DeriveFacts(spanOf(t, s))
	if len(f.Requests) != 1 || f.Requests[0] != "make the invoice export include the tax column" {
		t.Errorf("requests = %q", f.Requests)
	}
	if len(f.Modified) != 1 || f.Modified[0] != "export/invoice.go" {
		t.Errorf("modified = %q", f.Modified)
	}
	if f.OpenFail != "make fixtures" {
		t.Errorf("open failure = %q (a read after it leaves it open)", f.OpenFail)
	}
	if !strings.Contains(f.Intent, "regenerate the CSV fixtures") {
		t.Errorf("intent = %q", f.Intent)
	}
	if strings.Join(f.OpenTodos, "|") != "Update the CSV fixtures|Rerun the export job" {
		t.Errorf("open todos = %q", f.OpenTodos)
	}
	if len(f.IDs) != 1 || f.IDs[0] != "3f9c2ab1" {
		t.Errorf("ids = %q", f.IDs)
	}
	if f.LastAction != "Makefile" {
		t.Errorf("last action = %q", f.LastAction)
	}
	if len(f.Resolved) != 1 || f.Resolved[0] != "go test" {
		t.Errorf("resolved = %q", f.Resolved)
	}

	good := "## Goal\nMake the invoice export include the tax column.\n\n## Progress\n### Done\n- [x] Added the tax column in `export/invoice.go`; `go test ./export/` passes (`git show 3f9c2ab1`)\n\n### In Progress\n- [ ] Update the CSV fixtures: `make fixtures` fails (no such target); read the Makefile\n\n### Blocked\n(none)\n\n## Next Steps\n1. Regenerate the CSV fixtures from the new export\n2. Rerun the export job\n"
	for _, p := range ScoreProbes(f, good) {
		if p.Score < 1 {
			t.Errorf("a good summary misses probe %s: %v", p.Name, p.Missed)
		}
	}
	bare := "## Goal\n(none)\n\n## Progress\n### Done\n- [x] Work\n\n## Next Steps\n1. Continue"
	for _, p := range ScoreProbes(f, bare) {
		if p.Score >= 1 {
			t.Errorf("a bare summary passes probe %s", p.Name)
		}
	}
	if st := StaleIssues(f, "## Progress\n### Blocked\n- `go test ./export/` fails: TestInvoiceCSV\n"); len(st) != 1 {
		t.Errorf("a fixed failure under Blocked is not stale: %v", st)
	}
	if st := StaleIssues(f, "## Progress\n### Blocked\n- `make fixtures` fails: no rule\n"); len(st) != 0 {
		t.Errorf("the open failure is called stale: %v", st)
	}
}

// The clean-output guard finds each kind of mess and passes a clean summary.
func TestCleanIssues(t *testing.T) {
	bad := map[string]string{
		"harness text":       "## Progress\n### Done\n- [x] Shell cwd was reset to /srv/app\n",
		"unbalanced":         "## Progress\n### Done\n- [x] ran `secret-get --name TOKEN)\n",
		"cut command":        "## Progress\n### Done\n- [x] ran `TOKEN=$(secret-get --name TOKEN`\n",
		"double bullet":      "## Progress\n### Done\n- [x] - Moved the files\n",
		"heading as an item": "## Progress\n### Done\n- [x] ### Summary\n",
		"table row":          "## Progress\n### Done\n- [x] | --- | --- |\n",
		"bold lead-in":       "## Progress\n### Done\n- [x] **What's done:**\n",
		"pasted log":         "## Goal\n2026-01-02 10:00:01 ERROR worker died\n",
		"long line":          "## Goal\n" + strings.Repeat("word ", 90) + "\n",
	}
	for name, s := range bad {
		if len(CleanIssues(s)) == 0 {
			t.Errorf("%s: not found in %q", name, s)
		}
	}
	clean := "## Goal\nFix the export.\n\n## Progress\n### Done\n- [x] `go test ./export/` passes\n- [x] **Tax column**: added\n\n## Next Steps\n1. Rerun `make export`\n"
	if issues := CleanIssues(clean); len(issues) > 0 {
		t.Errorf("a clean summary is flagged: %v", issues)
	}
}

// The held-out quarter is fixed by the sources alone.
func TestRealHeldOutQuarter(t *testing.T) {
	src := RealSources()
	held := 0
	for _, s := range src {
		if s.HeldOut {
			held++
		}
	}
	if held != (len(src)+3)/4 {
		t.Errorf("%d of %d held out, want a quarter", held, len(src))
	}
}

// The example session of `make demo` is the one DemoSession writes.
func TestDemoSessionIsCurrent(t *testing.T) {
	shipped, err := os.ReadFile("../../cmd/pi-lsp/example/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if string(shipped) != string(DemoSession()) {
		t.Fatal("cmd/pi-lsp/example/session.jsonl is stale: go run ./tools/quality -demo cmd/pi-lsp/example/session.jsonl")
	}
	if _, err := session.Parse(shipped); err != nil {
		t.Fatal(err)
	}
}
