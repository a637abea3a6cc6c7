package llm

import (
	"cmp"
	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"math"
)

// reasoningLevel is the reasoning a request asks of m at the session's thinking
// level: compaction passes the level only to a reasoning model and not when it is "off"
// (createSummarizationOptions), and the provider clamps it to the model's levels.
func reasoningLevel(m *catalog.Model, level string) string {
	if !m.Reasoning || level == "" || level == "off" {
		return ""
	}
	if l := catalog.ClampLevel(m, level); l != "off" {
		return l
	}
	return ""
}

// thinkingBudgets are pi-ai's DEFAULT_THINKING_BUDGETS (requests carry no
// settings budgets).
var thinkingBudgets = map[string]int{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}

// thinkingBudget is pi-ai's thinkingBudgetForLevel with the default budgets ("xhigh" and
// "max" count as "high").
func thinkingBudget(level string) int {
	if level == "xhigh" || level == "max" {
		level = "high"
	}
	return thinkingBudgets[level]
}

// samplingParams is pi-ai's resolveSamplingParams: the model's samplingParams and those
// of its clamped thinking level.
func samplingParams(m *catalog.Model, level string) map[string]any {
	if level == "" {
		level = "off"
	}
	eff := catalog.ClampLevel(m, level)
	byLevel := m.SamplingParamsByThinkingLevel[eff]
	if m.SamplingParams == nil && byLevel == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range m.SamplingParams {
		out[k] = v
	}
	for k, v := range byLevel {
		out[k] = v
	}
	return out
}

// maxTokensFor is the output limit every API starts from: the model's maxTokens fitted
// into its window (buildBaseOptions' clampMaxTokensToContext).
func maxTokensFor(m *catalog.Model, req Request) int {
	maxTokens := cmp.Or(max(0, req.MaxTokens), max(0, m.MaxTokens), DefaultMaxTokens)
	return clampMaxTokens(maxTokens, m.ContextWindow, req.System, req.User)
}

// nullish is JavaScript's v ?? d.
func nullish(v any, d any) any {
	if v == nil {
		return d
	}
	return v
}

// offValue is thinkingLevelMap.off as a value (nil for null or absent).
func offValue(m *catalog.Model) any {
	if v, ok := m.ThinkingLevelMap["off"]; ok && v != nil {
		return *v
	}
	return nil
}

// DefaultMaxTokens is Pi's output limit of a custom model that names none.
const DefaultMaxTokens = 16384

// clampMaxTokens is pi-ai 1.6.0's clampMaxTokensToContext for a request of a system prompt
// and one user text: the model's limit, shrunk so that the input (estimated at 3.5
// characters a token) and a safety margin (4096 tokens, or 15% of the input while that
// still leaves 32768 tokens) fit the window; at least 1.
func clampMaxTokens(maxTokens, window int, texts ...string) int {
	if window <= 0 {
		return max(1, maxTokens)
	}
	input := 0
	for _, t := range texts {
		input += int(math.Ceil(float64(utf16Len(t)) / 3.5))
	}
	margin := max(4096, int(math.Ceil(float64(input)*0.15)))
	room := window - input - margin
	if room < 32768 {
		room = min(32768, window-input-4096)
	}
	return min(maxTokens, max(1, room))
}

// utf16Len is a string's length in UTF-16 code units, JavaScript's String.length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
