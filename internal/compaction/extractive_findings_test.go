package compaction_test

import (
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
)

// Environment errors, in the shape of long agent runs in a sandbox: the search tool is
// not installed (tried twice), the package index is not reachable; the agent works
// around both and ends on a real failing test. The missing tool and the network are said
// once, in Critical Context; Blocked holds the test, not the environment.
func TestExtractiveEnvironmentErrorsSaidOnce(t *testing.T) {
	s := summarize(t, compaction.KindHistory, decode(t,
		userMsg("find why the invoice totals are off by a cent and fix it"),
		assistantMsg("Searching for the rounding code.", bashCall("b1", "rg -n 'round' billing/")),
		toolFailure("b1", "bash", "/bin/bash: line 1: rg: command not found\n\nCommand exited with code 127"),
		ranFailing("b2", "rg -n 'Round' billing/invoice.py", "/bin/bash: line 1: rg: command not found\n\nCommand exited with code 127"),
		ranFailing("b3", "pip install pytest-cov", "WARNING: Retrying after connection broken\nERROR: Could not find a version that satisfies the requirement pytest-cov\nsocket.gaierror: [Errno -3] Temporary failure in name resolution\n\nCommand exited with code 1"),
		ranFailing("b4", "python -m pytest billing/test_invoice.py -q", "FAILED billing/test_invoice.py::test_total_rounds_half_up - assert Decimal('10.01') == Decimal('10.00')\n1 failed, 7 passed in 0.31s\n\nCommand exited with code 1"),
	))
	crit := s["Critical Context"]
	if strings.Count(crit, "rg: command not found") != 1 {
		t.Errorf("the missing tool is not said exactly once in Critical Context:\n%s", crit)
	}
	if !strings.Contains(crit, "Temporary failure in name resolution") {
		t.Errorf("the unreachable network is not in Critical Context:\n%s", crit)
	}
	for _, sec := range []string{"Blocked", "Next Steps", "In Progress"} {
		if strings.Contains(s[sec], "command not found") || strings.Contains(s[sec], "name resolution") || strings.Contains(s[sec], "pip install") {
			t.Errorf("%s repeats an environment error as work:\n%s", sec, s[sec])
		}
	}
	wantIn(t, s, "Blocked", "test_total_rounds_half_up")
}

// Ids the agent typed, in the shape of a run that looks records up in a catalogue and
// fetches two of them by hash through an MCP tool, then watches a CI run and opens a
// pull request: the hashes, the run id and the pull request's number are kept with their
// role; a count or a port in the same calls is no id.
func TestExtractiveKeepsTypedIDsWithTheirRole(t *testing.T) {
	s := summarize(t, compaction.KindHistory, decode(t,
		userMsg("fetch the two style guides we picked and check the docs build with them"),
		assistantMsg("Fetching both by the hashes the search gave.",
			toolCall("m1", "mcp__library__download", map[string]any{"hash": "5e0c2a9d41f7b8e3a6c1d2f09b8a7e61", "title": "House style, 3rd edition", "format": "epub"}),
			toolCall("m2", "mcp__library__download", map[string]any{"hash": "c47d19e0a2b35f86e1d07a9c3b24f5e8", "title": "Markup conventions", "format": "pdf", "limit": "20"})),
		toolResult("m1", "mcp__library__download", "saved to downloads/house-style.epub"),
		toolResult("m2", "mcp__library__download", "saved to downloads/markup.pdf"),
		ran("b1", "gh run view 88123457 --log-failed | tail -40", "docs-build  link check  All 312 links OK"),
		ran("b2", "gh pr create --fill --base main", "https://github.com/example/handbook/pull/214"),
		assistantMsg("The docs build passes with both guides; the pull request is open."),
	))
	all := s["Done"] + "\n" + s["Critical Context"]
	for _, want := range []string{"5e0c2a9d41f7b8e3a6c1d2f09b8a7e61", "c47d19e0a2b35f86e1d07a9c3b24f5e8", "88123457", "#214"} {
		if !strings.Contains(all, want) {
			t.Errorf("the id %s the agent used is lost:\n%s", want, all)
		}
	}
	wantIn(t, s, "Critical Context", "hash for `mcp__library__download`: `5e0c2a9d41f7b8e3a6c1d2f09b8a7e61` (House style, 3rd edition)")
	if !strings.Contains(all, "pull request opened") {
		t.Errorf("the pull request's number is not said to be one it opened:\n%s", all)
	}
	if strings.Contains(s["Critical Context"], "`20`") || strings.Contains(s["Critical Context"], "312") {
		t.Errorf("numbers that are no ids reached Critical Context:\n%s", s["Critical Context"])
	}
}

// A finding in the middle of an investigation, in the shape of a long debugging run: the
// assistant states the cause in a message that also makes calls, goes on to fix it, and
// ends on a short report of the fix. The cause stays in the checkpoint; a plan in the
// middle is no finding.
func TestExtractiveKeepsFindingsOfEveryMessage(t *testing.T) {
	s := summarize(t, compaction.KindHistory, decode(t,
		userMsg("nightly exports sometimes contain another customer's rows, find out why"),
		assistantMsg("Reading the exporter.", toolCall("r1", "read", map[string]any{"path": "exporter/cache.go"})),
		toolResult("r1", "read", "func key(q Query) string { return q.Table + q.Range }"),
		assistantMsg("The root cause is the cache key: it is built from the table and the date range only, so two customers exporting the same range share one entry. I'll look at who else calls key() next.",
			bashCall("b1", "grep -rn 'key(' exporter/")),
		toolResult("b1", "bash", "exporter/cache.go:12: func key(q Query) string\nexporter/run.go:40: e := c.get(key(q))"),
		assistantMsg("Only the runner uses it.", editCall("e1", "exporter/cache.go")),
		toolResult("e1", "edit", "Successfully replaced text in exporter/cache.go."),
		ran("b2", "go test ./exporter/", "ok  example.test/exporter 0.3s"),
		assistantMsg("Fixed: the key now starts with the customer, and the exporter tests pass."),
	))
	wantIn(t, s, "Critical Context", "two customers exporting the same range share one entry")
	wantNotIn(t, s, "Critical Context", "who else calls")
}
