package branch

import (
	"reflect"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// tags are the first two characters of each message's text (or summary).
func tags(messages []*session.Message) []string {
	out := []string{}
	for _, m := range messages {
		s := m.Text("")
		if m.Role == session.RoleBranchSummary || m.Role == session.RoleCompactionSummary {
			s = m.SummaryText()
		}
		if len(s) > 2 {
			s = s[:2]
		}
		out = append(out, s)
	}
	return out
}

// pi-behavior.md §14.2 item 3: [u0, C, u1, a1, tr(4000), u2] at 100 tokens each, the
// tool result skipped.
func TestPrepareBudgetTable(t *testing.T) {
	path := writeSession(t,
		user("u0", "", chars("u0", 400)),
		compactionLine("C", "u0", chars("C!", 400), "u0", nil, false),
		user("u1", "C", chars("u1", 400)),
		asst("a1", "u1", chars("a1", 400)),
		toolResult("tr", "a1", chars("tr", 16000)),
		user("u2", "tr", chars("u2", 400)),
	)
	entries := sessiontest.Index(t, path).Path("u2")
	all := []string{"u0", "C!", "u1", "a1", "u2"}
	for _, tc := range []struct {
		budget int
		tags   []string
		total  int
	}{
		{0, all, 500},
		{500, all, 500},
		{-1, all, 500},
		{250, []string{"a1", "u2"}, 200},
		{300, []string{"u1", "a1", "u2"}, 300},
		{350, []string{"C!", "u1", "a1", "u2"}, 400},
		{399, []string{"C!", "u1", "a1", "u2"}, 400},
		{400, []string{"C!", "u1", "a1", "u2"}, 400},
		{450, []string{"C!", "u1", "a1", "u2"}, 400},
		{50, []string{}, 0},
	} {
		p := Prepare(entries, tc.budget)
		if got := tags(p.Messages); !reflect.DeepEqual(got, tc.tags) || p.TotalTokens != tc.total {
			t.Errorf("budget %d: %v total %d, want %v total %d", tc.budget, got, p.TotalTokens, tc.tags, tc.total)
		}
	}
}

// §14.2 item 4: a branch summary that breaks the budget is still kept while the total is
// under 90% of it.
func TestPrepareSummaryException(t *testing.T) {
	path := writeSession(t,
		branchSummaryLine("bs", "", chars("bs", 800), nil, false),
		user("u1", "bs", chars("u1", 400)),
		asst("a1", "u1", chars("a1", 400)),
	)
	p := Prepare(sessiontest.Index(t, path).Path("a1"), 250)
	if got := tags(p.Messages); !reflect.DeepEqual(got, []string{"bs", "u1", "a1"}) || p.TotalTokens != 400 {
		t.Errorf("got %v total %d, want [bs u1 a1] total 400", got, p.TotalTokens)
	}
}

// T15: branch-summary details are merged whatever the budget, tool calls only as far
// as the walk goes; hook summaries and (in Pi) compactions contribute no details.
func TestPrepareFileOpsCollectionLimit(t *testing.T) {
	path := writeSession(t,
		asst("a", "", "reading", toolCall{"read", "beyond-budget.ts"}),
		branchSummaryLine("bs", "a", "s", details([]string{"bs-read"}, []string{"bs-mod"}), false),
		branchSummaryLine("hk", "bs", "h", details([]string{"hook-read"}, []string{"hook-mod"}), true),
		compactionLine("cp", "hk", "c", "a", details([]string{"comp-read"}, []string{"comp-mod"}), false),
		compactionLine("ch", "cp", "c", "a", details([]string{"comp-hook-read"}, nil), true),
		user("u", "ch", chars("u", 404)),
	)
	entries := sessiontest.Index(t, path).Path("u")
	for _, tc := range []struct {
		name       string
		budget     int
		accumulate bool
		messages   int
		read, mod  []string
	}{
		{"pi budget 50", 50, false, 0, []string{"bs-read"}, []string{"bs-mod"}},
		{"pi no budget", 0, false, 6, []string{"beyond-budget.ts", "bs-read"}, []string{"bs-mod"}},
		{"pi-lsp budget 50", 50, true, 0, []string{"bs-read", "comp-read"}, []string{"bs-mod", "comp-mod"}},
		{"pi-lsp no budget", 0, true, 6, []string{"beyond-budget.ts", "bs-read", "comp-read"}, []string{"bs-mod", "comp-mod"}},
	} {
		p := PrepareWith(entries, tc.budget, PrepareOptions{AccumulateCompactionDetails: tc.accumulate})
		read, mod := p.FileOps.Lists()
		if len(p.Messages) != tc.messages || !reflect.DeepEqual(read, tc.read) || !reflect.DeepEqual(mod, tc.mod) {
			t.Errorf("%s: %d messages, read %v, modified %v; want %d, %v, %v", tc.name, len(p.Messages), read, mod, tc.messages, tc.read, tc.mod)
		}
	}
}

// Entries that contribute no message (labels, custom, settings) are skipped; custom
// messages and bash executions count.
func TestPrepareSkipsNonMessages(t *testing.T) {
	path := writeSession(t,
		user("u", "", "hello"),
		labelLine("l", "u", "u", "x"),
		line{"type": "custom", "id": "c", "parentId": "l", "customType": "ext", "data": map[string]any{"k": 1}},
		line{"type": "thinking_level_change", "id": "t", "parentId": "c", "thinkingLevel": "high"},
		customMessage("cm", "t", "custom text"),
		toolResult("tr", "cm", "result"),
	)
	p := Prepare(sessiontest.Index(t, path).Path("tr"), 0)
	if got := texts(p.Messages); !reflect.DeepEqual(got, []string{"user:hello", "custom:custom text"}) {
		t.Errorf("messages %v", got)
	}
}
