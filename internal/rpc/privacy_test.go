package rpc_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

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

// TestAPIKeyEnvMustNameAKey: an apiKeyEnv that does not name a key (HOME, PATH) is refused
// with the variable and the rule in the error, and nothing is sent; a name ending in
// _KEY or _TOKEN is used.
func TestAPIKeyEnvMustNameAKey(t *testing.T) {
	for _, name := range []string{"HOME", "PATH", "AWS_SECRET_ACCESS_KEY_ID", "MY_KEY; rm", "KEY"} {
		t.Run(name, func(t *testing.T) {
			llm := fakemodel.NewSummarizer(t)
			e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"},
				InitOptions: lsptest.Merge(llm.Config(), map[string]any{"apiKeyEnv": name, "keepRecentTokens": 60})})
			path := e.Sessions["full-main"]
			before, _ := os.ReadFile(path)
			_, err := e.Call("pi/compact", map[string]any{})
			var ce *lsptest.CallError
			if !errors.As(err, &ce) || ce.Kind() != "summarizerFailed" {
				t.Fatalf("compaction with apiKeyEnv %q: %v", name, err)
			}
			for _, want := range []string{`"` + name + `"`, "_KEY", "_TOKEN"} {
				if !strings.Contains(ce.Message, want) {
					t.Errorf("error %q does not say %s", ce.Message, want)
				}
			}
			if n := llm.Requests.Load(); n != 0 {
				t.Errorf("%d requests reached the model", n)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("the refused compaction wrote to the session")
			}
		})
	}
	t.Run("a _TOKEN name is used", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		t.Setenv("PI_LSP_PRIVACY_TOKEN", "tok")
		e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"},
			InitOptions: lsptest.Merge(llm.Config(), map[string]any{"apiKeyEnv": "PI_LSP_PRIVACY_TOKEN", "keepRecentTokens": 60})})
		if _, err := e.Call("pi/compact", map[string]any{}); err != nil {
			t.Fatal(err)
		}
		if llm.Requests.Load() == 0 {
			t.Fatal("no request reached the model")
		}
	})
}
