package branch

import (
	"context"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/secrets"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

func messageLine(id, parent string, m map[string]any) line {
	l := base("message", id, parent)
	l["message"] = m
	return l
}

func bashCall(id, parent, command string) line {
	return messageLine(id, parent, map[string]any{
		"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Running it."},
			map[string]any{"type": "toolCall", "id": "call_1", "name": "bash", "arguments": map[string]any{"command": command}}},
		"api": "openai-completions", "provider": "fake", "model": "fake-model",
		"usage":      map[string]any{"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
		"stopReason": "toolUse", "timestamp": 2,
	})
}

func bashResult(id, parent, text string) line {
	return messageLine(id, parent, map[string]any{"role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
		"content": textContent(text), "isError": false, "timestamp": 3})
}

// The places a secret is planted in the branch being left: lines after a1. (A tool's
// result, an error line included, is not part of what Pi sends for a branch summary:
// the tool call stands for it.)
var branchSecretPlaces = []struct {
	name  string
	lines func(s secrets.Secret) []line
}{
	{"user text", func(s secrets.Secret) []line {
		return []line{user("p1", "a1", "Deploy with this, you must keep it: "+s.Use), asst("p2", "p1", "Understood, deploying now.")}
	}},
	{"bash tool call", func(s secrets.Secret) []line {
		return []line{user("p1", "a1", "run the deploy script"), bashCall("p2", "p1", s.Use), bashResult("p3", "p2", "ok"),
			asst("p4", "p3", "Deployed.")}
	}},
	{"user bash command", func(s secrets.Secret) []line {
		return []line{messageLine("p1", "a1", map[string]any{"role": "bashExecution", "command": s.Use, "output": "ok\n", "exitCode": 0,
			"cancelled": false, "truncated": false, "timestamp": 4}), user("p2", "p1", "that worked"), asst("p3", "p2", "Good.")}
	}},
}

func branchSecretSession(t *testing.T, planted []line) string {
	return writeSession(t, append([]line{user("u1", "", "start"), asst("a1", "u1", "ok")}, planted...)...)
}

// Leaving a branch that holds a secret of each kind (in the user's text, a bash command
// the model ran, one the user ran) writes a branch summary that holds none of them; a
// secret the summary quotes is there as its redaction marker. The extractive
// summarizer quotes these places, so on code that does not redact the secrets reach the
// file. The request to the summarizer is left as Pi builds it.
func TestBranchSummaryRedactsSecrets(t *testing.T) {
	quoted, n := map[string]bool{}, 0
	for _, place := range branchSecretPlaces {
		for _, s := range secrets.All() {
			path := branchSecretSession(t, place.lines(s))
			before := sessiontest.Read(t, path)
			res, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a1", NavigateOptions{Summarize: true, Summarizer: compaction.Extractive{}})
			if err != nil {
				t.Fatalf("%s, %s: %v", place.name, s.Kind, err)
			}
			added := appended(t, path, before)
			if len(added) == 0 || added[0].Type != "branch_summary" {
				t.Fatalf("%s, %s: no branch summary written", place.name, s.Kind)
			}
			written := string(sessiontest.Read(t, path)[len(before):])
			secrets.NoLeak(t, place.name+", "+s.Kind+": the entries written", written)
			summary, _ := field(t, added[0], "summary").(string)
			if strings.Contains(summary, redact.Marker(redact.Kind(s.Kind))) {
				quoted[s.Kind] = true
				n++
			}
			if res.Summary == nil || res.Summary.Text != summary {
				t.Errorf("%s, %s: the generated summary is not the one written", place.name, s.Kind)
			} else if res.Summary.Request == nil || s.Leak(res.Summary.Request.Conversation) == "" {
				t.Errorf("%s, %s: the request sent to the summarizer was changed", place.name, s.Kind)
			}
		}
	}
	if !t.Failed() {
		t.Logf("RESULT secrets in branch summaries: %d secrets of %d kinds in %d places, %d quoted (as markers), 0 leaked",
			len(secrets.All()), len(redact.Kinds()), len(branchSecretPlaces), n)
	}
	// The test checks something for every kind: some summary quoted it.
	for _, k := range redact.Kinds() {
		if !quoted[string(k)] {
			t.Errorf("premise: no summary quotes the planted %s from any place", k)
		}
	}
}

// An edited summary, and one from the hook, are written redacted too.
func TestBranchSummaryRedactsGivenText(t *testing.T) {
	var text strings.Builder
	for _, s := range secrets.All() {
		text.WriteString("- " + s.Use + "\n")
	}
	for _, opt := range []NavigateOptions{
		{Summarize: true, EditedSummary: text.String()},
		{Summarize: true, Summarizer: compaction.Extractive{}, Hook: func(context.Context, *Preparation) (HookDecision, error) {
			return HookDecision{Summary: &HookSummary{Text: text.String()}}, nil
		}},
	} {
		path := branchSecretSession(t, []line{user("p1", "a1", "more"), asst("p2", "p1", "done")})
		before := sessiontest.Read(t, path)
		if _, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), "a1", opt); err != nil {
			t.Fatal(err)
		}
		secrets.NoLeak(t, "the entries written", string(sessiontest.Read(t, path)[len(before):]))
	}
}
