package service

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/llm"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// SummarizerConfig selects and configures a summarizer. Secrets are not part of it: the
// API key is read from the environment variable named by APIKeyEnv.
type SummarizerConfig struct {
	// The summarizer: unset (the default: the session's model when its credential
	// resolves, else the extractive summary), "extractive" (no model), "model" (a model
	// of Pi's catalog, which must be usable) or "openai" (an OpenAI-compatible endpoint).
	Kind string `json:"summarizer,omitempty" ts:"\"extractive\" | \"model\" | \"openai\""`
	// BaseURL is the OpenAI-compatible endpoint, /v1 included.
	BaseURL string `json:"baseUrl,omitempty"`
	// Model is, for "openai", the endpoint's model; otherwise a separate summary model
	// of Pi's catalog, "provider/id[:thinking]" (unset: the session's model).
	Model string `json:"model,omitempty"`
	// APIKeyEnv is the name of the environment variable that holds the key (default
	// OPENAI_API_KEY); a name that does not end in _KEY or _TOKEN is refused
	// (CheckKeyEnv).
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// ContextWindow is the model's window, for thresholds and branch budgets (default
	// DefaultContextWindow, 128000).
	ContextWindow int `json:"contextWindow,omitempty"`
	// MaxTokens is the model's output limit (Pi's models.json maxTokens; default 16384 as
	// Pi's for a custom model). A summary asks for it, shrunk to fit the window.
	MaxTokens int `json:"maxTokens,omitempty"`
	// Provider names a provider of the user's Pi models.json whose baseUrl and key are
	// used when BaseURL is empty.
	Provider string `json:"provider,omitempty"`
	// SummaryTimeout bounds the time one summary may take, retries and waits included
	// (default DefaultSummaryTimeout). A slow local model that has not finished by then
	// fails: raise it for such a model.
	SummaryTimeout session.Timeout `json:"summaryTimeout,omitempty"`
	// StallTimeout is how long an attempt may receive no byte at all before it is
	// abandoned and retried once (default DefaultStallTimeout).
	StallTimeout session.Timeout `json:"stallTimeout,omitempty"`

	// err is a malformed timeout from the environment or a settings file, reported by
	// Build.
	err error
}

// DefaultContextWindow is used for branch budgets when no window is known (Pi's default).
const DefaultContextWindow = 128000

// ConfigFromEnv reads PI_LSP_SUMMARIZER, PI_LSP_BASE_URL, PI_LSP_MODEL,
// PI_LSP_API_KEY_ENV, PI_LSP_SUMMARY_TIMEOUT and PI_LSP_STALL_TIMEOUT; they are fallbacks
// below editor settings and flags, and above the settings files (ConfigFromSettings).
func ConfigFromEnv() SummarizerConfig {
	c := SummarizerConfig{
		Kind:      os.Getenv("PI_LSP_SUMMARIZER"),
		BaseURL:   os.Getenv("PI_LSP_BASE_URL"),
		Model:     os.Getenv("PI_LSP_MODEL"),
		APIKeyEnv: os.Getenv("PI_LSP_API_KEY_ENV"),
	}
	for _, v := range []struct {
		name string
		to   *session.Timeout
	}{{"PI_LSP_SUMMARY_TIMEOUT", &c.SummaryTimeout}, {"PI_LSP_STALL_TIMEOUT", &c.StallTimeout}} {
		if s := os.Getenv(v.name); s != "" {
			d, err := session.ParseTimeout(s)
			if err != nil && c.err == nil {
				c.err = fmt.Errorf("%s: %w", v.name, err)
			}
			*v.to = d
		}
	}
	return c
}

// ConfigFromSettings is the summarizer's timeouts from the piLsp section of Pi's settings
// files (session.PiLspSettings), the project's over the global one when Pi trusts the
// project.
func ConfigFromSettings(agentDir, cwd string) SummarizerConfig {
	p := session.LoadSettings(agentDir, cwd).PiLsp
	return SummarizerConfig{SummaryTimeout: p.SummaryTimeout, StallTimeout: p.StallTimeout, err: p.Err}
}

// Over returns c with every empty field taken from fallback.
func (c SummarizerConfig) Over(fallback SummarizerConfig) SummarizerConfig {
	c.Kind = cmp.Or(c.Kind, fallback.Kind)
	c.BaseURL = cmp.Or(c.BaseURL, fallback.BaseURL)
	c.Model = cmp.Or(c.Model, fallback.Model)
	c.APIKeyEnv = cmp.Or(c.APIKeyEnv, fallback.APIKeyEnv)
	c.ContextWindow = cmp.Or(c.ContextWindow, fallback.ContextWindow)
	c.MaxTokens = cmp.Or(c.MaxTokens, fallback.MaxTokens)
	c.Provider = cmp.Or(c.Provider, fallback.Provider)
	c.SummaryTimeout = cmp.Or(c.SummaryTimeout, fallback.SummaryTimeout)
	c.StallTimeout = cmp.Or(c.StallTimeout, fallback.StallTimeout)
	if c.err == nil {
		c.err = fallback.err
	}
	return c
}

// Timeouts are the bound of one summary and of a stall, with the defaults filled in.
func (c SummarizerConfig) Timeouts() (summary, stall time.Duration) {
	summary, stall = time.Duration(c.SummaryTimeout), time.Duration(c.StallTimeout)
	if summary <= 0 {
		summary = llm.DefaultTotalTimeout
	}
	if stall <= 0 {
		stall = llm.DefaultStallTimeout
	}
	return summary, stall
}

