package rpc

import (
	"cmp"
	"encoding/json"

	"github.com/pi-lsp/pi-lsp/internal/service"
)

// config is what the client may set through initializationOptions and
// workspace/didChangeConfiguration (the flat form; the nested form is VS Code's).
// Secrets are never part of it. Every field is optional: an absent one keeps the value
// set before, or the default.
type config struct {
	// Session is the absolute path of a .jsonl session of the workspace to make current.
	Session string `json:"session,omitempty"`
	// KeepRecentTokens overrides Pi's compaction.keepRecentTokens.
	KeepRecentTokens int `json:"keepRecentTokens,omitempty"`
	// ReserveTokens overrides Pi's compaction.reserveTokens.
	ReserveTokens int `json:"reserveTokens,omitempty"`
	// Drafts enables background drafts (pi/draftReady; off unless a client sets it
	// true): with it off the server sends a conversation to a model only for a job the
	// client asked for.
	Drafts *bool `json:"drafts,omitempty"`
	// ClearToolOutput makes a threshold compaction of a hosted session clear old tool
	// output first (pi/clearToolOutput's defaults; off unless a client sets it true): when
	// the context is then below the threshold, no summary is made.
	ClearToolOutput *bool `json:"clearToolOutput,omitempty"`
	service.SummarizerConfig
}

// settingsTree is the nested form of the settings didChangeConfiguration may send (VS
// Code's piLsp.* settings as a tree).
type settingsTree struct {
	PiLsp *piLspSettings `json:"piLsp"`
}

// piLspSettings is the object under settings.piLsp.
type piLspSettings struct {
	Summarizer summarizerSettings `json:"summarizer"`
	Compaction compactionSettings `json:"compaction"`
}

// summarizerSettings are piLsp.summarizer.*: the flat form's summarizer settings under
// other names (kind is the flat form's summarizer).
type summarizerSettings struct {
	Kind          string `json:"kind" ts:"\"extractive\" | \"model\" | \"openai\""`
	BaseURL       string `json:"baseUrl"`
	Model         string `json:"model"`
	APIKeyEnv     string `json:"apiKeyEnv"`
	ContextWindow int    `json:"contextWindow"`
	MaxTokens     int    `json:"maxTokens"`
	Drafts        *bool  `json:"drafts"`
}

// compactionSettings are piLsp.compaction.*.
type compactionSettings struct {
	ReserveTokens    int   `json:"reserveTokens"`
	KeepRecentTokens int   `json:"keepRecentTokens"`
	ClearToolOutput  *bool `json:"clearToolOutput"`
}

// applyConfigLocked merges a settings object. It accepts the flat form of
// initializationOptions and VS Code's nested {piLsp: {summarizer: {...}, compaction: {...}}}.
func (h *host) applyConfigLocked(raw json.RawMessage) {
	var nested settingsTree
	if json.Unmarshal(raw, &nested) == nil && nested.PiLsp != nil {
		n := nested.PiLsp
		c := config{KeepRecentTokens: n.Compaction.KeepRecentTokens, ReserveTokens: n.Compaction.ReserveTokens, Drafts: n.Summarizer.Drafts,
			ClearToolOutput:  n.Compaction.ClearToolOutput,
			SummarizerConfig: service.SummarizerConfig{Kind: n.Summarizer.Kind, BaseURL: n.Summarizer.BaseURL, Model: n.Summarizer.Model, APIKeyEnv: n.Summarizer.APIKeyEnv, ContextWindow: n.Summarizer.ContextWindow, MaxTokens: n.Summarizer.MaxTokens}}
		h.setConfigLocked(c)
		return
	}
	var c config
	if err := json.Unmarshal(raw, &c); err != nil {
		h.s.log.Warn("configuration ignored", "err", err)
		return
	}
	h.setConfigLocked(c)
}

// setConfigLocked merges c over the configuration. An apiKeyEnv that does not name a
// key is kept, so that every job that would use it fails with the reason
// (service.CheckKeyEnv) rather than falling back to another key.
func (h *host) setConfigLocked(c config) {
	if err := service.CheckKeyEnv(c.APIKeyEnv); err != nil {
		h.s.log.Warn("configuration: "+err.Error(), "apiKeyEnv", c.APIKeyEnv)
	}
	h.cfg = c.over(h.cfg)
}

// draftsEnabled: the client turned background drafts on.
func (h *host) draftsEnabled() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg.Drafts != nil && *h.cfg.Drafts
}

func (c config) over(old config) config {
	c.Session = cmp.Or(c.Session, old.Session)
	c.KeepRecentTokens = cmp.Or(c.KeepRecentTokens, old.KeepRecentTokens)
	c.ReserveTokens = cmp.Or(c.ReserveTokens, old.ReserveTokens)
	if c.Drafts == nil {
		c.Drafts = old.Drafts
	}
	if c.ClearToolOutput == nil {
		c.ClearToolOutput = old.ClearToolOutput
	}
	c.SummarizerConfig = c.SummarizerConfig.Over(old.SummarizerConfig)
	return c
}

func (h *host) configure(raw json.RawMessage) {
	h.mu.Lock()
	was := h.cfg.Drafts != nil && *h.cfg.Drafts
	h.applyConfigLocked(raw)
	current := h.current
	h.mu.Unlock()
	if !was && current != "" && h.draftsEnabled() {
		h.s.maybeDraft(current) // drafts just turned on: look at the current session now
	}
}

// clearsFirst: the client turned the first tier of automatic compaction on.
func (h *host) clearsFirst() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg.ClearToolOutput != nil && *h.cfg.ClearToolOutput
}

// configuredWindow is the context window the client set (0: none).
func (h *host) configuredWindow() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg.SummarizerConfig.ContextWindow
}

func (h *host) window() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg.SummarizerConfig.Window()
}
