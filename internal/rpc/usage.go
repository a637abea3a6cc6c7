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

// usageNotice is pi/contextUsage for a path.
func (h *host) usageNotice(file string, path []*session.Entry, current bool) ContextUsage {
	f := h.figures(session.ContextOfProjection(path, session.ProjectPath(path)))
	return ContextUsage{Session: file, Tokens: f.tokens, ContextWindow: f.window, Percent: f.percent,
		Current: current, Estimate: f.estimate, Source: f.source}
}

// figures are the context figures a status shows: Pi's (getContextUsage) and, where
// Pi has none (after a compaction until the next reply), Pi's estimate, so that a
// status never shows "?"; source says which one a status shows. They are read from
// the projection the context holds.
type figures struct {
	tokens, percent, estimate *float64
	window                    int
	source                    string
}

func (h *host) figures(c *session.Context) figures {
	var f figures
	f.tokens, f.window, f.percent = h.contextUsage(c)
	t := c.Tokens()
	f.source = contextedit.SourceUsage
	if t.LastUsageIndex == nil {
		f.source = contextedit.SourceEstimate
	}
	if f.tokens == nil {
		est := t.Tokens
		f.estimate, f.source = &est, contextedit.SourceEstimate
	}
	return f
}
