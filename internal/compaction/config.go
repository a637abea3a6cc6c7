package compaction

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SummarizerConfig selects and configures a summarizer. Secrets are not part of it: the
// API key is read from the environment variable named by APIKeyEnv.
type SummarizerConfig struct {
	Kind          string `json:"summarizer,omitempty"` // "extractive" (default) or "openai"
	BaseURL       string `json:"baseUrl,omitempty"`
	Model         string `json:"model,omitempty"`
	APIKeyEnv     string `json:"apiKeyEnv,omitempty"`
	ContextWindow int    `json:"contextWindow,omitempty"`
	// Provider names a provider of the user's Pi models.json whose baseUrl and key are
	// used when BaseURL is empty.
	Provider string `json:"provider,omitempty"`
}

// DefaultContextWindow is used for branch budgets when no window is known (Pi's default).
const DefaultContextWindow = 128000

// ConfigFromEnv reads PI_LSP_SUMMARIZER, PI_LSP_BASE_URL, PI_LSP_MODEL and
// PI_LSP_API_KEY_ENV; they are fallbacks below editor settings and flags.
func ConfigFromEnv() SummarizerConfig {
	return SummarizerConfig{
		Kind:      os.Getenv("PI_LSP_SUMMARIZER"),
		BaseURL:   os.Getenv("PI_LSP_BASE_URL"),
		Model:     os.Getenv("PI_LSP_MODEL"),
		APIKeyEnv: os.Getenv("PI_LSP_API_KEY_ENV"),
	}
}

// Over returns c with every empty field taken from fallback.
func (c SummarizerConfig) Over(fallback SummarizerConfig) SummarizerConfig {
	if c.Kind == "" {
		c.Kind = fallback.Kind
	}
	if c.BaseURL == "" {
		c.BaseURL = fallback.BaseURL
	}
	if c.Model == "" {
		c.Model = fallback.Model
	}
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = fallback.APIKeyEnv
	}
	if c.ContextWindow == 0 {
		c.ContextWindow = fallback.ContextWindow
	}
	if c.Provider == "" {
		c.Provider = fallback.Provider
	}
	return c
}

// Window is the configured context window, or Pi's default.
func (c SummarizerConfig) Window() int {
	if c.ContextWindow > 0 {
		return c.ContextWindow
	}
	return DefaultContextWindow
}

// piModels is the part of Pi's models.json pi-lsp reads.
type piModels struct {
	Providers map[string]struct {
		BaseURL string `json:"baseUrl"`
		API     string `json:"api"`
		APIKey  string `json:"apiKey"`
		Models  []struct {
			ID            string `json:"id"`
			ContextWindow int    `json:"contextWindow"`
			Reasoning     bool   `json:"reasoning"`
		} `json:"models"`
	} `json:"providers"`
}

// Build returns the configured summarizer. For "openai" the endpoint comes from the
// config, or from an openai-completions provider of Pi's models.json in agentDir, so an
// existing Pi setup works as is.
func (c SummarizerConfig) Build(agentDir string) (Summarizer, SummarizerConfig, error) {
	switch strings.ToLower(c.Kind) {
	case "", "extractive":
		c.Kind = "extractive"
		return Extractive{}, c, nil
	case "openai":
	default:
		return nil, c, fmt.Errorf("unknown summarizer %q (use extractive or openai)", c.Kind)
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
	return NewOpenAI(OpenAIConfig{BaseURL: c.BaseURL, Model: c.Model, APIKey: key, ContextWindow: c.Window(), Reasoning: reasoning}), c, nil
}

func (c *SummarizerConfig) fromPiModels(agentDir string, key *string, reasoning *bool) error {
	data, err := os.ReadFile(filepath.Join(agentDir, "models.json"))
	if err != nil {
		return nil
	}
	var pm piModels
	if err := json.Unmarshal(data, &pm); err != nil {
		return fmt.Errorf("read Pi models.json: %w", err)
	}
	for name, p := range pm.Providers {
		if p.API != "openai-completions" || (c.Provider != "" && c.Provider != name) {
			continue
		}
		for _, m := range p.Models {
			if c.Model != "" && m.ID != c.Model {
				continue
			}
			if c.BaseURL == "" {
				c.BaseURL = p.BaseURL
			}
			if c.Model == "" {
				c.Model = m.ID
			}
			if c.ContextWindow == 0 {
				c.ContextWindow = m.ContextWindow
			}
			*reasoning = m.Reasoning
			if *key == "" {
				*key = resolvePiKey(p.APIKey)
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
	if env := os.Getenv(v); env != "" {
		return env
	}
	return v
}
