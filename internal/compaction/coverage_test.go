package compaction_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// checkCoverage is compaction.CheckCoverage on a context that is never done.
func checkCoverage(t *testing.T, p *compaction.Preparation, summary string) compaction.Coverage {
	t.Helper()
	c, err := compaction.CheckCoverage(context.Background(), p, summary)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A cancelled check stops with the context's error instead of analysing the range.
func TestCoverageStopsWhenCancelled(t *testing.T) {
	var msgs []*session.Message
	for i := range 200 {
		msgs = append(msgs, decode(t, userMsg(strings.Repeat("Keep the retry policy of client.go. ", 20)+string(rune('a'+i%26))))...)
	}
	p := &compaction.Preparation{MessagesToSummarize: msgs, FileOps: fileops.New()}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := compaction.CheckCoverage(ctx, p, "## Goal\n"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if c := checkCoverage(t, p, "## Goal\n"); len(c.Entities) == 0 {
		t.Fatal("the same range, not cancelled, has no entities")
	}
}

// The coverage check lists the entities of the summarized range a summary lacks, and
// counts a restated constraint or request as carried.
func TestCoverageListsWhatTheSummaryDrops(t *testing.T) {
	msgs := decode(t,
		userMsg("Fix the flaky upload test, see https://ci.example.com/runs/4812 and PR #1234."),
		assistantMsg("Running the test first.", bashCall("c1", "go test ./upload/... -run TestUpload -count=20")),
		toolFailure("c1", "bash", "--- FAIL: TestUpload (0.31s)\nupload_test.go:88: timeout after 300ms"),
		userMsg("Don't touch the retry policy in client.go."),
		assistantMsg("The flake comes from commit 3f9a2c1e: it shortened the timeout.", editCall("c2", "upload/upload.go")),
	)
	ops := fileops.New()
	ops.AddMessages(msgs)
	p := &compaction.Preparation{MessagesToSummarize: msgs, FileOps: ops}

	full := "## Goal\nFix the flaky upload test (https://ci.example.com/runs/4812, PR #1234).\n" +
		"## Constraints & Preferences\n- Do not touch the retry policy in client.go\n" +
		"## Progress\n- `go test ./upload/... -run TestUpload -count=20` failed: --- FAIL: TestUpload (0.31s); cause: commit 3f9a2c1e shortened the timeout; edited upload/upload.go\n"
	c := checkCoverage(t, p, full)
	if len(c.Missing) != 0 || c.Covered != 1 {
		t.Fatalf("a summary that carries everything: missing %+v (covered %v)", c.Missing, c.Covered)
	}
	kinds := map[string]bool{}
	for _, e := range c.Entities {
		kinds[e.Kind] = true
	}
	for _, k := range []string{"file", "command", "error", "url", "id", "constraint", "request"} {
		if !kinds[k] {
			t.Errorf("no %s entity found in %+v", k, c.Entities)
		}
	}

	thin := "## Goal\nFix a test.\n## Progress\n- edited upload/upload.go\n"
	c = checkCoverage(t, p, thin)
	missing := map[string]bool{}
	for _, e := range c.Missing {
		missing[e.Text] = true
	}
	for _, want := range []string{"https://ci.example.com/runs/4812", "#1234", "3f9a2c1e", "go test ./upload/... -run TestUpload -count=20", "--- FAIL: TestUpload (0.31s)", "Don't touch the retry policy in client.go."} {
		if !missing[want] {
			t.Errorf("%q not reported missing from a thin summary (missing: %v)", want, c.Missing)
		}
	}
	if missing["upload/upload.go"] {
		t.Error("a file the summary names is reported missing")
	}
	if c.Covered >= 0.5 {
		t.Errorf("covered %v for a thin summary", c.Covered)
	}
}

// A missing entity names the entry it came from, and a user's words are pinnable (a pin
// quotes them verbatim), so the editors can offer to pin the message that holds it.
func TestCoverageNamesTheEntryOfAMissingEntity(t *testing.T) {
	msgs := decode(t,
		userMsg("Fix the flaky upload test."),
		assistantMsg("Running it.", bashCall("c1", "go test ./upload/... -count=20")),
		userMsg("Never change the retry policy in client.go."),
	)
	ids := []string{"u1", "a1", "u2"}
	var proj []session.ProjectedEntry
	for i, m := range msgs {
		proj = append(proj, session.ProjectedEntry{Entry: &session.Entry{ID: ids[i]}, Messages: []*session.Message{m}})
	}
	ops := fileops.New()
	ops.AddMessages(msgs)
	p := &compaction.Preparation{MessagesToSummarize: msgs, Projected: proj, FileOps: ops}
	c := checkCoverage(t, p, "## Goal\nSomething else.\n")
	got := map[string]compaction.Entity{}
	for _, e := range c.Missing {
		got[e.Kind+":"+e.Text] = e
	}
	cmd := got["command:go test ./upload/... -count=20"]
	if cmd.EntryID != "a1" || cmd.Pinnable {
		t.Errorf("command entity %+v: want entry a1, not pinnable (an assistant message)", cmd)
	}
	var constraint compaction.Entity
	for k, e := range got {
		if strings.HasPrefix(k, "constraint:") {
			constraint = e
		}
	}
	if constraint.EntryID != "u2" || !constraint.Pinnable {
		t.Errorf("constraint entity %+v: want entry u2, pinnable (missing: %+v)", constraint, c.Missing)
	}
}
