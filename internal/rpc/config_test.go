package rpc_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// The summarizer's settings: initializationOptions, didChangeConfiguration, and the
// rule an apiKeyEnv must follow.

// TestConfigurationChange: workspace/didChangeConfiguration is applied in wire order,
// so the next request already uses it (VS Code's nested piLsp form here).
func TestConfigurationChange(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	t.Setenv("PI_LSP_TEST_KEY", "k")
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"auto-threshold"}, InitOptions: map[string]any{"keepRecentTokens": 200}})
	e.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"piLsp": map[string]any{
		"summarizer": map[string]any{"kind": "openai", "baseUrl": llm.URL, "model": "m", "apiKeyEnv": "PI_LSP_TEST_KEY"},
		"compaction": map[string]any{"keepRecentTokens": 200},
	}}})
	res, err := e.Call("pi/compact", nil)
	if err != nil {
		t.Fatal(err)
	}
	if llm.Requests.Load() == 0 {
		t.Errorf("the new summarizer was not used: %s", lsptest.Trunc(res))
	}
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
