package compaction_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The failure patterns of the extractive summarizer found by the quality benchmark
// (internal/quality, docs/QUALITY.md), one test each; every one of them failed on the
// summarizer before its rewrite.

// decode reads the messages of JSON lines, one or more an argument (a step below is
// two: the call and its result).
func decode(t *testing.T, lines ...string) []*session.Message {
	t.Helper()
	var out []*session.Message
	for _, raw := range lines {
		for _, line := range strings.Split(raw, "\n") {
			m, err := session.DecodeMessage([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

func toolFailure(id, name, text string) string {
	return mustJSON(map[string]any{"role": "toolResult", "toolCallId": id, "toolName": name,
		"content": []any{map[string]any{"type": "text", "text": text}}, "isError": true, "timestamp": 1760000000002})
}

func bashCall(id, command string) map[string]any {
	return toolCall(id, "bash", map[string]any{"command": command})
}

func editCall(id, path string) map[string]any {
	return toolCall(id, "edit", map[string]any{"path": path, "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}})
}

// The steps of the agent, each a call and its result as two JSON lines, the result
// answering the call by its id.

// ran is a bash command the agent runs without a word, and its output.
func ran(id, command, output string) string {
	return assistantMsg("", bashCall(id, command)) + "\n" + toolResult(id, "bash", output)
}

// ranFailing is ran for a command that fails with output.
func ranFailing(id, command, output string) string {
	return assistantMsg("", bashCall(id, command)) + "\n" + toolFailure(id, "bash", output)
}

// edited is an edit of path, with what the agent says as it makes it, that succeeds.
func edited(id, say, path string) string {
	return assistantMsg(say, editCall(id, path)) + "\n" + toolResult(id, "edit", "Successfully replaced 1 block(s) in "+path+".")
}

func summarize(t *testing.T, kind compaction.Kind, msgs []*session.Message) map[string]string {
	t.Helper()
	r, err := compaction.Extractive{}.Summarize(context.Background(), compaction.Request{Kind: kind, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if kind == compaction.KindTurnPrefix {
		return map[string]string{"text": r.Text}
	}
	if kind == compaction.KindBranch {
		return branchSections(t, r.Text)
	}
	return sections(t, r.Text)
}

// wantIn fails the test for each of wants that section sec of the summary s lacks.
func wantIn(t *testing.T, s map[string]string, sec string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s[sec], w) {
			t.Errorf("%s lacks %q:\n%s", sec, w, s[sec])
		}
	}
}

// wantNotIn fails the test for each of bad that section sec of the summary s holds.
func wantNotIn(t *testing.T, s map[string]string, sec string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(s[sec], b) {
			t.Errorf("%s holds %q:\n%s", sec, b, s[sec])
		}
	}
}

// branchSections is sections for a branch summary (no Critical Context).
func branchSections(t *testing.T, text string) map[string]string {
	t.Helper()
	return sections(t, text+"\n\n## Critical Context\n-")
}

// A span that ends in the middle of the work reads as unfinished: the request is in
// progress with its last step, and Done holds outcomes (files changed, a check that
// passes), not one "Ran `cmd`" per tool call.
func TestExtractiveMidTaskIsInProgress(t *testing.T) {
	msgs := decode(t,
		userMsg("Rename Config.Timeout to Config.RequestTimeout in every package."),
		assistantMsg("Finding the uses.", bashCall("c1", "rg -n 'Timeout' --type go")),
		toolResult("c1", "bash", "server/config.go:12:\tTimeout time.Duration\nserver/http.go:40:\tc.Timeout\nclient/dial.go:9:\tcfg.Timeout\nworker/run.go:77:\tcfg.Timeout"),
		assistantMsg("Renaming the field and its use in server/http.go.", editCall("c2", "server/config.go"), editCall("c3", "server/http.go")),
		toolResult("c2", "edit", "Successfully replaced 1 block(s) in server/config.go."),
		toolResult("c3", "edit", "Successfully replaced 1 block(s) in server/http.go."),
		ran("c4", "go build ./server/", "(no output)"),
		edited("c5", "The server package builds.", "client/dial.go"),
	)
	s := summarize(t, compaction.KindHistory, msgs)
	if !strings.Contains(s["In Progress"], "- [ ] Rename Config.Timeout to Config.RequestTimeout in every package.") ||
		!strings.Contains(s["In Progress"], "Last step: edited `client/dial.go`") {
		t.Errorf("In Progress:\n%s", s["In Progress"])
	}
	wantNotIn(t, s, "Done", "Ran `", "Read `", "(no result yet)")
	wantIn(t, s, "Done", "- [x] Edited `server/config.go`: Renaming the field and its use in server/http.go.", "- [x] `go build ./server/` passes")
	wantNotIn(t, s, "Next Steps", "Continue from the kept messages")
}

// The goal is what the user asked, without the harness's text around it (a
// <system-reminder>, a skill's block); the latest of several requests is kept and
// marked, in the history and in a turn prefix.
func TestExtractiveGoalSkipsHarnessText(t *testing.T) {
	ask := "<system-reminder>\nThe user's TODO list is empty. Do not mention this to the user.\n</system-reminder>\n\n" +
		"<skill name=\"go-testing\" location=\"/home/u/.pi/agent/skills/go-testing/SKILL.md\">\nReferences are relative to /home/u/.pi/agent/skills/go-testing.\n\nUse table tests.\n</skill>\n\n" +
		"Add a --json flag to the status command in cmd/status.go."
	msgs := decode(t,
		userMsg(ask), assistantMsg("Done: `status --json` prints the status as JSON."),
		userMsg("Now add a --quiet flag."), assistantMsg("Added `--quiet`."),
		userMsg("And a --no-color flag."), assistantMsg("Added `--no-color`."),
		userMsg("Finally make --json imply --no-color."), assistantMsg("`--json` now implies `--no-color`."),
	)
	s := summarize(t, compaction.KindHistory, msgs)
	wantNotIn(t, s, "Goal", "system-reminder", "TODO list", "References are relative", "<skill")
	if !strings.HasPrefix(s["Goal"], "- Add a --json flag to the status command in cmd/status.go.\n") ||
		!strings.HasSuffix(s["Goal"], "\n- Latest request: Finally make --json imply --no-color.") {
		t.Errorf("Goal:\n%s", s["Goal"])
	}
	p := summarize(t, compaction.KindTurnPrefix, decode(t, userMsg(ask), assistantMsg("Reading it.", toolCall("r1", "read", map[string]any{"path": "cmd/status.go"}))))["text"]
	if !strings.HasPrefix(p, "## Original Request\nAdd a --json flag to the status command in cmd/status.go.\n\n") {
		t.Errorf("turn prefix:\n%s", p)
	}
}

// A failure fixed later is not current: it is neither Blocked nor a live error; the
// check's last run says it passes.
func TestExtractiveStaleErrorIsNotCurrent(t *testing.T) {
	msgs := decode(t,
		userMsg("Fix the failing test in ./parse."),
		ranFailing("t1", "go test ./parse/", "--- FAIL: TestSplit (0.00s)\n    split_test.go:14: got 3 fields, want 4\nFAIL\nFAIL\tgithub.com/x/parse\t0.003s\n\nCommand exited with code 1"),
		edited("e1", "Off by one in Split.", "parse/split.go"),
		ran("t2", "go test ./parse/", "ok  \tgithub.com/x/parse\t0.004s"),
		assistantMsg("Fixed: TestSplit passes."),
	)
	s := summarize(t, compaction.KindHistory, msgs)
	if s["Blocked"] != "(none)" {
		t.Errorf("Blocked:\n%s", s["Blocked"])
	}
	if strings.Contains(s["Critical Context"], "FAIL") || strings.Contains(s["In Progress"], "FAIL") {
		t.Errorf("the fixed failure is presented as current:\n%s\n%s", s["In Progress"], s["Critical Context"])
	}
	wantIn(t, s, "Done", "- [x] `go test ./parse/` passes (ok github.com/x/parse 0.004s); it had failed with: --- FAIL: TestSplit (0.00s) split_test.go:14: got 3 fields, want 4")
}

// The span of a session in each scenario, and what its summary must say and must not
// say, by section.
type scenario struct {
	name        string
	msgs        []string
	want, never map[string][]string
}

func runScenarios(t *testing.T, cases []scenario) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := summarize(t, compaction.KindHistory, decode(t, c.msgs...))
			for sec, w := range c.want {
				wantIn(t, s, sec, w...)
			}
			for sec, b := range c.never {
				wantNotIn(t, s, sec, b...)
			}
		})
	}
}

func TestExtractiveScenarios(t *testing.T) {
	runScenarios(t, []scenario{
		// A constraint stated in the middle of the session ("stop doing X", "leave Y
		// alone", "use Z only") is a constraint, as much as one stated first.
		{name: "late constraints", msgs: []string{
			userMsg("Add a dark mode toggle to the settings page."),
			edited("e1", "Adding it with inline styles.", "src/Settings.tsx"),
			userMsg("Stop adding inline styles. Leave the legacy theme file alone. Use the CSS modules only."),
			assistantMsg("Understood."),
		}, want: map[string][]string{
			"Constraints & Preferences": {"- Stop adding inline styles.", "- Leave the legacy theme file alone.", "- Use the CSS modules only."},
		}},
		// The assistant's own plan is the next steps: the steps it has not done yet, not
		// "Continue from the kept messages".
		{name: "next steps follow the stated plan", msgs: []string{
			userMsg("Add cursor pagination to GET /v1/orders."),
			edited("e1", "Plan:\n1. Add `limit` and `cursor` to the request in api/orders.go.\n2. Page by (created_at, id) in store/orders.go.\n3. Document the parameters in api/openapi.yaml.\n4. Add tests in store/orders_test.go.", "api/orders.go"),
			edited("e2", "Step 2.", "store/orders.go"),
			assistantMsg("Steps 1 and 2 are done."),
		}, want: map[string][]string{
			"Next Steps": {"Document the parameters in api/openapi.yaml.", "Add tests in store/orders_test.go."},
		}, never: map[string][]string{
			"Next Steps": {"api/orders.go", "Continue from the kept messages"},
		}},
		// A failure still open at the end is Blocked, with the line that says what failed
		// (not the command's banner); a reply that failed is Blocked too.
		{name: "live failure is blocked", msgs: []string{
			userMsg("Make the API tests pass."),
			ranFailing("t1", "npm test", "> api@1.4.0 test\n> jest\n\nFAIL src/orders.test.ts\n  ● GET /orders › returns 200\n    expect(received).toBe(expected)\n    Expected: 200\n    Received: 500\nTests: 1 failed, 12 passed, 13 total\n\nCommand exited with code 1"),
			assistantMsg("The handler throws on an empty cart; looking at it."),
			userMsg("go on"),
			mustJSON(map[string]any{"role": "assistant", "content": []any{}, "api": "openai-completions", "provider": "fake", "model": "fake-model",
				"usage": map[string]any{"input": 1, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1}, "stopReason": "error", "errorMessage": "529 overloaded_error", "timestamp": 1}),
		}, want: map[string][]string{
			"Blocked":    {"- `npm test` fails: Tests: 1 failed, 12 passed, 13 total", "- The last reply failed: 529 overloaded_error"},
			"Next Steps": {"Fix the failure of `npm test`, then run it again"},
		}},
	})
}

// Outcomes are kept with their exact entities (the PR merged, the pod that came up), and
// a long command is never cut inside its backticks.
func TestExtractiveKeepsOutcomesAndWholeEntities(t *testing.T) {
	long := "kubectl -n staging set image deploy/web web=registry.example.com/web:2.8.1 sidecar=registry.example.com/envoy:1.29.3 && kubectl -n staging annotate deploy/web kubernetes.io/change-cause='web 2.8.1 with envoy 1.29.3 and the new readiness probe' --overwrite"
	msgs := decode(t,
		userMsg("Merge PR 412 and roll web 2.8.1 out to staging."),
		ran("m1", "gh pr merge 412 --squash", "✓ Squashed and merged pull request acme/web#412 (Readiness probe)\n✓ Deleted branch probe"),
		assistantMsg("", bashCall("k1", long)),
		toolResult("k1", "bash", "deployment.apps/web image updated\ndeployment.apps/web annotated"),
		ran("k2", "kubectl -n staging get pods -l app=web", "NAME                   READY   STATUS    RESTARTS   AGE\nweb-5d8c7b9f4-h2x9p    1/1     Running   0          40s"),
	)
	r, err := compaction.Extractive{}.Summarize(context.Background(), compaction.Request{Kind: compaction.KindHistory, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"✓ Squashed and merged pull request acme/web#412 (Readiness probe)", "web-5d8c7b9f4-h2x9p 1/1 Running"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.Text)
		}
	}
	for _, line := range strings.Split(r.Text, "\n") {
		if strings.Count(line, "`")%2 != 0 || strings.Contains(line, "…`") {
			t.Errorf("an entity is cut: %q", line)
		}
	}
}