// Window is the configured context window, or Pi's default.
func (c SummarizerConfig) Window() int {
	if c.ContextWindow > 0 {
		return c.ContextWindow
	}
	return DefaultContextWindow
}

// Build returns the configured summarizer. For "openai" the endpoint comes from the
// config, or from an openai-completions provider of Pi's models.json in agentDir, so an
// existing Pi setup works as is.
func (c SummarizerConfig) Build(agentDir string) (compaction.Summarizer, SummarizerConfig, error) {
	switch strings.ToLower(c.Kind) {
	case "", "extractive":
		c.Kind = "extractive"
		return compaction.Extractive{}, c, nil
	case "openai":
	default:
		return nil, c, fmt.Errorf("unknown summarizer %q (use extractive or openai)", c.Kind)
	}
	if c.err != nil {
		return nil, c, fmt.Errorf("openai summarizer: %w", c.err)
	}
	if err := CheckKeyEnv(c.APIKeyEnv); err != nil {
		return nil, c, fmt.Errorf("openai summarizer: %w", err)
	}
	keyEnv := c.APIKeyEnv
	if keyEnv == "" {
		keyEnv = "OPENAI_API_KEY"
	}
	key := os.Getenv(keyEnv)
	reasoning := false
	if c.BaseURL == "" || c.Model == "" {
		if err := c.fromPiModels(agentDir, &key, &reasoning); err != nil {
			return nil, c, err
		}
	}
	if c.BaseURL == "" {
		return nil, c, fmt.Errorf("openai summarizer: no base URL (set baseUrl, PI_LSP_BASE_URL, or an openai-completions provider in %s)", filepath.Join(agentDir, "models.json"))
	}
	if c.Model == "" {
		return nil, c, fmt.Errorf("openai summarizer: no model (set model or PI_LSP_MODEL)")
	}
	total, stall := c.Timeouts()
	client, err := llm.New(llm.Config{Model: llm.CompatibleModel(c.BaseURL, c.Model, c.Window(), c.MaxTokens, reasoning),
		Credential: &catalog.Credential{APIKey: key, Source: "the environment variable " + keyEnv + " (apiKeyEnv) or models.json",
			Fix: "export a valid key in " + keyEnv + " where pi-lsp runs"},
		RetryLimits: llm.RetryLimits{TotalTimeout: total, StallTimeout: stall}})
	if err != nil {
		return nil, c, fmt.Errorf("openai summarizer: %w", err)
	}
	return compaction.NewModelSummarizer(client, ""), c, nil
}

// CheckKeyEnv refuses an apiKeyEnv (or PI_LSP_API_KEY_ENV) that does not name a key: the
// value of that variable is sent to the endpoint as a bearer token, so only a variable
// whose name says it holds one is read: a name of letters, digits and underscores ending
// in _KEY or _TOKEN (OPENAI_API_KEY, OLLAMA_KEY, HF_TOKEN). "" (the default,
// OPENAI_API_KEY) passes.
func CheckKeyEnv(name string) error {
	if name == "" || keyEnvName.MatchString(name) {
		return nil
	}
	return fmt.Errorf("apiKeyEnv %q refused: the API key is read only from an environment variable whose name ends in _KEY or _TOKEN (such as OPENAI_API_KEY); export the key under such a name and set apiKeyEnv to it", name)
}

var keyEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*_(?:KEY|TOKEN|key|token)$`)

func (c *SummarizerConfig) fromPiModels(agentDir string, key *string, reasoning *bool) error {
	providers, err := catalog.ReadModelsJSON(filepath.Join(agentDir, "models.json"))
	if err != nil {
		return fmt.Errorf("read Pi models.json: %w", err)
	}
	for name, p := range providers {
		if p.API != catalog.APIOpenAICompletions || (c.Provider != "" && c.Provider != name) {
			continue
		}
		for _, m := range p.Models {
			if c.Model != "" && m.ID != c.Model {
				continue
			}
			count := func(v *float64) int {
				if v == nil {
					return 0
				}
				return int(*v)
			}
			c.BaseURL = cmp.Or(c.BaseURL, p.BaseURL)
			c.Model = cmp.Or(c.Model, m.ID)
			c.ContextWindow = cmp.Or(c.ContextWindow, count(m.ContextWindow))
			c.MaxTokens = cmp.Or(c.MaxTokens, count(m.MaxTokens))
			*reasoning = m.Reasoning != nil && *m.Reasoning
			if *key == "" && p.APIKey != nil {
				*key = resolvePiKey(*p.APIKey)
			}
			return nil
		}
	}
	return nil
}

// resolvePiKey follows Pi's convention: an apiKey that names an environment variable is
// read from it; otherwise it is the key itself.
func resolvePiKey(v string) string {
	if v == "" {
		return ""
	}
	// Pi's forms: "$NAME" / "${NAME}" interpolation, "!command" output, else literal.
	key, err := catalog.ResolveValue(context.Background(), v)
	if err != nil {
		return "" // an unset variable or a failed command: no key, never the raw text
	}
	if key == v {
		if env := os.Getenv(v); env != "" {
			return env // a bare variable name, which earlier pi-lsp versions read
		}
	}
	return key
}
