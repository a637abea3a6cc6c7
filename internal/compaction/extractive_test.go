package compaction_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

var checkpointSections = []string{
	"## Goal\n", "## Constraints & Preferences\n", "## Progress\n### Done\n", "### In Progress\n",
	"### Blocked\n", "## Key Decisions\n", "## Next Steps\n", "## Critical Context\n",
}

// sections splits a checkpoint into its sections' bodies, checking that every section
// is there, in order, and not empty.
func sections(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	pos := 0
	for i, h := range checkpointSections {
		j := strings.Index(text[pos:], h)
		if j < 0 {
			t.Fatalf("section %q missing or out of order in:\n%s", h, text)
		}
		start := pos + j + len(h)
		end := len(text)
		if i+1 < len(checkpointSections) {
			if k := strings.Index(text[start:], checkpointSections[i+1]); k >= 0 {
				end = start + k
			}
		}
		body := strings.TrimSpace(text[start:end])
		if body == "" {
			t.Errorf("section %q is empty", h)
		}
		lines := strings.Split(strings.TrimSpace(h), "\n")
		out[strings.TrimLeft(lines[len(lines)-1], "# ")] = body
		pos = start
	}
	return out
}

func extractiveRun(t *testing.T, path string, keep int, instructions string) *compaction.RunResult {
	t.Helper()
	res, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{
		Options:  compaction.Options{CustomInstructions: instructions},
		Settings: settings(keep, 16384), Summarizer: compaction.Extractive{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The extractive summarizer fills the checkpoint from a genuine session: the goal from
// the user's request, Done from the reply's report, the extension's note, the branch
// explored and the custom focus in Critical Context.
func TestExtractiveFillsEverySection(t *testing.T) {
	t.Run("split turn with tools", func(t *testing.T) {
		path := corpusCopy(t, splitFile)
		res := extractiveRun(t, path, splitKeep, "focus on notes.txt")
		sum := res.Outcome.Summary
		history, prefix, ok := strings.Cut(sum, compaction.SplitTurnSeparator)
		if !ok {
			t.Fatalf("no split-turn separator:\n%s", sum)
		}
		s := sections(t, history)
		if s["Goal"] != "SCRIPT:tools please create notes.txt and check it" {
			t.Errorf("Goal = %q", s["Goal"])
		}
		// The reply's report says what became of notes.txt; its tool calls are not
		// listed one by one.
		if !strings.Contains(s["Done"], "- [x] All done: notes.txt now says beta.") || strings.Contains(s["Done"], "Read `") || strings.Contains(s["Done"], "Ran `") {
			t.Errorf("Done:\n%s", s["Done"])
		}
		// The request was answered: nothing is in progress, and no step asks to finish it.
		if s["In Progress"] != "(none)" || strings.Contains(s["Next Steps"], "Finish") {
			t.Errorf("In Progress = %q, Next Steps = %q", s["In Progress"], s["Next Steps"])
		}
		for _, want := range []string{"- Requested focus: focus on notes.txt", "Files modified so far: notes.txt",
			"- Context note: Custom context note (fixture)", "- A branch explored and left: Fake branch summary of an abandoned branch"} {
			if !strings.Contains(s["Critical Context"], want) {
				t.Errorf("Critical Context lacks %q:\n%s", want, s["Critical Context"])
			}
		}
		if !strings.HasPrefix(prefix, "## Original Request\nSCRIPT:think take a third path\n\n## Progress So Far\n") ||
			!strings.Contains(prefix, "## Context Needed to Continue\n") {
			t.Errorf("turn prefix part:\n%s", prefix)
		}
		if !strings.HasSuffix(sum, "\n\n<modified-files>\nnotes.txt\n</modified-files>") {
			t.Errorf("file block missing:\n%s", sum)
		}
	})
	t.Run("errored last request", func(t *testing.T) {
		path := corpusCopy(t, normalFile)
		s := sections(t, extractiveRun(t, path, normalKeep, "").Outcome.Summary)
		if !strings.HasPrefix(s["Goal"], "- SCRIPT:think a question that needs some thought\n- SCRIPT:chat describe this image") ||
			!strings.HasSuffix(s["Goal"], "\n- Latest request: SCRIPT:fail this request fails upstream") {
			t.Errorf("Goal = %q", s["Goal"])
		}
		// The last request's reply was an error: it is still open, its failure is a
		// blocker, and finishing it is the next step.
		if s["Next Steps"] != "1. Finish the current request: SCRIPT:fail this request fails upstream" {
			t.Errorf("Next Steps = %q", s["Next Steps"])
		}
		wantIn(t, s, "In Progress", "- [ ] SCRIPT:fail this request fails upstream")
		wantIn(t, s, "Blocked", "- The last reply failed: 500 fake upstream failure")
	})
	t.Run("constraints, decisions, blocked", func(t *testing.T) {
		path := corpusCopy(t, normalFile)
		appendMessages(t, path,
			userMsg("Add retries to fetch.go. Never change the public API of package client."),
			assistantMsg("I'll use exponential backoff because the server rate-limits bursts.",
				toolCall("c1", "edit", map[string]any{"path": "client/fetch.go", "edits": []any{}})),
			mustJSON(map[string]any{"role": "toolResult", "toolCallId": "c1", "toolName": "edit",
				"content": []any{map[string]any{"type": "text", "text": "Could not find the exact text in client/fetch.go"}}, "isError": true, "timestamp": 1}),
			assistantMsg("Next I will rerun go test ./client/..."),
			userMsg("go ahead and "+strings.Repeat("run the whole suite carefully ", 25)),
			assistantMsg("Running."))
		res := extractiveRun(t, path, 120, "")
		s := sections(t, res.Outcome.Summary)
		wantIn(t, s, "Constraints & Preferences", "- Never change the public API of package client.")
		// Pi's format: **decision**: rationale.
		wantIn(t, s, "Key Decisions", "- **I'll use exponential backoff**: the server rate-limits bursts.")
		wantIn(t, s, "Blocked", "- Editing `client/fetch.go` failed: Could not find the exact text in client/fetch.go")
		wantIn(t, s, "Next Steps", "Next I will rerun go test ./client/...")
	})
}

// Same input, same bytes.
func TestExtractiveDeterministic(t *testing.T) {
	for _, tc := range []struct {
		file string
		keep int
	}{{splitFile, splitKeep}, {normalFile, normalKeep}, {iterativeFile, iterativeKeep}, {"genuine/tree-nav.jsonl", 20}} {
		a := extractiveRun(t, corpusCopy(t, tc.file), tc.keep, "focus on tests")
		b := extractiveRun(t, corpusCopy(t, tc.file), tc.keep, "focus on tests")
		if a.Outcome.Summary != b.Outcome.Summary {
			t.Errorf("%s: two runs differ:\n%s\n----\n%s", tc.file, a.Outcome.Summary, b.Outcome.Summary)
		}
		if string(mustJSON(a.Outcome.Details)) != string(mustJSON(b.Outcome.Details)) {
			t.Errorf("%s: details differ", tc.file)
		}
		prep := prepareFile(t, corpusCopy(t, tc.file), settings(tc.keep, 16384))
		req := compaction.Request{Kind: compaction.KindHistory, Messages: prep.MessagesToSummarize, PreviousSummary: prep.PreviousSummary, CustomInstructions: "x"}
		r1, _ := compaction.Extractive{}.Summarize(context.Background(), req)
		r2, _ := compaction.Extractive{}.Summarize(context.Background(), req)
		if r1.Text != r2.Text {
			t.Errorf("%s: Summarize differs between calls", tc.file)
		}
	}
}

// A long session: thousands of messages give a summary with every section (how fast is
// BenchmarkExtractive's).
func TestExtractiveLargeConversation(t *testing.T) {
	msgs := largeConversation(t)
	r, err := compaction.Extractive{}.Summarize(context.Background(), compaction.Request{Kind: compaction.KindHistory, Messages: msgs, CustomInstructions: "module7"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d messages, %d bytes", len(msgs), len(r.Text))
	sections(t, r.Text)
}

// BenchmarkExtractive is the extractive summary of a 4,500-message conversation (its time
// is a benchmark's, not a test's: `go test -run '^$' -bench Extractive ./internal/compaction/`).
func BenchmarkExtractive(b *testing.B) {
	msgs := largeConversation(b)
	for b.Loop() {
		if _, err := (compaction.Extractive{}).Summarize(context.Background(), compaction.Request{Kind: compaction.KindHistory, Messages: msgs, CustomInstructions: "module7"}); err != nil {
			b.Fatal(err)
		}
	}
}

// largeConversation is 1,500 turns of a user request, an edit and its result.
func largeConversation(tb testing.TB) []*session.Message {
	var msgs []*session.Message
	for i := range 1500 {
		for _, raw := range []string{
			userMsg(fmt.Sprintf("step %d: please update module%d.go and keep the tests green", i, i)),
			assistantMsg(fmt.Sprintf("Editing module%d.go because the old loop was quadratic.", i),
				toolCall(fmt.Sprintf("c%d", i), "edit", map[string]any{"path": fmt.Sprintf("module%d.go", i)})),
			toolResult(fmt.Sprintf("c%d", i), "edit", strings.Repeat("ok ", 200)),
		} {
			m, err := session.DecodeMessage([]byte(raw))
			if err != nil {
				tb.Fatal(err)
			}
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// A cancelled context stops the extractive summarizer too.
func TestExtractiveHonoursCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := corpusCopy(t, normalFile)
	before := sessiontest.Read(t, path)
	_, err := compaction.Run(ctx, sessiontest.Snapshot(t, path), compaction.RunOptions{Settings: settings(normalKeep, 16384), Summarizer: compaction.Extractive{}})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("error %v", err)
	}
	sameBytes(t, path, before)
}
