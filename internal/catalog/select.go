package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// thinkingLevels are Pi's, in order.
var thinkingLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh", "max"}

// DefaultThinkingLevel is Pi's DEFAULT_THINKING_LEVEL.
const DefaultThinkingLevel = "medium"

// SupportedLevels is pi-ai's getSupportedThinkingLevels.
func SupportedLevels(m *Model) []string {
	if !m.Reasoning {
		return []string{"off"}
	}
	var out []string
	for _, level := range thinkingLevels {
		mapped, present := m.ThinkingLevelMap[level]
		if present && mapped == nil {
			continue
		}
		if (level == "xhigh" || level == "max") && !present {
			continue
		}
		out = append(out, level)
	}
	return out
}

// ClampLevel is pi-ai's clampThinkingLevel: the level if the model supports it, else the
// nearest supported one above it, else below it.
func ClampLevel(m *Model, level string) string {
	avail := SupportedLevels(m)
	if contains(avail, level) {
		return level
	}
	idx := -1
	for i, l := range thinkingLevels {
		if l == level {
			idx = i
		}
	}
	first := "off"
	if len(avail) > 0 {
		first = avail[0]
	}
	if idx < 0 {
		return first
	}
	for i := idx; i < len(thinkingLevels); i++ {
		if contains(avail, thinkingLevels[i]) {
			return thinkingLevels[i]
		}
	}
	for i := idx - 1; i >= 0; i-- {
		if contains(avail, thinkingLevels[i]) {
			return thinkingLevels[i]
		}
	}
	return first
}

// MappedLevel is model.thinkingLevelMap[level] when it maps to a string, else level.
func (m *Model) MappedLevel(level string) string {
	if v, ok := m.ThinkingLevelMap[level]; ok && v != nil {
		return *v
	}
	return level
}

// Selection is the model a session continues with.
type Selection struct {
	// Provider and ModelID name the model wanted (the session's, or settings' default).
	Provider, ModelID string
	// Model is the catalog's model (nil when it is not in the catalog).
	Model *Model
	// ThinkingLevel is the session's thinking level, clamped to the model.
	ThinkingLevel string
	// From says where the choice came from: "session", "settings" or "flag".
	From string
	// Usable: the model is in the catalog and its provider has credentials (Pi's
	// hasConfiguredAuth); when false, Why says why not and Fix what fixes it.
	Usable   bool
	Why, Fix string
}

// Ref is "provider/id" of the wanted model ("" when there is none).
func (s Selection) Ref() string {
	if s.Provider == "" && s.ModelID == "" {
		return ""
	}
	return s.Provider + "/" + s.ModelID
}

// Select is the model Pi 1.6.0 continues a session with when it resumes it (sdk.ts
// createAgentSession): the path's newest model_change or assistant message, if the
// catalog has it and its provider has credentials; else settings' defaultProvider and
// defaultModel on the same terms. The thinking level is the path's newest
// thinking_level_change, else settings' defaultThinkingLevel, else "medium", clamped to
// the model. Pi then falls back to the first model with credentials; pi-lsp does not
// (it reports the session's model as unusable instead).
func Select(c *Catalog, r Resolver, path []*session.Entry, s session.Settings) Selection {
	level := SessionLevel(path, s)
	provider, id := session.ModelOfPath(path)
	first := Selection{}
	if provider != "" || id != "" {
		sel := pick(c, r, provider, id, level, "session")
		if sel.Usable {
			return sel
		}
		first = sel
	}
	if s.DefaultProvider != "" && s.DefaultModel != "" {
		sel := pick(c, r, s.DefaultProvider, s.DefaultModel, level, "settings")
		if sel.Usable {
			return sel
		}
		if first.From == "" {
			first = sel
		}
	}
	if first.From == "" {
		first.Why = "the session names no model and settings.json has no defaultProvider/defaultModel"
	}
	return first
}

// SessionLevel is the thinking level a resumed session has before it is clamped to its
// model: the path's newest thinking_level_change, else settings' defaultThinkingLevel,
// else "medium".
func SessionLevel(path []*session.Entry, s session.Settings) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == session.TypeThinkingLevelChange {
			if level := jsString(path[i].RawField("thinkingLevel")); level != "" {
				return level
			}
			return "off" // as session.Context.Level reads a level that is not a string
		}
	}
	if s.DefaultThinkingLevel != "" {
		return s.DefaultThinkingLevel
	}
	return DefaultThinkingLevel
}

// IsThinkingLevel reports whether s names one of Pi's thinking levels.
func IsThinkingLevel(s string) bool { return contains(thinkingLevels, s) }

// Pick is the selection of a model named on the command line or in settings
// ("provider/id"), with the session's thinking level unless level is given.
func Pick(c *Catalog, r Resolver, provider, id, level, from string) Selection {
	return pick(c, r, provider, id, level, from)
}

func pick(c *Catalog, r Resolver, provider, id, level, from string) Selection {
	sel := Selection{Provider: provider, ModelID: id, From: from, ThinkingLevel: level}
	m := c.Find(provider, id)
	if m == nil {
		if c.Provider(provider) == nil {
			sel.Why = fmt.Sprintf("provider %s is neither built into Pi nor in models.json", provider)
		} else {
			sel.Why = fmt.Sprintf("provider %s has no model %s in Pi's catalog or models.json", provider, id)
		}
		return sel
	}
	sel.Model = m
	if level != "" {
		sel.ThinkingLevel = ClampLevel(m, level)
	}
	if !r.Configured(c, provider) {
		_, _, err := r.key(context.Background(), c.Provider(provider), m)
		var ce *CredentialError
		if errors.As(err, &ce) {
			sel.Why, sel.Fix = "no credential: "+ce.Reason, ce.Fix
		} else {
			sel.Why, sel.Fix = "no credential", loginFix(c.Provider(provider))
		}
		return sel
	}
	sel.Usable = true
	return sel
}

func jsString(raw []byte) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return ""
	}
	return s
}
