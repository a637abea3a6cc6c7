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
	for i, e := range path {
		switch e.Type {
		case TypeThinkingLevelChange:
			c.ThinkingLevel = e.RawField("thinkingLevel")
		case TypeModelChange:
			c.Model = &ModelRef{Provider: e.RawField("provider"), ModelID: e.RawField("modelId")}
		case TypeMessage:
			if m, err := e.Message(); err == nil && m.Role == RoleAssistant {
				c.Model = &ModelRef{Provider: m.ProviderRaw, ModelID: m.ModelRaw}
			}
		case TypeCompaction:
			c.CompactionIndex = i
		}
	}
	appendMsg := func(e *Entry) {
		switch e.Type {
		case TypeMessage:
			if m, err := e.Message(); err == nil {
				c.Messages = append(c.Messages, m)
			}
		case TypeCustomMessage:
			c.Messages = append(c.Messages, CustomMessage(e))
		case TypeBranchSummary:
			if truthyRaw(e.RawField("summary")) {
				c.Messages = append(c.Messages, BranchSummaryMessage(e))
			}
		}
	}
	if c.CompactionIndex < 0 {
		for _, e := range path {
			appendMsg(e)
		}
		return c
	}
	comp := path[c.CompactionIndex]
	c.Messages = append(c.Messages, CompactionSummaryMessage(comp))
	// Pi finds the compaction by id, so with a duplicated id the first match counts.
	ci := c.CompactionIndex
	for i, e := range path {
		if e.Type == TypeCompaction && e.ID == comp.ID {
			ci = i
			break
		}
	}
	firstKept := comp.Compaction().FirstKeptEntryID
	found := false
	for i := 0; i < ci; i++ {
		if path[i].ID == firstKept {
			found = true
		}
		if found {
			appendMsg(path[i])
		}
	}
	for i := ci + 1; i < len(path); i++ {
		appendMsg(path[i])
	}
	return c
}
