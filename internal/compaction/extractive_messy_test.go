package compaction_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Behaviours of the extractive summarizer on messy work, each in the shape of what real
// sessions (long agent runs converted from other harnesses, Pi's own sessions) showed,
// written here in other words.

func todoCall(id string, items ...[2]string) map[string]any {
	var list []any
	for _, it := range items {
		list = append(list, map[string]any{"content": it[0], "status": it[1], "activeForm": it[0]})
	}
	return toolCall(id, "TodoWrite", map[string]any{"todos": list})
}

// A long autonomous run has no user message in its span: the goal is inferred from the
// todo list (the item in progress), marked as inferred; the list's completed items are
// Done, the item in progress is In Progress, the pending ones are the Next Steps; the
// todo tool's own calls are no work items.
func TestExtractiveReadsTodoTools(t *testing.T) {
	s := summarize(t, compaction.KindHistory, decode(t,
		assistantMsg("Setting up the list.", todoCall("t1",
			[2]string{"Add the retry budget to the uploader", "completed"},
			[2]string{"Cover the budget with a unit test", "in_progress"},
			[2]string{"Document the new UPLOAD_RETRIES setting", "pending"})),
		toolResult("t1", "TodoWrite", "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress."),
		ran("b1", "go test ./uploader/ -run TestBudget", "ok  example.test/uploader 0.4s"),
	))
	if !strings.Contains(s["Goal"], "inferred") || !strings.Contains(s["Goal"], "Cover the budget with a unit test") {
		t.Errorf("Goal is not inferred from the todo in progress:\n%s", s["Goal"])
	}
	wantIn(t, s, "Done", "Add the retry budget to the uploader")
	wantIn(t, s, "In Progress", "Cover the budget with a unit test")
	wantIn(t, s, "Next Steps", "Document the new UPLOAD_RETRIES setting")
	for _, sec := range []string{"Done", "Critical Context", "Key Decisions"} {
		if strings.Contains(s[sec], "TodoWrite") || strings.Contains(strings.ToLower(s[sec]), "todos have been modified") {
			t.Errorf("%s holds the todo tool's bookkeeping:\n%s", sec, s[sec])
		}
	}
}

func TestExtractiveMessyScenarios(t *testing.T) {
	runScenarios(t, []scenario{
		// TaskCreate and TaskUpdate build the list one task at a time.
		{name: "task tools", msgs: []string{
			userMsg("migrate the billing cron jobs to the new scheduler"),
			assistantMsg("", toolCall("c1", "TaskCreate", map[string]any{"subject": "Port the invoice cron", "description": "x"}),
				toolCall("c2", "TaskCreate", map[string]any{"subject": "Port the dunning cron", "description": "y"})),
			toolResult("c1", "TaskCreate", "Task #1 created successfully"),
			toolResult("c2", "TaskCreate", "Task #2 created successfully"),
			assistantMsg("", toolCall("u1", "TaskUpdate", map[string]any{"taskId": "1", "status": "completed"}),
				toolCall("u2", "TaskUpdate", map[string]any{"taskId": "2", "status": "in_progress"})),
			toolResult("u1", "TaskUpdate", "Updated task #1 status"),
			toolResult("u2", "TaskUpdate", "Updated task #2 status"),
		}, want: map[string][]string{"Done": {"Port the invoice cron"}, "In Progress": {"Port the dunning cron"}}},
		// Without a request or a todo list, the goal is the assistant's latest stated
		// intent, marked as inferred, never the placeholder.
		{name: "goal inferred from intent", msgs: []string{
			assistantMsg("I'll trace why the nightly export writes empty files, starting from the exporter's config.",
				toolCall("r1", "read", map[string]any{"path": "export/config.yaml"})),
			toolResult("r1", "read", "batch: 0\n"),
		}, want: map[string][]string{"Goal": {"inferred", "nightly export writes empty files"}}},
		// A failure is open only while it is the last thing that happened to its target:
		// an inline script that fails and a corrected one that works leave nothing
		// blocked.
		{name: "failure moved past is not blocked", msgs: []string{
			userMsg("count the rows per shard in the staging database"),
			ranFailing("b1", "python -c \"\nimport db\nprint(db.connect().shards())\n\"", "Traceback (most recent call last):\nAttributeError: 'Conn' object has no attribute 'shards'\n\nCommand exited with code 1"),
			ran("b2", "python -c \"\nimport db\nprint(db.connect().list_shards())\n\"", "shard-a 1200\nshard-b 980"),
			assistantMsg("Shard a holds 1200 rows and shard b 980."),
		}, never: map[string][]string{"Blocked": {"AttributeError"}}},
		// The harness's note that the user interrupted a reply is an interruption, not
		// the latest request.
		{name: "interrupt is no request", msgs: []string{
			userMsg("rebuild the search index for the docs site"),
			ran("b1", "npm run index:rebuild", "indexing 1/4000"),
			userMsg("[Request interrupted by user for tool use]"),
		}, want: map[string][]string{"Goal": {"rebuild the search index"}},
			never: map[string][]string{"Goal": {"interrupted"}, "Blocked": {"interrupted"}}},
		// A task handed to another agent is one "Delegated:" line, not its prompt's
		// steps.
		{name: "delegated task is one line", msgs: []string{
			userMsg("find every place we parse dates by hand"),
			assistantMsg("", toolCall("k1", "Task", map[string]any{"description": "Survey hand-written date parsing",
				"prompt": "1. Grep for strptime\n2. Then list each call site\n3. Once done, propose a helper", "subagent_type": "Explore"})),
			toolResult("k1", "Task", "Found 7 call sites in billing/ and reports/."),
			assistantMsg("Seven call sites parse dates by hand, all in billing/ and reports/."),
		}, want: map[string][]string{"Done": {"Delegated: Survey hand-written date parsing (Explore)"}},
			never: map[string][]string{"Done": {"propose a helper", "Grep for strptime"}}},
	})
}

