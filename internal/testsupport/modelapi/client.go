package modelapi

import (
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/llm"
)

// Prefixes is the path prefix each API's base URL carries before the server's routes.
var Prefixes = map[string]string{
	catalog.APIAnthropicMessages: "",
	catalog.APIOpenAIResponses:   "/v1",
	catalog.APIOpenAICompletions: "/v1",
	catalog.APIGoogle:            "/v1beta",
}

// Client is an llm client of model "m" (provider "acme") of api at base, with retry bounds
// short enough for a test: three retries from 1 ms, stalls after 5 s.
func Client(t *testing.T, api, base string, cred *catalog.Credential) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{
		Model:      &catalog.Model{ID: "m", API: api, Provider: "acme", BaseURL: base, ContextWindow: 100000, MaxTokens: 4000},
		Credential: cred, RetryLimits: llm.RetryLimits{MaxRetries: 3, RetryBase: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond,
			TotalTimeout: 20 * time.Second, StallTimeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
