package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// TestPreviewEditCommitCompaction: a preview gives the draft summary; the user edits it;
// committing writes exactly the edited text, marked as edited.
func TestPreviewEditCommitCompaction(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"}, InitOptions: map[string]any{"keepRecentTokens": 60}})
	path := e.Sessions["full-main"]
	before, _ := os.ReadFile(path)
	prev, err := e.PreviewCompaction(map[string]any{"instructions": "focus on tests"})
	if err != nil {
		t.Fatal(err)
	}
	if prev.SpanKey == "" || !strings.Contains(prev.Summary, "## Goal") || prev.TokensAfter >= prev.TokensBefore {
		t.Fatalf("preview: %+v", prev)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("a preview wrote to the session")
	}
	edited := prev.Summary + "\n\n## Note from the user\nKeep the CLI flags stable."
	if _, err := e.CommitCompaction(map[string]any{"summary": edited, "spanKey": prev.SpanKey, "instructions": "focus on tests"}); err != nil {
		t.Fatal(err)
	}
	last := sessiontest.Last(t, path)
	c := last.Compaction()
	if last.Type != session.TypeCompaction || c.Summary != edited || c.FirstKeptEntryID != prev.FirstKeptEntryID {
		t.Fatalf("committed entry %s", last.Raw())
	}
	var details struct{ Edited bool }
	json.Unmarshal(last.RawField("details"), &details)
	if !details.Edited {
		t.Fatalf("details not marked edited: %s", last.RawField("details"))
	}
	// A second commit of the same preview no longer matches the session.
	_, err = e.CommitCompaction(map[string]any{"summary": edited, "spanKey": prev.SpanKey})
	if ce, ok := err.(*lsptest.CallError); !ok || ce.Code != -32801 {
		if ce == nil || ce.Kind() != "alreadyCompacted" {
			t.Fatalf("stale commit: %v", err)
		}
	}
}

// TestPreviewAndCommitBranchSummary previews a branch summary, edits it, and navigates
// with the edited text.
func TestPreviewAndCommitBranchSummary(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"}})
	path := e.Sessions["full-main"]
	ix := sessiontest.Index(t, path)
	var target string
	for _, en := range ix.Path(ix.LeafID()) {
		if en.Role() == session.RoleAssistant {
			target = en.ID // the first assistant message
			break
		}
	}
	prev, err := e.PreviewBranchSummary(map[string]any{"targetId": target})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(prev.Summary, "The user explored a different conversation branch") {
		t.Fatalf("preview: %+v", prev)
	}
	edited := prev.Summary + "\n- remember: the second branch was abandoned on purpose"
	if _, err := e.Navigate(map[string]any{"targetId": target, "summarize": true, "summary": edited}); err != nil {
		t.Fatal(err)
	}
	last := sessiontest.Last(t, path)
	b := last.BranchSummary()
	if last.Type != session.TypeBranchSummary || b.Summary != edited || last.ParentID != target {
		t.Fatalf("entry %s", last.Raw())
	}
	var details struct{ Edited bool }
	json.Unmarshal(last.RawField("details"), &details)
	if !details.Edited {
		t.Fatal("branch summary not marked edited")
	}
}

// TestPinnedMessageIsQuotedAndProtected pins a user message through the server; the next
// compaction quotes it; pins are listed in previews.
func TestPinnedMessageIsQuotedAndProtected(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"}, InitOptions: map[string]any{"keepRecentTokens": 60}})
	path := e.Sessions["full-main"]
	users := sessiontest.UserMessages(sessiontest.Index(t, path))
	if len(users) == 0 {
		t.Fatal("no user message")
	}
	pinID, pinText := users[len(users)-1].ID, users[len(users)-1].Text
	if _, err := e.Command("pi.pin", map[string]any{"entryId": pinID}); err != nil {
		t.Fatal(err)
	}
	raw, err := e.Call("pi/compact", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sessiontest.Last(t, path).Compaction().Summary, pinText) {
		t.Fatalf("pinned text not quoted: %s", raw)
	}
	if _, err := e.Call("pi/pin", map[string]any{"entryId": "nope"}); err == nil {
		t.Fatal("pinning an unknown entry succeeded")
	}
}

// TestStaleFileIsFlagged changes a file the agent read and waits for pi/fileOps to list it.
func TestStaleFileIsFlagged(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"}})
	notes := filepath.Join(e.Workspace, "notes.txt")
	if err := os.WriteFile(notes, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readAt := time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05.000Z")
	lines := []string{
		`{"type":"session","version":3,"id":"stale-test","timestamp":"2026-01-01T00:00:00.000Z","cwd":` + quote(e.Workspace) + `}`,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"read notes","timestamp":1}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"notes.txt"}}],"stopReason":"toolUse","timestamp":2}}`,
		`{"type":"message","id":"t1","parentId":"a1","timestamp":"` + readAt + `","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"alpha\n"}],"isError":false,"timestamp":3}}`,
	}
	path := filepath.Join(e.SessionDir, "2026-01-01T00-00-00-000Z_stale-test.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Call("pi/selectSession", map[string]any{"path": path}); err != nil {
		t.Fatal(err)
	}
	// Same content as what was read: not stale even though the mtime is newer.
	raw, err := e.Call("pi/files", map[string]any{})
	if err != nil || !strings.Contains(string(raw), `"stale":[]`) {
		t.Fatalf("unchanged file flagged: %s %v", raw, err)
	}
	mark := e.Mark()
	if err := os.WriteFile(notes, []byte("changed after the agent read it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Await(10*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/fileOps", "notes.txt is stale", func(p json.RawMessage) bool {
		var v struct {
			Stale []struct{ Path, Reason string }
		}
		json.Unmarshal(p, &v)
		for _, s := range v.Stale {
			if s.Path == "notes.txt" && s.Reason == "modified" {
				return true
			}
		}
		return false
	})))
	raw, err = e.Call("pi/files", map[string]any{})
	if err != nil || !strings.Contains(string(raw), `"stale":[{"path":"notes.txt"`) {
		t.Fatalf("pi/files: %s %v", raw, err)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestBackgroundDraftMakesCompactionInstant: with drafts enabled, past the soft threshold
// the server drafts the summary in the background; the compaction then commits without a
// model call.
func TestBackgroundDraftMakesCompactionInstant(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"},
		InitOptions: map[string]any{"summarizer": "openai", "baseUrl": llm.URL, "model": "m", "apiKeyEnv": "PI_LSP_TEST_KEY",
			"keepRecentTokens": 60, "contextWindow": 17500, "drafts": true},
		Options: rpc.Options{DraftDelay: 10 * time.Millisecond, SoftThreshold: 0.01}})
	e.Await(20*time.Second, lsptest.NotificationMatching("pi/draftReady", "a draft", func(json.RawMessage) bool { return true }))
	n := llm.Requests.Load()
	start := time.Now()
	if _, err := e.Call("pi/compact", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if got := llm.Requests.Load(); got != n {
		t.Fatalf("the compaction asked the model again (%d → %d requests)", n, got)
	}
	t.Logf("compaction with a ready draft took %v", time.Since(start))
	if sessiontest.Last(t, e.Sessions["full-main"]).Type != session.TypeCompaction {
		t.Fatal("no compaction written")
	}
}
