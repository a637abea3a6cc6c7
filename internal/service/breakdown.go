package service

import (
	"context"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// BreakdownRequest asks for the context of a path at a glance.
type BreakdownRequest struct {
	// Cwd is the session header's cwd (whose settings give the reserve).
	Cwd string
	// Path is the root-first path to the leaf looked at.
	Path []*session.Entry
	// History: also the size along the path (one projection per event: not free).
	History bool
}

// Breakdown is the context of a path at a glance: what fills it by kind, the window it
// fills and where Pi compacts, and (when asked) how it grew.
type Breakdown struct {
	LeafID string
	// Total is the sum of the kinds: Pi's estimate of the whole context.
	Total int
	// UsageTokens is Pi's figure resting on the last reply's usage, nil when stale.
	UsageTokens *float64
	// ContextWindow is the window of the path's model: the front end's override, else
	// the model's in Pi's catalog, else Pi's default.
	ContextWindow int
	// ReserveTokens is the compaction reserve of the path's settings; Pi compacts above
	// ContextWindow - ReserveTokens (when compaction is enabled).
	ReserveTokens int
	CompactionOn  bool
	Kinds         []contextedit.KindTokens
	// History is nil unless asked for.
	History []contextedit.SizePoint
}

// ContextBreakdown is the context of a path at a glance.
func (c Config) ContextBreakdown(ctx context.Context, req BreakdownRequest, rep Reporter) (Breakdown, error) {
	b, err := contextedit.BreakdownOf(ctx, req.Path)
	if err != nil {
		return Breakdown{}, fmt.Errorf("context breakdown: %w", err)
	}
	settings, err := c.SettingsOfPath(req.Cwd, req.Path)
	if err != nil {
		// The picture is still right; only the threshold falls back to Pi's default.
		rep.Notice(err.Error() + "; Pi's default reserve shown")
		settings = session.DefaultCompactionSettings
		if c.ReserveTokens > 0 {
			settings.ReserveTokens = c.ReserveTokens
		}
	}
	out := Breakdown{LeafID: b.LeafID, Total: b.Total, UsageTokens: b.UsageTokens, Kinds: b.Kinds,
		ContextWindow: c.WindowOfPath(req.Path), ReserveTokens: settings.ReserveTokens, CompactionOn: settings.Enabled}
	if req.History {
		h, err := contextedit.History(ctx, req.Path)
		if err != nil {
			return Breakdown{}, fmt.Errorf("context history: %w", err)
		}
		out.History = h
	}
	return out, nil
}

// WindowOfPath is the context window of the model of a path: the front end's
// configured window, else that model's in Pi's catalog (the installed pi's, with
// models.json), else Pi's default.
func (c Config) WindowOfPath(path []*session.Entry) int {
	if c.SummarizerConfig.ContextWindow > 0 {
		return c.SummarizerConfig.ContextWindow
	}
	if provider, model := session.ModelOfPath(path); provider != "" && model != "" {
		cat := catalog.Load(c.AgentDir, catalog.LoadOptions{PiPath: PiPath()})
		if m := cat.Find(provider, model); m != nil && m.ContextWindow > 0 {
			return m.ContextWindow
		}
	}
	return DefaultContextWindow
}
