package rpc

import (
	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// usage is Pi 1.6.0's getContextUsage (session.ContextUsage) for the configured window:
// nil tokens and percent after a compaction until a projected reply reports usage again.
func (h *host) usage(path []*session.Entry) (tokens *float64, window int, percent *float64) {
	window = h.window()
	tokens, percent = session.ContextUsage(path, window)
	return tokens, window, percent
}

// contextUsage is usage for a built context, from the projection it holds.
func (h *host) contextUsage(c *session.Context) (tokens *float64, window int, percent *float64) {
	window = h.window()
	tokens, percent = c.Usage(window)
	return tokens, window, percent
}

// usageNotice is pi/contextUsage for a path: Pi's figure and, where Pi has none (after
// a compaction until the next reply), Pi's estimate, so that a status never shows "?";
// the source says which one a status shows. One projection serves both.
func (h *host) usageNotice(file string, path []*session.Entry, current bool) ContextUsage {
	c := session.ContextOfProjection(path, session.ProjectPath(path))
	tokens, window, pct := h.contextUsage(c)
	u := ContextUsage{Session: file, Tokens: tokens, ContextWindow: window, Percent: pct, Current: current}
	t := c.Tokens()
	source := contextedit.SourceUsage
	if t.LastUsageIndex == nil {
		source = contextedit.SourceEstimate
	}
	if tokens == nil {
		est := t.Tokens
		u.Estimate, source = &est, contextedit.SourceEstimate
	}
	u.Source = source
	return u
}
