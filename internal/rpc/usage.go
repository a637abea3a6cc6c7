package rpc

import (
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
