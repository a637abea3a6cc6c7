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

// Context is what Pi's buildSessionContext returns: the messages sent to the LLM (as
// AgentMessages), the thinking level and the model.
type Context struct {
	Messages      []*Message
	ThinkingLevel json.RawMessage // "off" unless a thinking_level_change says otherwise
	Model         *ModelRef
	// CompactionIndex is the index in Path of the compaction in effect, or -1.
	CompactionIndex int
	Path            []*Entry
}

var offLevel = json.RawMessage(`"off"`)

// BuildContext is Pi's buildSessionContext for the path ending at leafID. An empty leafID
// means Pi's default leaf (the last entry); an unknown id also falls back to it.
func (ix *Index) BuildContext(leafID string) *Context {
	leaf := ix.byID[leafID]
	if leaf == nil {
		leaf = ix.Leaf()
	}
	if leaf == nil {
		return &Context{ThinkingLevel: offLevel, CompactionIndex: -1}
	}
	return ContextOfPath(ix.pathFrom(leaf))
}

// ContextOfPath builds the context of a root-first path (Pi's
// buildSessionContext(pathEntries), whose leaf is the path's last entry).
func ContextOfPath(path []*Entry) *Context {
	c := &Context{ThinkingLevel: offLevel, CompactionIndex: -1, Path: path}
	// What is in effect is what was set last: found from the end of the path.
	thinkingFound, modelFound := false, false
	for i := len(path) - 1; i >= 0; i-- {
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
					c.Model, modelFound = &ModelRef{Provider: m.ProviderRaw, ModelID: m.ModelRaw}, true
				}
			}
		case TypeCompaction:
			if c.CompactionIndex < 0 {
				c.CompactionIndex = i
			}
		}
	}
	c.Messages = make([]*Message, 0, len(path)+1)
	sp := spanOf(path, c.CompactionIndex)
	if sp.summary != nil {
		c.Messages = append(c.Messages, CompactionSummaryMessage(sp.summary))
	}
	for _, r := range [2][2]int{{sp.keptFrom, sp.keptTo}, {sp.after, len(path)}} {
		for i := r[0]; i < r[1]; i++ {
			if m := contextMessage(path[i]); m != nil {
				c.Messages = append(c.Messages, m)
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

// contextMessage is the message an entry puts in the context, or nil.
func contextMessage(e *Entry) *Message {
	switch e.Type {
	case TypeMessage:
		if m, err := e.Message(); err == nil {
			return m
		}
	case TypeCustomMessage:
		return CustomMessage(e)
	case TypeBranchSummary:
		if truthyRaw(e.RawField("summary")) {
			return BranchSummaryMessage(e)
		}
	}
	return nil
}

// ContextTokensOfPath is EstimateContextTokens(ContextOfPath(path).Messages).Tokens
// without building the context: it walks the context from its end, and only as far as
// the last assistant message with usage (the figure stops there).
func ContextTokensOfPath(path []*Entry) float64 {
	var trailing []*Message
	// done adds m (walking backwards) and reports the figure once it is known.
	var tokens float64
	done := func(m *Message) bool {
		if m == nil {
			return false
		}
		if u := AssistantUsage(m); u != nil {
			var after float64 // summed in context order, as Pi sums it
			for i := len(trailing) - 1; i >= 0; i-- {
				after += float64(EstimateTokens(trailing[i]))
			}
			tokens = CalculateContextTokens(*u) + after
			return true
		}
		trailing = append(trailing, m)
		return false
	}
	sp := spanOf(path, LastCompactionIndex(path))
	for _, r := range [2][2]int{{sp.after, len(path)}, {sp.keptFrom, sp.keptTo}} {
		for i := r[1] - 1; i >= r[0]; i-- {
			if done(contextMessage(path[i])) {
				return tokens
			}
		}
	}
	if sp.summary != nil && done(CompactionSummaryMessage(sp.summary)) {
		return tokens
	}
	// No usage anywhere: the sum of the estimates, in context order.
	for i := len(trailing) - 1; i >= 0; i-- {
		tokens += float64(EstimateTokens(trailing[i]))
	}
	return tokens
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
