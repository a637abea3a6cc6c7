package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// TestCompactHooks: with experimental.pi.hooks the client decides before compacting.
func TestCompactHooks(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		var asked json.RawMessage
		e, path := compactEnv(t, llm, lsptest.Config{ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
				asked = p
				return map[string]any{"cancel": true}, nil
			}}})
		before := sessiontest.Read(t, path)
		_, err := e.Call("pi/compact", map[string]any{"instructions": "focus on files"})
		var ce *lsptest.CallError
		if !errors.As(err, &ce) || ce.Code != rpc.CodeRequestCancelled {
			t.Fatalf("answer %v, want %d", err, rpc.CodeRequestCancelled)
		}
		e.Await(5*time.Second, lsptest.NotificationMatching("pi/compactionEnd", "aborted", lsptest.Has(map[string]any{"aborted": true})), lsptest.CompletedProgress(compactTitle))
		if !bytes.Equal(sessiontest.Read(t, path), before) {
			t.Errorf("the session file changed")
		}
		if n := llm.Requests.Load(); n != 0 {
			t.Errorf("summarizer called %d times", n)
		}
		q := lsptest.Fields(asked)
		prep, _ := q["preparation"].(map[string]any)
		if q["session"] != path || q["reason"] != "manual" || q["customInstructions"] != "focus on files" || prep == nil || prep["firstKeptEntryId"] == nil || prep["conversation"] == "" {
			t.Errorf("pi/beforeCompact params %s", lsptest.Trunc(asked))
		}
	})
	t.Run("summary from the hook", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		const text = "Summary written by the editor hook."
		e, path := compactEnv(t, llm, lsptest.Config{ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
				return map[string]any{"summary": text}, nil
			}}})
		before := sessiontest.Read(t, path)
		if _, err := e.Compact(nil); err != nil {
			t.Fatal(err)
		}
		lines := appended(t, before, path)
		if len(lines) != 1 || lines[0]["summary"] != text || lines[0]["fromHook"] != true {
			t.Fatalf("appended %v, want one entry with exactly the hook's summary and fromHook true", lines)
		}
		if n := llm.Requests.Load(); n != 0 {
			t.Errorf("summarizer called %d times", n)
		}
	})
	t.Run("retain-none with usage from the hook", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		const text = "Everything so far, in the editor's words."
		e, path := compactEnv(t, llm, lsptest.Config{ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
				if lsptest.Fields(p)["willRetry"] != false {
					t.Errorf("pi/beforeCompact without willRetry: %s", lsptest.Trunc(p))
				}
				return map[string]any{"summary": text, "firstKeptEntryId": nil,
					"usage": map[string]any{"input": 50, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 55,
						"cost": map[string]any{"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3}}}, nil
			}}})
		before := sessiontest.Read(t, path)
		if _, err := e.Compact(nil); err != nil {
			t.Fatal(err)
		}
		lines := appended(t, before, path)
		if len(lines) != 1 || lines[0]["firstKeptEntryId"] != lines[0]["id"] || lines[0]["fromHook"] != true {
			t.Fatalf("appended %v, want a retain-none compaction (firstKeptEntryId its own id, as Pi 1.6.0 writes it)", lines)
		}
		if u, _ := lines[0]["usage"].(map[string]any); u == nil || u["totalTokens"] != float64(55) {
			t.Errorf("the hook's usage is not stored: %v", lines[0]["usage"])
		}
		f, err := session.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		msgs := session.NewIndex(f).BuildContext("").Messages
		if len(msgs) != 1 || msgs[0].Role != session.RoleCompactionSummary {
			t.Errorf("the context after a retain-none compaction is %d messages, want the summary alone", len(msgs))
		}
	})
	t.Run("hook that never answers", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, path := hungHookEnv(t, llm, 300*time.Millisecond)
		before := sessiontest.Read(t, path)
		t0 := time.Now()
		if _, err := e.Compact(nil); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d < 300*time.Millisecond {
			t.Errorf("finished in %v, before the hook timeout", d)
		}
		lines := appended(t, before, path)
		if len(lines) != 1 || lines[0]["fromHook"] != false {
			t.Fatalf("appended %v", lines)
		}
		if n := llm.Requests.Load(); n == 0 {
			t.Errorf("the default summarizer did not run")
		}
		e.Await(time.Second, lsptest.NotificationMatching("window/logMessage", "about the hook", func(p json.RawMessage) bool {
			return strings.Contains(string(p), "pi/beforeCompact")
		}))
	})
	t.Run("hook error", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, path := compactEnv(t, llm, lsptest.Config{ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
				return nil, errors.New("extension crashed")
			}}})
		before := sessiontest.Read(t, path)
		if _, err := e.Compact(nil); err != nil {
			t.Fatal(err)
		}
		if lines := appended(t, before, path); len(lines) != 1 || lines[0]["fromHook"] != false {
			t.Fatalf("appended %v", lines)
		}
	})
	t.Run("not asked without the capability", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, _ := compactEnv(t, llm, lsptest.Config{Hooks: lsptest.Hooks{
			BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
				return map[string]any{"cancel": true}, nil
			}}})
		if _, err := e.Compact(nil); err != nil {
			t.Fatal(err)
		}
		for _, m := range e.Messages() {
			if m.Kind == lsptest.KindCall && m.Method == "pi/beforeCompact" {
				t.Errorf("hook asked although the client did not declare hooks")
			}
		}
	})
}

