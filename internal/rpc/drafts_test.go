package rpc_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// Background drafts: no request reaches the model unless the client enables them; a
// ready draft makes the next compaction need no model call.

// draftEnv is a server configured with the fake model as its summarizer and a session
// far past the soft threshold, so that any session change would start a draft at once
// if drafts ran.
func draftEnv(t *testing.T, llm *fakemodel.Summarizer, extra map[string]any) *lsptest.Env {
	t.Helper()
	return lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"},
		InitOptions: lsptest.Merge(llm.Config(), map[string]any{"keepRecentTokens": 60, "contextWindow": 17500}, extra),
		Options:     rpc.Options{DraftDelay: 10 * time.Millisecond, SoftThreshold: 0.01}})
}

// openAndChange selects the session and labels its first entry: an open and a change,
// each of which makes the server look at the session again.
func openAndChange(t *testing.T, e *lsptest.Env) {
	t.Helper()
	path := e.Sessions["full-main"]
	if _, err := e.Call("pi/selectSession", map[string]any{"path": path}); err != nil {
		t.Fatal(err)
	}
	mark := e.Mark()
	root := sessiontest.Index(t, path).Entries()[0].ID
	if _, err := e.Call("pi/label", map[string]any{"entryId": root, "label": "privacy"}); err != nil {
		t.Fatal(err)
	}
	e.Await(10*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/contextUsage", "the state after the label", func(json.RawMessage) bool { return true })))
}

// TestNoModelRequestUnlessDraftsEnabled: a server with a model endpoint configured sends
// nothing to it on its own (after initialize, an open and a change of the session) until
// the client enables background drafts; with drafts on, a draft reaches the endpoint.
func TestNoModelRequestUnlessDraftsEnabled(t *testing.T) {
	t.Run("off by default", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e := draftEnv(t, llm, nil)
		openAndChange(t, e)
		time.Sleep(500 * time.Millisecond) // 50 times the draft delay
		if n := llm.Requests.Load(); n != 0 {
			t.Fatalf("%d requests reached the model without a job or drafts", n)
		}
		if got := e.Notifications("pi/draftReady"); len(got) != 0 {
			t.Fatalf("a draft was made: %v", got)
		}
		// A job the user asks for does reach it.
		if _, err := e.Call("pi/compact", map[string]any{}); err != nil {
			t.Fatal(err)
		}
		if llm.Requests.Load() == 0 {
			t.Fatal("the compaction did not use the configured model")
		}
	})
	t.Run("drafts false", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e := draftEnv(t, llm, map[string]any{"drafts": false})
		openAndChange(t, e)
		time.Sleep(500 * time.Millisecond)
		if n := llm.Requests.Load(); n != 0 {
			t.Fatalf("%d requests reached the model with drafts: false", n)
		}
	})
	t.Run("drafts true", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e := draftEnv(t, llm, map[string]any{"drafts": true})
		e.Await(20*time.Second, lsptest.NotificationMatching("pi/draftReady", "a draft", func(json.RawMessage) bool { return true }))
		if llm.Requests.Load() == 0 {
			t.Fatal("a draft was announced without a request to the model")
		}
	})
	t.Run("enabled later in VS Code's settings", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e := draftEnv(t, llm, nil)
		openAndChange(t, e)
		if n := llm.Requests.Load(); n != 0 {
			t.Fatalf("%d requests before drafts were enabled", n)
		}
		e.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"piLsp": map[string]any{"summarizer": map[string]any{"drafts": true}}}})
		e.Await(20*time.Second, lsptest.NotificationMatching("pi/draftReady", "a draft after drafts were enabled", func(json.RawMessage) bool { return true }))
		if llm.Requests.Load() == 0 {
			t.Fatal("a draft was announced without a request to the model")
		}
	})
}

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
