package session

import "encoding/json"

// ModelRef is the provider and model id the context was last seen with.
type ModelRef struct {
	Provider json.RawMessage
	ModelID  json.RawMessage
}

// MarshalJSON renders {provider, modelId} leaving out absent members, as Pi does.
func (m ModelRef) MarshalJSON() ([]byte, error) {
	o := newObject()
	o.raw("provider", m.Provider)
	o.raw("modelId", m.ModelID)
	return o.done(), nil
}

// Context is what Pi's buildSessionProjection returns: the messages sent to the LLM (as
// AgentMessages), the thinking level and the model, and the context entries with the
// messages each contributes.
type Context struct {
	Entries       []ProjectedEntry
	Messages      []*Message
	ThinkingLevel json.RawMessage // "off" unless a thinking_level_change says otherwise
	Model         *ModelRef
	// CompactionIndex is the index in Path of the compaction in effect, or -1.
	CompactionIndex int
	Path            []*Entry
	lastEdit        int // index in Path of the last context_edit, -1 for none
}

// ModelKey is the provider and model id of the context's model ("" when none is set):
// the model Pi resolves per-model settings for.
func (c *Context) ModelKey() (provider, model string) {
	if c.Model == nil {
		return "", ""
	}
	_ = json.Unmarshal(c.Model.Provider, &provider)
	_ = json.Unmarshal(c.Model.ModelID, &model)
	return provider, model
}

// Level is the thinking level as a string ("off" when none was set or it is not a
// string): what Pi passes to summary calls as the session's thinking level.
func (c *Context) Level() string {
	var level string
	if json.Unmarshal(c.ThinkingLevel, &level) != nil || level == "" {
		return "off"
	}
	return level
}

var offLevel = json.RawMessage(`"off"`)

// BuildContext is Pi's buildSessionContext for the path ending at leafID. An empty leafID
// means Pi's default leaf (the last entry); an unknown id also falls back to it.
func (ix *Index) BuildContext(leafID string) *Context {
	leaf := ix.Entry(leafID)
	if leaf == nil {
		leaf = ix.Leaf()
	}
	if leaf == nil {
		return &Context{ThinkingLevel: offLevel, CompactionIndex: -1, lastEdit: -1}
	}
	path, proj := ix.projectionOf(leaf)
	return contextOf(path, proj, ix.thinkingChanges > 0)
}

// ModelOfPath is the provider and model id in effect at the end of path (the newest
// model_change or assistant message), read from the end without building the context.
func ModelOfPath(path []*Entry) (provider, model string) {
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		var ref *ModelRef
		switch e.Type {
		case TypeModelChange:
			ref = &ModelRef{Provider: e.RawField("provider"), ModelID: e.RawField("modelId")}
		case TypeMessage:
			if m, err := e.Message(); err == nil && m.Role == RoleAssistant {
				ref = &ModelRef{Provider: m.ProviderJSON(), ModelID: m.ModelJSON()}
			}
		}
		if ref != nil {
			return (&Context{Model: ref}).ModelKey()
		}
	}
	return "", ""
}

// ContextOfPath builds the context of a root-first path (Pi's
// buildSessionContext(pathEntries), whose leaf is the path's last entry).
func ContextOfPath(path []*Entry) *Context {
	return ContextOfProjection(path, ProjectPath(path))
}

// ContextOfProjection is ContextOfPath for a path and its projection.
func ContextOfProjection(path []*Entry, p Projection) *Context { return contextOf(path, p, true) }

// contextOf is ContextOfProjection; without thinking-level changes in the file (known to
// its index), the path is walked back only as far as the model in effect.
func contextOf(path []*Entry, p Projection, thinkingChanges bool) *Context {
	c := &Context{ThinkingLevel: offLevel, CompactionIndex: p.LastCompaction, Path: path,
		Entries: p.Entries, Messages: p.Messages, lastEdit: p.LastEdit}
	// What is in effect is what was set last: found from the end of the path.
	thinkingFound, modelFound := !thinkingChanges, false
	for i := len(path) - 1; i >= 0 && !(thinkingFound && modelFound); i-- {
		e := path[i]
		switch e.Type {
		case TypeThinkingLevelChange:
			if !thinkingFound {
				c.ThinkingLevel, thinkingFound = e.RawField("thinkingLevel"), true
			}
		case TypeModelChange:
			if !modelFound {
				c.Model, modelFound = &ModelRef{Provider: e.RawField("provider"), ModelID: e.RawField("modelId")}, true
			}
		case TypeMessage:
			if !modelFound {
				if m, err := e.Message(); err == nil && m.Role == RoleAssistant {
					c.Model, modelFound = &ModelRef{Provider: m.ProviderJSON(), ModelID: m.ModelJSON()}, true
				}
			}
		}
	}
	return c
}

// contextSpan says which entries of a path make up its context: with a compaction in
// effect its summary, then the kept entries [keptFrom, keptTo) before it, then every
// entry from after on; without one, every entry (after is 0).
type contextSpan struct {
	summary          *Entry
	keptFrom, keptTo int
	after            int
}

