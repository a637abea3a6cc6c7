package branch

import (
	"context"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// Pi's branch preparation drops tool results, so the extractive summarizer sees every
// tool call of a branch without its result: such a call is not unfinished work (it was
// marked "In Progress … (no result yet)" with a "Finish: …" step before), the changes
// are done, and the outcome is in the assistant's words.
func TestBranchSummaryCallsWithoutResultsAreNotUnfinished(t *testing.T) {
	bash := func(id, parent, text, command string) line {
		l := base("message", id, parent)
		l["message"] = map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": text},
			map[string]any{"type": "toolCall", "id": id + "-c", "name": "bash", "arguments": map[string]any{"command": command}},
		}, "api": "openai-completions", "provider": "fake", "model": "fake-model",
			"usage": map[string]any{"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}, "stopReason": "toolUse", "timestamp": 2}
		return l
	}
	path := writeSession(t,
		user("u", "", "Try an in-process cache for product lookups instead of Redis."),
		asst("a1", "u", "Adding a ristretto-backed cache behind the cache.Cache interface.", toolCall{"write", "internal/cache/local.go"}),
		toolResult("r1", "a1", "Successfully wrote 812 bytes to internal/cache/local.go"),
		bash("a2", "r1", "Measuring both.", "make bench-products"),
		toolResult("r2", "a2", "BenchmarkLookup/local-8 236 ns/op"),
		asst("a3", "r2", "Lookups take 236 ns with the local cache against 11,874 ns with Redis, but the process RSS grows to 1.84GB."),
		user("u2", "a3", "Too much memory. Let's go back."),
	)
	s, err := Generate(context.Background(), sessiontest.Index(t, path).Path("u2"), compaction.Extractive{}, SummaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text := s.Text
	for _, bad := range []string{"(no result yet)", "Finish:", "Ran `make bench-products`"} {
		if strings.Contains(text, bad) {
			t.Errorf("summary holds %q:\n%s", bad, text)
		}
	}
	inProgress := text[strings.Index(text, "### In Progress\n")+len("### In Progress\n"):]
	if !strings.HasPrefix(inProgress, "(none)\n") {
		t.Errorf("In Progress:\n%s", text)
	}
	for _, want := range []string{
		"- [x] Created `internal/cache/local.go`: Adding a ristretto-backed cache behind the cache.Cache interface.",
		"- [x] Lookups take 236 ns with the local cache against 11,874 ns with Redis, but the process RSS grows to 1.84GB.",
		"\"Too much memory. Let's go back.\"",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
}
