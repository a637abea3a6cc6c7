package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

// bigToolOutput is a genuine Pi 1.6.0 session whose tool results are made large (each
// its own text), so that old ones are worth clearing.
func bigToolOutput(t *testing.T) string {
	t.Helper()
	p := corpus.Copy(t, "genuine-1.6/system-tools.jsonl")
	corpus.EnlargeToolResults(t, p)
	return p
}

// clear-tool-output replaces old, large tool results with placeholders as Pi 1.6.0's
// context_edit replacements: real Pi builds exactly the context pi-lsp reports after the
// clear and after the restore, the recent window and small results are left alone, a dry
// run writes nothing, and a restore brings back the original context.
func TestClearToolOutputMatchesPi16(t *testing.T) {
	isolate.Setup(t)
	o := oracle.NeedLive(t) // answers about edited temp files have no goldens
	path := bigToolOutput(t)
	var ctx0 struct {
		Messages []json.RawMessage `json:"messages"`
	}
	cli(t, &ctx0, "context", path, "--json")
	before, _ := os.ReadFile(path)

	var plan contextedit.ClearResult
	cli(t, &plan, "clear-tool-output", path, "--dry-run", "--keep-recent-tokens", "3000", "--json")
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("a dry run wrote")
	}
	if len(plan.Cleared) == 0 || plan.Saved <= 0 {
		t.Fatalf("dry run cleared nothing: %+v", plan)
	}
	var res contextedit.ClearResult
	cli(t, &res, "clear-tool-output", path, "--keep-recent-tokens", "3000", "--json")
	if len(res.Cleared) != len(plan.Cleared) || res.Saved != plan.Saved {
		t.Fatalf("cleared %d (saved %d), the dry run said %d (%d)", len(res.Cleared), res.Saved, len(plan.Cleared), plan.Saved)
	}
	// The newest results (the recent window) keep their output.
	sizes := contextSize(t, path)
	cleared, untouched := 0, 0
	for _, m := range sizes.Messages {
		if m.Role == "toolResult" {
			if m.ContextEdit == "replaced" {
				cleared++
			} else {
				untouched++
			}
		}
	}
	if cleared != len(res.Cleared) || untouched == 0 {
		t.Errorf("%d results replaced, %d untouched; want %d replaced and the recent ones untouched", cleared, untouched, len(res.Cleared))
	}

	msgs, _ := sameContextAsPi(t, o, path, "clear")
	placeholders := 0
	for _, m := range msgs {
		if strings.Contains(string(m), contextedit.ClearedMarker) {
			placeholders++
		}
	}
	if placeholders != len(res.Cleared) {
		t.Errorf("%d placeholders in Pi's context, want %d", placeholders, len(res.Cleared))
	}

	// One restored on its own, then all the others at once.
	one := res.Cleared[0].EntryID
	var single struct{}
	cli(t, &single, "edit-context", path, one, "--restore", "--json")
	var all contextedit.ClearResult
	cli(t, &all, "clear-tool-output", path, "--restore", "--json")
	if len(all.Cleared) != len(res.Cleared)-1 {
		t.Errorf("restore-all restored %d, want %d", len(all.Cleared), len(res.Cleared)-1)
	}
	restored, _ := sameContextAsPi(t, o, path, "restore")
	a, _ := json.Marshal(restored)
	b, _ := json.Marshal(ctx0.Messages)
	if !bytes.Equal(a, b) {
		t.Error("the context after restoring everything is not the original")
	}
	// Nothing is deleted: every byte before the clear is still the file's start.
	if after, _ := os.ReadFile(path); !bytes.HasPrefix(after, before) {
		t.Error("the file was rewritten")
	}
}

// Small results and the recent window are never cleared; a placeholder is never larger.
func TestClearToolOutputLeavesSmallAndRecentResults(t *testing.T) {
	path := isolatedCopy(t, "genuine-1.6/system-tools.jsonl") // tool results of a few tokens
	code, out, _ := runCLI(t, "clear-tool-output", path, "--keep-recent-tokens", "1", "--min-tokens", "1")
	if code != 0 || !strings.Contains(out, "nothing to clear") {
		t.Fatalf("exit %d: %s", code, out)
	}
	big := bigToolOutput(t)
	code, out, _ = runCLI(t, "clear-tool-output", big, "--dry-run") // the whole context is within 20000 tokens
	if code != 0 || !strings.Contains(out, "nothing to clear") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if code, _, _ := runCLI(t, "clear-tool-output", big, "--restore", "--dry-run"); code != 2 {
		t.Errorf("--restore --dry-run: exit %d, want 2", code)
	}
}