func TestCompactNothingToCompact(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	e, path := compactEnv(t, llm, lsptest.Config{Corpus: []string{"tree-nav"}, InitOptions: map[string]any{"keepRecentTokens": 20000}})
	before := sessiontest.Read(t, path)
	res, err := e.Compact(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.NothingToCompact {
		t.Errorf("answer %+v", res)
	}
	e.Await(5*time.Second, lsptest.CompletedProgress(compactTitle), lsptest.NotificationMatching("pi/compactionEnd", "not aborted", lsptest.Has(map[string]any{"aborted": false})))
	if !bytes.Equal(sessiontest.Read(t, path), before) {
		t.Errorf("the session file changed")
	}
	if n := llm.Requests.Load(); n != 0 {
		t.Errorf("summarizer called %d times", n)
	}
}

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

// TestCompactionJobWorksOnItsSnapshot: a compaction computes on a snapshot of the
// session taken when it starts. While it waits for its hook, another writer appends to
// the file and the server refreshes its followed index (pi/sessionChanged names the new
// leaf); the job's view does not change with it, so its write is refused as a
// concurrent change (ContentModified) and the file is exactly what the other writer
// left.
func TestCompactionJobWorksOnItsSnapshot(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	var e *lsptest.Env
	var path, line string
	const other = "0e0e0e0e"
	envReady := make(chan struct{})
	first := true
	e, path = compactEnv(t, llm, lsptest.Config{ClientHooks: true, Hooks: lsptest.Hooks{
		BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
			<-envReady
			if first {
				first = false
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					return nil, err
				}
				_, err = f.WriteString(line)
				f.Close()
				if err != nil {
					return nil, err
				}
				// The server follows the file while the job waits: its index now ends
				// at the other writer's entry.
				e.Await(10*time.Second, lsptest.NotificationMatching("pi/sessionChanged", "the other writer's leaf", lsptest.Has(map[string]any{"leafId": other})))
			}
			return map[string]any{"summary": "A summary of the path the job was started on."}, nil
		}}})
	line = fmt.Sprintf(`{"type":"custom","id":%q,"parentId":%q,"timestamp":"2025-01-01T00:00:00.000Z","customType":"another-writer"}`+"\n", other, sessiontest.Last(t, path).ID)
	before := sessiontest.Read(t, path)
	close(envReady)
	_, err := e.Compact(nil)
	var ce *lsptest.CallError
	if !errors.As(err, &ce) || ce.Code != rpc.CodeContentModified {
		t.Fatalf("answer %v, want ContentModified (%d): the session changed while compacting", err, rpc.CodeContentModified)
	}
	if after := sessiontest.Read(t, path); !bytes.Equal(after, append(before, line...)) {
		t.Fatalf("the file is not what the other writer left:\n%s", after[len(before):])
	}
	// The next job takes a snapshot of the session as it now is, and writes.
	res, err := e.Call("pi/compact", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Entry struct {
			ParentID string `json:"parentId"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(res, &c); err != nil || c.Entry.ParentID != other {
		t.Errorf("the second compaction %s: want it on the other writer's entry %s (%v)", lsptest.Trunc(res), other, err)
	}
	if n := llm.Requests.Load(); n != 0 {
		t.Errorf("summarizer called %d times", n)
	}
}
