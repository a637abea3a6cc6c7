package fakemodel

import (
	"net/http"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/llm"
)

// OpenAIConfig is a model summarizer of an OpenAI-compatible endpoint, made of the fields
// a test sets (the server's URL, a model name, a key, limits).
type OpenAIConfig struct {
	BaseURL, Model, APIKey   string
	ContextWindow, MaxTokens int
	Reasoning                bool
	llm.RetryLimits
	HTTPClient *http.Client
}

// NewOpenAI is the model summarizer of c, as pi-lsp builds it for the OpenAI-compatible
// summarizer (llm.CompatibleModel).
func NewOpenAI(c OpenAIConfig) *compaction.ModelSummarizer {
	client, err := llm.New(llm.Config{Model: llm.CompatibleModel(c.BaseURL, c.Model, c.ContextWindow, c.MaxTokens, c.Reasoning),
		Credential: &catalog.Credential{APIKey: c.APIKey}, RetryLimits: c.RetryLimits, HTTPClient: c.HTTPClient})
	if err != nil {
		panic(err) // only an API pi-lsp does not speak fails, and this one it speaks
	}
	return compaction.NewModelSummarizer(client, "")
}
