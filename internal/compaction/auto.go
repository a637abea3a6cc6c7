package compaction

import (
	"encoding/json"
	"regexp"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Recovery failure texts, in Pi 1.6.0's words.
const (
	OverflowRecoveryFailed  = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model."
	TruncatedRecoveryFailed = "Truncated response recovery failed after one compact-and-retry attempt."
)

// overflowPatterns are pi-ai 1.6.0's OVERFLOW_PATTERNS: provider error texts that mean
// the request did not fit the model's context.
var overflowPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)prompt (?:is )?too long`),
	regexp.MustCompile(`(?i)prompt exceeds max length`),
	regexp.MustCompile(`(?i)request_too_large`),
	regexp.MustCompile(`(?i)input is too long for requested model`),
	regexp.MustCompile(`(?i)exceeds the context window`),
	regexp.MustCompile(`(?i)exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))`),
	regexp.MustCompile(`(?i)context window exceeded`),
	regexp.MustCompile(`(?i)input token count.*exceeds the maximum`),
	regexp.MustCompile(`(?i)maximum prompt length is \d+`),
	regexp.MustCompile(`(?i)reduce the length of the messages`),
	regexp.MustCompile(`(?i)maximum context length is \d+ tokens`),
	regexp.MustCompile(`(?i)exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?`),
	regexp.MustCompile(`(?i)input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)`),
	regexp.MustCompile(`(?i)exceeds the limit of \d+`),
	regexp.MustCompile(`(?i)exceeds the available context size`),
	regexp.MustCompile(`(?i)greater than the context length`),
	regexp.MustCompile(`(?i)context window exceeds limit`),
	regexp.MustCompile(`(?i)exceeded model token limit`),
	regexp.MustCompile(`(?i)too large for model with \d+ maximum context length`),
	regexp.MustCompile(`(?i)prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?`),
	regexp.MustCompile(`(?i)model_context_window_exceeded`),
	regexp.MustCompile(`(?i)prompt too long; exceeded (?:max )?context length`),
	regexp.MustCompile(`(?i)range of input length should be`),
	regexp.MustCompile(`(?i)context[_ ]length[_ ]exceeded`),
	regexp.MustCompile(`(?i)too many tokens`),
	regexp.MustCompile(`(?i)token limit exceeded`),
	regexp.MustCompile(`(?i)^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))`),
}

var (
	cerebrasBodyless    = regexp.MustCompile(`(?i)^4(?:00|13)\s*(?:status code)?\s*\(no body\)`)
	nonOverflowPatterns = []*regexp.Regexp{
		regexp.MustCompile(`(?i)^(Throttling error|Service unavailable):`),
		regexp.MustCompile(`(?i)rate limit`),
		regexp.MustCompile(`(?i)too many requests`),
	}
)

// IsContextOverflow is pi-ai 1.6.0's isContextOverflow: an error whose text says the
// context was exceeded (not a rate limit), a successful answer whose input exceeded the
// window (silent overflow), or a length stop with no output and the window full.
// window 0 checks the error text only.
func IsContextOverflow(m *session.Message, window int) bool {
	if m.StopReason == "error" && m.ErrorMessage() != "" {
		non := false
		for _, p := range nonOverflowPatterns {
			non = non || p.MatchString(m.ErrorMessage())
		}
		if !non {
			for _, p := range overflowPatterns {
				if p.MatchString(m.ErrorMessage()) {
					return true
				}
			}
			if m.Provider == "cerebras" && cerebrasBodyless.MatchString(m.ErrorMessage()) {
				return true
			}
		}
	}
	if window > 0 && m.Usage != nil {
		input := m.Usage.Input + m.Usage.CacheRead
		if m.StopReason == "stop" && input > float64(window) {
			return true
		}
		if m.StopReason == "length" && m.Usage.Output == 0 && input >= 0.99*float64(window) {
			return true
		}
	}
	return false
}

// AutoDecision is what Pi 1.6.0's _checkCompaction decides for an assistant message.
type AutoDecision struct {
	// Reason is "overflow", "threshold", or "" for no compaction.
	Reason string
	// WillRetry: the turn is retried after the compaction (an error or a length stop);
	// a silent overflow (a completed answer) compacts without a retry.
	WillRetry bool
	// Omit are the entries to hide from the context (context_edit with replacement
	// null) before the compaction: the failed attempt and its tool results.
	Omit []string
	// Failed, when set, is the refusal of a second recovery in the same turn: no
	// compaction, an end event with this error.
	Failed string
}

// AutoInput is what the decision reads.
type AutoInput struct {
	// Path is the branch, root first, ending at the session's leaf; Assistant is the
	// assistant message's entry on it.
	Path      []*session.Entry
	Assistant *session.Entry
	Settings  session.CompactionSettings
	// Window is the model's context window; MaxTokens its output limit (for a length
	// stop: recoverable when the answer ended below it).
	Window, MaxTokens int
	// RecoveryTried: an overflow or length recovery already ran in this turn.
	RecoveryTried bool
}

// AfterAppend reads appended entries as Pi 1.6.0's agent session does before
// _checkCompaction: the last assistant message is the one checked (nil when none was
// appended), and the flag of a recovery already tried in this turn (tried) is cleared by
// a user message (a new turn) or by an assistant message that did not stop on an error or
// its length.
func AfterAppend(appended []*session.Entry, tried bool) (last *session.Entry, stillTried bool) {
	for _, e := range appended {
		m, err := e.Message()
		if err != nil {
			continue
		}
		switch m.Role {
		case session.RoleUser:
			tried = false
		case session.RoleAssistant:
			last = e
			if m.StopReason != "error" && m.StopReason != "length" {
				tried = false
			}
		}
	}
	return last, tried
}

// DecideAuto is Pi 1.6.0's _checkCompaction for a hosted session, after an assistant
// message was appended: nothing for an aborted or pre-compaction message; overflow
// recovery (omit the failed attempt and its tool results, compact, retry once) for a
// context overflow or a recoverable length stop; a compaction without retry for a
// completed answer that overflowed; otherwise the threshold, measured on the projected
// estimate when the context holds edits, on an estimate when the answer has no usage,
// and on the answer's usage otherwise.
func DecideAuto(in AutoInput) AutoDecision {
	none := AutoDecision{}
	msg, err := in.Assistant.Message()
	if err != nil || msg.Role != session.RoleAssistant || !in.Settings.Enabled || msg.StopReason == "aborted" {
		return none
	}
	var msgTime float64
	_ = json.Unmarshal(msg.Timestamp, &msgTime)
	at := -1
	for i, e := range in.Path {
		if e == in.Assistant || e.ID == in.Assistant.ID {
			at = i
		}
	}
	if at < 0 {
		return none
	}
	latest := -1
	for i := len(in.Path) - 1; i >= 0; i-- {
		if in.Path[i].Type == session.TypeCompaction {
			latest = i
			break
		}
	}
	if latest >= 0 {
		if ct, ok := in.Path[latest].TimeMillis(); ok && msgTime <= ct {
			return none // stale: from before the latest compaction
		}
	}
	proj := session.Project(in.Path)
	projected := false
	hasEdits := false
	for _, pe := range proj {
		if pe.Entry.Type == session.TypeContextEdit {
			hasEdits = true
		}
		if pe.Entry.ID == in.Assistant.ID {
			for _, m := range pe.Messages {
				projected = projected || m.Role == session.RoleAssistant
			}
		}
	}
	after := in.Path[at+1:]
	postEdit, postCompaction := false, false
	var lastEditOfAssistant *session.Entry
	for _, e := range after {
		switch e.Type {
		case session.TypeContextEdit:
			postEdit = true
			if t, ok := e.ContextEditTarget(); ok && t == in.Assistant.ID {
				lastEditOfAssistant = e
			}
		case session.TypeCompaction:
			postCompaction = true
		}
	}
	retained := !postCompaction && (lastEditOfAssistant == nil || string(lastEditOfAssistant.RawField("replacement")) != "null")
	usageMatches := projected && !postEdit
	explicit := msg.StopReason == "error" && IsContextOverflow(msg, 0)
	overflow := (explicit && retained) || (usageMatches && IsContextOverflow(msg, in.Window))
	length := projected && msg.StopReason == "length" && in.MaxTokens > 0 && msg.Usage != nil && msg.Usage.Output < float64(in.MaxTokens)
	if overflow || length {
		willRetry := msg.StopReason != "stop"
		if !willRetry {
			return AutoDecision{Reason: "overflow"}
		}
		if in.RecoveryTried {
			if overflow {
				return AutoDecision{Reason: "overflow", Failed: OverflowRecoveryFailed}
			}
			return AutoDecision{Reason: "overflow", Failed: TruncatedRecoveryFailed}
		}
		return AutoDecision{Reason: "overflow", WillRetry: true, Omit: recoveryTargets(proj, in.Assistant, msg)}
	}
	var tokens float64
	direct := 0.0
	if u := msg.Usage; u != nil {
		direct = session.CalculateContextTokens(*u)
	}
	switch {
	case hasEdits:
		tokens = session.ProjectedContextTokens(in.Path).Tokens
	case msg.StopReason == "error" || direct == 0:
		msgs := session.ProjectedMessages(proj)
		est := session.EstimateContextTokens(msgs)
		if est.LastUsageIndex != nil && latest >= 0 {
			var ut float64
			_ = json.Unmarshal(msgs[*est.LastUsageIndex].Timestamp, &ut)
			if ct, ok := in.Path[latest].TimeMillis(); ok && msgs[*est.LastUsageIndex].Role == session.RoleAssistant && ut <= ct {
				return none // the usage it rests on describes the context before the compaction
			}
		}
		tokens = est.Tokens
	default:
		tokens = direct
	}
	if session.ShouldCompact(tokens, in.Window, in.Settings) {
		return AutoDecision{Reason: "threshold"}
	}
	return none
}

// recoveryTargets are Pi's _omitRecoveryAttempt targets: the failed assistant message
// and the tool results after it (up to the next assistant message) that answer its tool
// calls.
func recoveryTargets(proj []session.ProjectedEntry, assistant *session.Entry, msg *session.Message) []string {
	calls := map[string]bool{}
	for _, c := range msg.ToolCalls() {
		calls[c.ID] = true
	}
	out := []string{assistant.ID}
	seen := false
	for _, pe := range proj {
		if pe.Entry.ID == assistant.ID {
			seen = true
			continue
		}
		if !seen {
			continue
		}
		for _, m := range pe.Messages {
			if m.Role == session.RoleAssistant {
				return out
			}
			if m.Role == session.RoleToolResult && calls[m.ToolCallID] {
				out = append(out, pe.Entry.ID)
			}
		}
	}
	return out
}