// Harness text in assistant text and tool results never becomes an item: a cwd reset
// notice, a system reminder, a background-task notification.
func TestExtractiveLeavesHarnessTextOut(t *testing.T) {
	s := summarize(t, compaction.KindHistory, decode(t,
		userMsg("restart the worker and check it stays up"),
		assistantMsg("<system-reminder>Remember the house style.</system-reminder>\nRestarting it.", bashCall("b1", "systemctl restart worker")),
		toolResult("b1", "bash", "Shell cwd was reset to /home/dev/app"),
		assistantMsg("[SYSTEM NOTIFICATION - background task 7a1 finished]\nThe worker is active (running) since the restart."),
	))
	all := strings.ToLower(strings.Join([]string{s["Goal"], s["Done"], s["In Progress"], s["Blocked"], s["Key Decisions"], s["Next Steps"], s["Critical Context"]}, "\n"))
	for _, h := range []string{"system-reminder", "shell cwd was reset", "[system notification"} {
		if strings.Contains(all, h) {
			t.Errorf("harness text %q in the checkpoint:\n%s", h, all)
		}
	}
}

// An assistant's report with headings, bold lead-ins, nested lists and a table gives
// items without any of them.
func TestExtractiveReportStructureIsNoItem(t *testing.T) {
	report := "## Summary of the fix\n\n**What changed:**\n- - Cache keys now include the locale\n\n| file | change |\n|---|---|\n| cache/key.go | locale in key |\n\nAll 14 cache tests pass."
	s := summarize(t, compaction.KindHistory, decode(t,
		userMsg("the cache serves English pages to German users, fix it"),
		edited("e1", "", "cache/key.go"),
		assistantMsg(report),
	))
	for _, sec := range []string{"Done", "Key Decisions", "Next Steps", "Critical Context"} {
		for _, line := range strings.Split(s[sec], "\n") {
			item := strings.TrimSpace(strings.TrimLeft(line, "-0123456789. "))
			item = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(item, "[x]"), "[ ]"))
			if strings.HasPrefix(item, "#") || strings.HasPrefix(item, "|") || strings.HasPrefix(item, "- ") || item == "**What changed:**" {
				t.Errorf("%s holds %q", sec, line)
			}
		}
	}
}

// A sentence both reported and planned ("will need …") is a plan: it is a Next Step and
// not Done, and no Next Step repeats a Done item.
func TestExtractiveNoNextStepRepeatsDone(t *testing.T) {
	s := summarize(t, compaction.KindHistory, decode(t,
		userMsg("bump the api image to 2.3.1 in staging only"),
		edited("e1", "", "deploy/staging/api.yaml"),
		assistantMsg("Staging runs api 2.3.1 now. Production will need the same bump once staging has soaked."),
	))
	for _, n := range strings.Split(s["Next Steps"], "\n") {
		item := strings.TrimSpace(strings.TrimLeft(n, "0123456789. "))
		if item != "" && strings.Contains(s["Done"], item) {
			t.Errorf("Next Step %q repeats a Done item:\n%s", item, s["Done"])
		}
	}
	wantNotIn(t, s, "Done", "will need")
}

// The history part of a split turn sees the turn prefix after it: a question the user
// answered there and a failure fixed there are not left open in the history part.
func TestExtractiveSplitTurnHistorySeesPrefix(t *testing.T) {
	history := decode(t,
		userMsg("get the frontend build green again"),
		ranFailing("b1", "npm run build", "ERROR in ./src/app.ts: Module not found: Error: Can't resolve 'legacy-polyfills'\n\nCommand exited with code 1"),
		assistantMsg("The build needs legacy-polyfills, which was removed. Shall I drop the import from src/app.ts?"),
	)
	prefix := decode(t,
		userMsg("yes, drop it and rebuild"),
		edited("e1", "", "src/app.ts"),
		ran("b2", "npm run build", "webpack compiled successfully"),
	)
	run := func(later []*session.Message) string {
		r, err := compaction.Extractive{}.Summarize(context.Background(), compaction.Request{Kind: compaction.KindHistory, Messages: history, Later: later})
		if err != nil {
			t.Fatal(err)
		}
		return sections(t, r.Text)["Blocked"]
	}
	if alone := run(nil); !strings.Contains(alone, "legacy-polyfills") && !strings.Contains(alone, "Shall I") {
		t.Fatalf("without the prefix the history part should show the open state:\n%s", alone)
	}
	if b := run(prefix); strings.Contains(b, "legacy-polyfills") || strings.Contains(b, "Waiting for the user") {
		t.Errorf("settled in the turn prefix, still open in the history part:\n%s", b)
	}
}