// spanOf is Pi's choice of context entries, given the index of the last compaction on
// the path (-1 for none).
func spanOf(path []*Entry, compactionIndex int) contextSpan {
	if compactionIndex < 0 {
		return contextSpan{}
	}
	comp := path[compactionIndex]
	// Pi finds the compaction by id, so with a duplicated id the first match counts.
	first := compactionIndex
	for i, e := range path {
		if e.Type == TypeCompaction && e.ID == comp.ID {
			first = i
			break
		}
	}
	sp := contextSpan{summary: comp, keptFrom: first, keptTo: first, after: first + 1}
	firstKept := comp.Compaction().FirstKeptEntryID
	for i := 0; i < first; i++ {
		if path[i].ID == firstKept {
			sp.keptFrom = i
			break
		}
	}
	return sp
}

// ContextTokensOfPath is the context figure Pi 1.6.0 reports and compacts on for the
// path (ProjectedContextTokens(...).Tokens).
func ContextTokensOfPath(path []*Entry) float64 {
	return ProjectedContextTokens(path).Tokens
}

// ProjectedContextTokens is Pi 1.6.0's estimateProjectedContextTokens over the projection
// of a root-first path: estimateContextTokens of the projected messages while the usage
// it rests on was recorded after the latest context edit and compaction on the path;
// otherwise (usage stale or absent) the estimate of every message, the system messages
// counted once as their replay.
func ProjectedContextTokens(path []*Entry) ContextTokens {
	return ProjectedTokens(path, ProjectPath(path))
}

// ProjectedTokens is ProjectedContextTokens for a path and its projection.
func ProjectedTokens(path []*Entry, p Projection) ContextTokens {
	msgs := p.Messages
	est := EstimateContextTokens(msgs)
	if est.LastUsageIndex != nil && usageAfter(path, p, *est.LastUsageIndex) {
		return est
	}
	var tokens float64
	if sys := CurrentSystemMessage(msgs); sys != nil {
		tokens = float64(EstimateTokens(sys))
	}
	for _, m := range msgs {
		if m.Role != RoleSystem {
			tokens += float64(EstimateTokens(m))
		}
	}
	return ContextTokens{Tokens: tokens, TrailingTokens: tokens}
}

// usageAfter reports whether the entry of projected message usage comes, on the path,
// after the latest context edit and compaction (Pi places that entry by its id: the
// first entry with it). The usage is near the end: its entry is found from the end of
// the projection and of the path, and ids are compared only before the latest edit or
// compaction, when there is one.
func usageAfter(path []*Entry, p Projection, usage int) bool {
	var usageEntry *Entry
	end := len(p.Messages)
	for i := len(p.Entries) - 1; i >= 0 && usageEntry == nil; i-- {
		start := end - len(p.Entries[i].Messages)
		if usage >= start && usage < end {
			usageEntry = p.Entries[i].Entry
		}
		end = start
	}
	if usageEntry == nil {
		return false
	}
	latest := max(p.LastEdit, p.LastCompaction)
	at := -1 // an index of the entry on the path
	for i := len(path) - 1; i > latest; i-- {
		if path[i] == usageEntry {
			at = i
			break
		}
	}
	if at < 0 {
		return false // at or before the latest edit or compaction, or not on the path
	}
	for _, e := range path[:latest+1] {
		if e.ID == usageEntry.ID {
			return false // an earlier entry with its id is where Pi places it
		}
	}
	return true
}

// LastCompactionIndex is the index of the last compaction on a path (the one in
// effect), or -1.
func LastCompactionIndex(path []*Entry) int {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == TypeCompaction {
			return i
		}
	}
	return -1
}

// ContextUsage is Pi 1.6.0's getContextUsage for a root-first path and a context window:
// the projected context figure and its percentage of the window, or nil for both after a
// compaction until a projected assistant reply with usage follows it (the last usage then
// describes the context before the compaction).
func ContextUsage(path []*Entry, window int) (tokens, percent *float64) {
	return contextUsage(path, ProjectPath(path), window) // one projection: the usage rule and the figure both read it
}

// projection is the projection the context was built from.
func (c *Context) projection() Projection {
	return Projection{Entries: c.Entries, Messages: c.Messages, LastCompaction: c.CompactionIndex, LastEdit: c.lastEdit}
}

// Tokens is ProjectedContextTokens of the context's path, from its projection.
func (c *Context) Tokens() ContextTokens { return ProjectedTokens(c.Path, c.projection()) }

// Usage is ContextUsage of the context's path, from the projection the context holds.
func (c *Context) Usage(window int) (tokens, percent *float64) {
	return contextUsage(c.Path, c.projection(), window)
}

func contextUsage(path []*Entry, proj Projection, window int) (tokens, percent *float64) {
	if latest := proj.LastCompaction; latest >= 0 {
		at := latest
		for i, e := range path {
			if e.ID == path[latest].ID {
				at = i
				break
			}
		}
		withUsage := map[string]bool{}
		for _, pe := range proj.Entries {
			for _, m := range pe.Messages {
				if AssistantUsage(m) != nil {
					withUsage[pe.Entry.ID] = true
				}
			}
		}
		known := false
		for _, e := range path[at+1:] {
			if withUsage[e.ID] {
				known = true
				break
			}
		}
		if !known {
			return nil, nil
		}
	}
	t := ProjectedTokens(path, proj).Tokens
	p := t / float64(window) * 100
	return &t, &p
}
