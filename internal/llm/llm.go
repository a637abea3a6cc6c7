package llm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
)

// Request is one model call: a system prompt and one user text, the thinking level asked
// for and the output limit.
type Request struct {
	System, User string
	// ThinkingLevel is the reasoning asked of a reasoning model ("" or "off": none); it is
	// clamped to the model's levels as pi-ai clamps it.
	ThinkingLevel string
	// MaxTokens is the output limit asked for (0: the model's own), fitted to the
	// model's window as pi-ai fits it.
	MaxTokens int
	// Progress, when set, receives a report as each attempt begins and as the answer
	// streams.
	Progress func(Progress)
}

// Progress is reported as each attempt of a request begins and as its answer streams.
type Progress struct {
	Tokens  int // stream events received so far (an estimate of the output tokens)
	Elapsed time.Duration
	// Attempt numbers the attempts (from 1); MaxAttempts is how many may be made: it
	// shrinks after a stall, whose retry is the last attempt.
	Attempt, MaxAttempts int
	// Starting marks the report sent as an attempt begins (Tokens is 0).
	Starting bool
	// Retry says, on the report that starts attempt 2 or later, why the previous attempt
	// failed ("stall", "HTTP 503", ...); Wait is the backoff before it is sent.
	Retry string
	Wait  time.Duration
}

// Result is a complete answer: its text (trimmed, never empty), the usage in pi-ai's
// shape with its cost, and the model that answered.
type Result struct {
	Text  string
	Usage *Usage
	Model string
}

// Config is a model of Pi's catalog, the credential Pi would send to it
// (catalog.Resolver), and the bounds of each request's attempts.
type Config struct {
	Model      *catalog.Model
	Credential *catalog.Credential
	// The bounds of a request's attempts (zero: the defaults).
	RetryLimits
	// HTTPClient is the client requests go through (nil: a default one); its redirect
	// policy is replaced by refuseRedirect whatever it is.
	HTTPClient *http.Client
}

// apis is the one dispatch table: the client of each API pi-lsp speaks.
var apis = map[string]func(Config) attemptFunc{
	catalog.APIAnthropicMessages: newAnthropicAPI,
	catalog.APIOpenAIResponses:   newResponsesAPI,
	catalog.APIOpenAICompletions: newCompletionsAPI,
	catalog.APIGoogle:            newGoogleAPI,
}

// Client makes requests to one model over its API.
type Client struct {
	cfg     Config
	attempt attemptFunc
	policy  retryPolicy
}

// New is the client of cfg.Model's API (anthropic-messages, openai-responses,
// openai-completions, google-generative-ai).
func New(cfg Config) (*Client, error) {
	m := cfg.Model
	if cfg.Credential == nil {
		cfg.Credential = &catalog.Credential{}
	}
	cfg.RetryLimits = cfg.RetryLimits.withDefaults()
	api, ok := apis[m.API]
	if !ok {
		return nil, fmt.Errorf("%s speaks %s, which pi-lsp does not (it speaks %s)", m.Ref(), m.API,
			strings.Join([]string{catalog.APIAnthropicMessages, catalog.APIOpenAIResponses, catalog.APIOpenAICompletions, catalog.APIGoogle}, ", "))
	}
	secrets := []string{cfg.Credential.APIKey}
	for _, h := range []map[string]string{m.Headers, cfg.Credential.Headers} {
		for _, v := range h {
			secrets = append(secrets, strings.TrimPrefix(v, "Bearer "))
		}
	}
	return &Client{cfg: cfg, attempt: api(cfg),
		policy: retryPolicy{RetryLimits: cfg.RetryLimits, Secrets: secrets, Describe: describeFailure(m, cfg.Credential)}}, nil
}

// Name is "provider/model", or "openai:model" for an OpenAI-compatible endpoint.
func (c *Client) Name() string {
	if c.cfg.Model.Provider == CompatibleProvider {
		return "openai:" + c.cfg.Model.ID
	}
	return c.cfg.Model.Ref()
}

// Model is the model requests go to.
func (c *Client) Model() *catalog.Model { return c.cfg.Model }

// Limits are the bounds of each request's attempts, defaults filled in.
func (c *Client) Limits() RetryLimits { return c.cfg.RetryLimits }

// Complete makes one request: one streaming attempt, retried with backoff on rate
// limits, server errors and broken streams, within a bounded total time. A stall (no
// byte for StallTimeout) is retried at most MaxStallRetries times, and that retry is the
// last attempt; an unreachable host is retried once. Each attempt is announced through
// req.Progress (Starting). A failure is an *Error, or wraps ctx's error when ctx ended.
func (c *Client) Complete(ctx context.Context, req Request) (Result, error) {
	return completeWithRetries(ctx, req, c.policy, c.attempt)
}
