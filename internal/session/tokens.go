package session

import (
	"math"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// CompactionSettings are Pi's compaction settings.
type CompactionSettings struct {
	Enabled          bool
	ReserveTokens    int
	KeepRecentTokens int
}

// DefaultCompactionSettings are Pi's DEFAULT_COMPACTION_SETTINGS.
var DefaultCompactionSettings = CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}

// CalculateContextTokens is Pi's calculateContextTokens: totalTokens, or the sum of the
// parts when totalTokens is 0 or absent.
func CalculateContextTokens(u Usage) float64 {
	if u.TotalTokens != 0 && !math.IsNaN(u.TotalTokens) {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// AssistantUsage returns the usage of an assistant message that is neither aborted nor
// errored and counts some tokens (Pi 0.80+ ignores an all-zero usage), or nil.
func AssistantUsage(m *Message) *Usage {
	if m == nil || m.Role != RoleAssistant || m.Usage == nil {
		return nil
	}
	if m.StopReason == "aborted" || m.StopReason == "error" {
		return nil
	}
	if !(CalculateContextTokens(*m.Usage) > 0) {
		return nil
	}
	return m.Usage
}

// LastAssistantUsage is Pi's getLastAssistantUsage over entries.
func LastAssistantUsage(entries []*Entry) *Usage {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Type != TypeMessage {
			continue
		}
		m, err := entries[i].Message()
		if err != nil {
			continue
		}
		if u := AssistantUsage(m); u != nil {
			return u
		}
	}
	return nil
}

// ContextTokens is Pi's estimateContextTokens result.
type ContextTokens struct {
	Tokens         float64 `json:"tokens"`
	UsageTokens    float64 `json:"usageTokens"`
	TrailingTokens float64 `json:"trailingTokens"`
	LastUsageIndex *int    `json:"lastUsageIndex"`
}

// EstimateContextTokens is Pi's estimateContextTokens: the last valid assistant usage
// plus estimates of the messages after it, or the sum of estimates when there is none.
func EstimateContextTokens(messages []*Message) ContextTokens {
	for i := len(messages) - 1; i >= 0; i-- {
		u := AssistantUsage(messages[i])
		if u == nil {
			continue
		}
		idx := i
		ct := ContextTokens{UsageTokens: CalculateContextTokens(*u), LastUsageIndex: &idx}
		for _, m := range messages[i+1:] {
			ct.TrailingTokens += float64(EstimateTokens(m))
		}
		ct.Tokens = ct.UsageTokens + ct.TrailingTokens
		return ct
	}
	var sum float64
	for _, m := range messages {
		sum += float64(EstimateTokens(m))
	}
	return ContextTokens{Tokens: sum, TrailingTokens: sum}
}

// ShouldCompact is Pi's shouldCompact (strictly greater than window - reserve).
func ShouldCompact(contextTokens float64, contextWindow int, s CompactionSettings) bool {
	return s.Enabled && contextTokens > float64(contextWindow-s.ReserveTokens)
}

// imageChars is what Pi counts for one image (in user messages since 0.76).
const imageChars = 4800

// contentChars is Pi's estimateTextAndImageContentChars: a string's length, or the text
// blocks' lengths plus imageChars per image.
func contentChars(m *Message) int {
	if str, ok := m.StringContent(); ok {
		return jsjson.Len16(str)
	}
	chars := 0
	for _, b := range m.Blocks() {
		chars += blockChars(false, b)
	}
	return chars
}

// blockChars is what estimateTokens counts of one content block: of a message that
// counts its content (text, and imageChars per image), or of an assistant's (text,
// thinking, a tool call's name and stringified arguments).
func blockChars(assistant bool, b Block) int {
	switch b.Type {
	case "text":
		return jsjson.Len16(b.Text)
	case "image":
		if !assistant {
			return imageChars
		}
	case "thinking":
		if assistant {
			return jsjson.Len16(b.Thinking)
		}
	case "toolCall":
		if assistant {
			return jsjson.Len16(b.Name) + b.ArgumentsLen16()
		}
	}
	return 0
}

// systemChars adds what a system message declares beyond its content: every non-empty
// section and the JSON of toolsAdded (toolsRemoved is not counted).
func systemChars(m *Message) int {
	chars := 0
	v, err := jsjson.Parse(m.Raw())
	if err != nil {
		return 0
	}
	if sec, ok := v.Get("sections"); ok && sec.Kind == jsjson.Object {
		for _, s := range sec.Vals {
			if s.Kind == jsjson.String {
				chars += jsjson.Len16(s.Str)
			}
		}
	}
	if add, ok := v.Get("toolsAdded"); ok {
		chars += jsjson.Len16(jsjson.Stringify(*add))
	}
	return chars
}

// EstimateTokens is Pi's estimateTokens: ceil(chars/4) with chars counted per role in
// UTF-16 code units.
func EstimateTokens(m *Message) int {
	if m == nil {
		return 0
	}
	if m.lazy() {
		if chars, ok := lazyContentChars(m); ok {
			return (chars + 3) / 4
		}
	}
	m = m.loaded() // one read of the body, not one per accessor
	chars := 0
	switch m.Role {
	case RoleSystem:
		chars = contentChars(m) + systemChars(m)
	case RoleUser, RoleCustom, RoleToolResult:
		chars = contentChars(m)
	case RoleAssistant:
		for _, b := range m.Blocks() {
			chars += blockChars(true, b)
		}
	case RoleBashExecution:
		chars = jsjson.Len16(m.Bash().Command) + jsjson.Len16(m.b().output)
	case RoleBranchSummary, RoleCompactionSummary:
		chars = jsjson.Len16(m.b().summary)
	default:
		return 0
	}
	return (chars + 3) / 4
}

// lazyContentChars is what EstimateTokens counts of a message of a loaded file whose
// estimate is its content (a user, custom or tool result message) or its blocks (an
// assistant's), measured in one scan of its line where the blocks lie: the cut point
// of a compaction estimates every message it walks past, and decoding each into a
// Message with its blocks cost more than reading its line. ok is false for the other
// roles and for a line that no longer reads as a message, which EstimateTokens then
// decodes as before.
func lazyContentChars(m *Message) (chars int, ok bool) {
	if !countsContent(m.Role) {
		return 0, false
	}
	line := m.ent.Raw()
	if line == nil {
		return 0, false
	}
	return lineContentChars(line)
}

// countsContent reports the roles whose estimate lazyContentChars measures.
func countsContent(role string) bool {
	switch role {
	case RoleUser, RoleCustom, RoleToolResult, RoleAssistant:
		return true
	}
	return false
}

// lineContentChars is lazyContentChars of the message of an entry's line.
func lineContentChars(line []byte) (chars int, ok bool) {
	es := lineScans.Get().(*jsjson.EntryScan)
	defer func() { es.Block = nil; lineScans.Put(es) }()
	// The blocks of every content array scanned (views of the line): only those of the
	// last content member of the last message member are the message's, and what they
	// count depends on the role, known once the message is scanned.
	type seen struct {
		at    int
		block Block
	}
	blocks := make([]seen, 0, 8)
	es.Block = func(at int, block, _ []jsjson.Field) { blocks = append(blocks, seen{at, blockOf(block)}) }
	if err := jsjson.ScanEntry(line, es); err != nil || !es.MessageFound {
		return 0, false
	}
	var role string
	var content []byte
	for _, f := range es.Message { // the last ones, as JSON.parse keeps
		switch f.Key {
		case "role":
			role, _ = rawString(f.Value)
		case "content":
			content = f.Value
		}
	}
	if !countsContent(role) {
		return 0, false
	}
	assistant := role == RoleAssistant
	if len(content) == 0 {
		return 0, true
	}
	if content[0] != '[' {
		if str, isStr := rawString(content); isStr && !assistant {
			return jsjson.Len16(str), true
		}
		return 0, true
	}
	at := offsetIn(line, content)
	for _, s := range blocks {
		if s.at == at {
			chars += blockChars(assistant, s.block)
		}
	}
	return chars, true
}

// batchSpan is the most EstimateTokensEach reads at once.
const batchSpan = 256 << 10

// EstimateTokensEach sets out[i] to EstimateTokens(ms[i]) (out as long as ms). The
// lines of the messages of a loaded file that lie within batchSpan of each other are
// read in one read rather than one each (what a walk over the newest messages of a
// session, as the cut point's, spends most of its time on), and checked as a read of
// one line is; a line that does not check out is read on its own, which reports it.
func EstimateTokensEach(ms []*Message, out []int) {
	var src *source
	lo, hi, n := int64(math.MaxInt64), int64(0), 0
	for _, m := range ms {
		if e := batchable(m, src); e != nil {
			src = e.src
			lo, hi, n = min(lo, e.off), max(hi, e.off+int64(e.n)), n+1
		}
	}
	var window []byte
	if n > 1 && hi-lo <= batchSpan {
		window = src.span(lo, hi)
	}
	for i, m := range ms {
		if e := batchable(m, src); e != nil && window != nil {
			if line := windowLine(window, lo, e); line != nil {
				if chars, ok := lineContentChars(line); ok {
					out[i] = (chars + 3) / 4
					continue
				}
			}
		}
		out[i] = EstimateTokens(m)
	}
}

// batchable is the entry of a message whose line EstimateTokensEach may read with
// others of src (any loaded file's when src is nil), or nil.
func batchable(m *Message, src *source) *Entry {
	if m == nil || !m.lazy() || !countsContent(m.Role) {
		return nil
	}
	e := m.ent
	if e.mem != nil || e.src == nil || src != nil && e.src != src {
		return nil
	}
	return e
}

// windowLine is e's line in w, the bytes of a file from lo, when it is still the line
// that was loaded there (as source.line checks it), or nil.
func windowLine(w []byte, lo int64, e *Entry) []byte {
	at, n := e.off-lo, int64(e.n)
	if at < 0 || n < 2 || at+n > int64(len(w)) {
		return nil
	}
	b := w[at : at+n : at+n]
	if b[0] != '{' || b[n-1] != '}' || at+n < int64(len(w)) && !isJSONSpace(w[at+n]) || !holdsID(b, e.ID) {
		return nil
	}
	return b
}

// ArgumentsLen16 is JSON.stringify(arguments).length of a tool call, as estimateTokens
// counts it. Absent arguments stringify to undefined, whose length Pi would not survive;
// count them as 0.
func (b Block) ArgumentsLen16() int {
	if len(b.Arguments) == 0 {
		return 0
	}
	n, err := jsjson.StringifiedLen16(b.Arguments)
	if err != nil {
		return 0
	}
	return n
}
