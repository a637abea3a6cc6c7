package compaction

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
)

// ModelSummarizerConfig configures a summarizer for a model of Pi's catalog, with the
// credential Pi would send (catalog.Resolver).
type ModelSummarizerConfig struct {
	Model      *catalog.Model
	Credential *catalog.Credential
	// ThinkingLevel is the session's thinking level, clamped to the model (Pi's
	// this.thinkingLevel); "" uses each request's.
	ThinkingLevel string
	// The bounds of a summary's attempts (zero: the defaults of OpenAIConfig).
	RetryLimits
	HTTPClient *http.Client
}

// ModelSummarizer summarizes with a model of Pi's catalog over its API.
type ModelSummarizer struct {
	cfg     ModelSummarizerConfig
	attempt attemptFunc
	policy  retryPolicy
}

// NewModelSummarizer builds the summarizer of cfg.Model's API (anthropic-messages,
// openai-responses, openai-completions, google-generative-ai).
func NewModelSummarizer(cfg ModelSummarizerConfig) (*ModelSummarizer, error) {
	m := cfg.Model
	if cfg.Credential == nil {
		cfg.Credential = &catalog.Credential{}
	}
	// The defaults of the OpenAI summarizer.
	o := NewOpenAI(OpenAIConfig{BaseURL: m.BaseURL, Model: m.ID, APIKey: cfg.Credential.APIKey, ContextWindow: m.ContextWindow,
		MaxTokens: m.MaxTokens, Reasoning: m.Reasoning, RetryLimits: cfg.RetryLimits, HTTPClient: cfg.HTTPClient, Catalog: m,
		Headers: mergeHeaders(m.Headers, cfg.Credential.Headers), Credential: cfg.Credential})
	cfg.RetryLimits = o.cfg.RetryLimits
	s := &ModelSummarizer{cfg: cfg, policy: o.policy()}
	switch m.API {
	case catalog.APIOpenAICompletions:
		s.attempt = o.attempt
	case catalog.APIAnthropicMessages:
		s.attempt = newAnthropicAPI(cfg).attempt
	case catalog.APIOpenAIResponses:
		s.attempt = newResponsesAPI(cfg).attempt
	case catalog.APIGoogle:
		s.attempt = newGoogleAPI(cfg).attempt
	default:
		return nil, fmt.Errorf("%s speaks %s, which pi-lsp does not (it speaks %s)", m.Ref(), m.API,
			strings.Join([]string{catalog.APIAnthropicMessages, catalog.APIOpenAIResponses, catalog.APIOpenAICompletions, catalog.APIGoogle}, ", "))
	}
	return s, nil
}

// Name implements Summarizer: "provider/model".
func (s *ModelSummarizer) Name() string { return s.cfg.Model.Ref() }

// Model is the model summaries are made with.
func (s *ModelSummarizer) Model() *catalog.Model { return s.cfg.Model }

// Summarize implements Summarizer, with the session's thinking level.
func (s *ModelSummarizer) Summarize(ctx context.Context, req Request) (Result, error) {
	if s.cfg.ThinkingLevel != "" {
		req.ThinkingLevel = s.cfg.ThinkingLevel
	}
	return summarizeWithRetries(ctx, req, s.policy, s.attempt)
}

func mergeHeaders(hs ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		for k, v := range h {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// withConfigHeaders appends to opts the model's headers, then the credential's (which
// win), each made an option by header: each SDK has its own option type.
func withConfigHeaders[O any](opts []O, cfg ModelSummarizerConfig, header func(k, v string) O) []O {
	for _, hs := range []map[string]string{cfg.Model.Headers, cfg.Credential.Headers} {
		for k, v := range hs {
			opts = append(opts, header(k, v))
		}
	}
	return opts
}
