package rpc

import (
	"cmp"
	"encoding/json"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
)

// config is what the client may set through initializationOptions and
// workspace/didChangeConfiguration. Secrets are never part of it.
type config struct {
	Session          string `json:"session,omitempty"`
	KeepRecentTokens int    `json:"keepRecentTokens,omitempty"`
	ReserveTokens    int    `json:"reserveTokens,omitempty"`
	compaction.SummarizerConfig
}

// applyConfigLocked merges a settings object. It accepts the flat form of
// initializationOptions and VS Code's nested {piLsp: {summarizer: {...}, compaction: {...}}}.
func (h *host) applyConfigLocked(raw json.RawMessage) {
	var nested struct {
		PiLsp *struct {
			Summarizer struct {
				Kind          string `json:"kind"`
				BaseURL       string `json:"baseUrl"`
				Model         string `json:"model"`
				APIKeyEnv     string `json:"apiKeyEnv"`
				ContextWindow int    `json:"contextWindow"`
				MaxTokens     int    `json:"maxTokens"`
			} `json:"summarizer"`
			Compaction struct {
				ReserveTokens    int `json:"reserveTokens"`
				KeepRecentTokens int `json:"keepRecentTokens"`
			} `json:"compaction"`
		} `json:"piLsp"`
	}
	if json.Unmarshal(raw, &nested) == nil && nested.PiLsp != nil {
		n := nested.PiLsp
		c := config{KeepRecentTokens: n.Compaction.KeepRecentTokens, ReserveTokens: n.Compaction.ReserveTokens,
			SummarizerConfig: compaction.SummarizerConfig{Kind: n.Summarizer.Kind, BaseURL: n.Summarizer.BaseURL, Model: n.Summarizer.Model, APIKeyEnv: n.Summarizer.APIKeyEnv, ContextWindow: n.Summarizer.ContextWindow, MaxTokens: n.Summarizer.MaxTokens}}
		h.cfg = c.over(h.cfg)
		return
	}
	var c config
	if err := json.Unmarshal(raw, &c); err != nil {
		h.s.log.Warn("configuration ignored", "err", err)
		return
	}
	h.cfg = c.over(h.cfg)
}

func (c config) over(old config) config {
	c.Session = cmp.Or(c.Session, old.Session)
	c.KeepRecentTokens = cmp.Or(c.KeepRecentTokens, old.KeepRecentTokens)
	c.ReserveTokens = cmp.Or(c.ReserveTokens, old.ReserveTokens)
	c.SummarizerConfig = c.SummarizerConfig.Over(old.SummarizerConfig)
	return c
}

func (h *host) configure(raw json.RawMessage) {
	h.mu.Lock()
	h.applyConfigLocked(raw)
	h.mu.Unlock()
}

func (h *host) window() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg.SummarizerConfig.Window()
}
