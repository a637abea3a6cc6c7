package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
)

// The anthropic-messages request, as pi-ai 1.6.0's streamSimple and buildParams
// write it for a system prompt and one user text with cacheRetention
// "none": POST {baseUrl}/v1/messages?beta=true with the betas in anthropic-beta, system as
// text blocks (Claude Code's identity first for an account-login token), max_tokens fitted
// to the window, and the thinking pi-ai chooses (disabled, a budget, adaptive with an
// effort, or effort messages), and the headers Anthropic's client sends (x-api-key or a
// bearer token, anthropic-version). The stream's events are read as pi-ai reads them.

const claudeCodeIdentity = "You are Claude Code, Anthropic's official CLI for Claude."

// claudeCodeVersion is the claude-cli version pi-ai 1.6.0 presents with an account token.
const claudeCodeVersion = "2.1.322"

func isAnthropicOAuthToken(key string) bool { return strings.Contains(key, "sk-ant-oat") }

// anthropicEffort is pi-ai's mapThinkingLevelToEffort.
func anthropicEffort(m *catalog.Model, level string) string {
	if v, ok := m.ThinkingLevelMap[level]; ok && v != nil {
		return *v
	}
	switch level {
	case "minimal", "low":
		return "low"
	case "medium":
		return "medium"
	}
	return "high"
}

// anthropicBody is the body and the betas of a request to m.
func anthropicBody(m *catalog.Model, req Request, oauth bool, headers map[string]string) (map[string]any, []string) {
	prompt := req.User
	level := reasoningLevel(m, req.ThinkingLevel)
	forceAdaptive, _ := m.CompatBool("forceAdaptiveThinking")
	midConvoEffort, _ := m.CompatBool("supportsMidConvoEffort")
	maxTokens := maxTokensFor(m, req)
	thinkingEnabled := level != ""
	effort := ""
	budget := 0
	switch {
	case !thinkingEnabled:
	case forceAdaptive:
		effort = anthropicEffort(m, level)
	default:
		budget = thinkingBudget(level)
		adjusted := min(maxTokens+budget, m.MaxTokens)
		if adjusted <= budget {
			budget = min(budget, max(0, adjusted-1024))
		}
		maxTokens = clampMaxTokens(adjusted, m.ContextWindow, req.System, prompt)
		budget = min(budget, max(0, maxTokens-1024))
	}
	offMap, offPresent := m.ThinkingLevelMap["off"]
	thinkingDisabled := m.Reasoning && !thinkingEnabled && !(offPresent && offMap == nil)
	effortMessages := midConvoEffort && !thinkingDisabled
	messages := []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": prompt}}}}
	if effortMessages {
		active := effort
		if active == "" {
			active = "high"
		}
		messages = append(messages, map[string]any{"role": "system", "content": []any{}, "output_config": map[string]any{"effort": active}})
	}
	body := map[string]any{
		"model":      m.ID,
		"messages":   messages,
		"max_tokens": maxTokens,
		"stream":     true,
	}
	system := []any{}
	if oauth {
		system = append(system, map[string]any{"type": "text", "text": claudeCodeIdentity})
	}
	body["system"] = append(system, map[string]any{"type": "text", "text": req.System})
	switch {
	case thinkingDisabled:
		body["thinking"] = map[string]any{"type": "disabled"}
	case effortMessages:
		body["thinking"] = map[string]any{"type": "adaptive", "display": "summarized",
			"block_binding": map[string]any{"prefix_mismatch_behavior": "drop_block"}}
		body["output_config"] = map[string]any{"effort": "low"}
	case m.Reasoning && thinkingEnabled && forceAdaptive:
		body["thinking"] = map[string]any{"type": "adaptive", "display": "summarized"}
		if effort != "" {
			body["output_config"] = map[string]any{"effort": effort}
		}
	case m.Reasoning && thinkingEnabled:
		if budget == 0 {
			budget = 1024
		}
		body["thinking"] = map[string]any{"type": "enabled", "budget_tokens": budget, "display": "summarized"}
	}
	fallbacks, _ := m.Compat["allowedFallbackModels"].([]any)
	if len(fallbacks) > 0 {
		var list []any
		for _, f := range fallbacks {
			if fm, ok := f.(map[string]any); ok {
				list = append(list, map[string]any{"model": fm["model"]})
			}
		}
		body["fallbacks"] = list
	}
	// The betas: a configured anthropic-beta header replaces pi-ai's choice.
	configured, isSet := "", false
	for _, h := range []map[string]string{m.Headers, headers} {
		for k, v := range h {
			if strings.EqualFold(k, "anthropic-beta") {
				configured, isSet = v, true
			}
		}
	}
	var betas []string
	add := func(b string) {
		for _, have := range betas {
			if have == b {
				return
			}
		}
		betas = append(betas, b)
	}
	if isSet {
		for _, b := range strings.Split(configured, ",") {
			if b = strings.TrimSpace(b); b != "" {
				add(b)
			}
		}
		return body, betas
	}
	if oauth {
		add("claude-code-20250219")
		add("oauth-2025-04-20")
	}
	if m.Reasoning && thinkingEnabled && !forceAdaptive {
		add("interleaved-thinking-2025-05-14")
	}
	if len(fallbacks) > 0 {
		add("server-side-fallback-2026-07-01")
	}
	if midConvoEffort {
		add("mid-conversation-output-config-2026-07-01")
		add("thinking-binding-controls-2026-08-01")
	}
	return body, betas
}

// anthropicVersion is the API version Anthropic's TypeScript client, which pi-ai uses,
// sends.
const anthropicVersion = "2023-06-01"

// anthropicAPI makes requests to an anthropic-messages model.
type anthropicAPI struct{ apiBase }

// anthropicEvent is the part of a stream event pi-ai reads; usage fields are pointers
// so that a null or absent one keeps the earlier figure.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message struct {
		Model string         `json:"model"`
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content_block"`
	Index int `json:"index"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		StopReason  string `json:"stop_reason"`
		StopDetails *struct {
			Explanation string `json:"explanation"`
		} `json:"stop_details"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              *float64 `json:"input_tokens"`
	OutputTokens             *float64 `json:"output_tokens"`
	CacheReadInputTokens     *float64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *float64 `json:"cache_creation_input_tokens"`
	CacheCreation            *struct {
		Ephemeral1h *float64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	OutputTokensDetails *struct {
		ThinkingTokens *float64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

func (a *anthropicAPI) attempt(parent context.Context, req Request, start time.Time, at Progress) (Result, *Error, error) {
	m := a.cfg.Model
	ci := &callInfo{}
	ctx, cancel := context.WithCancel(withCall(parent, ci))
	defer cancel()
	oauth := isAnthropicOAuthToken(a.cfg.Credential.APIKey)
	body, betas := anthropicBody(m, req, oauth, a.cfg.Credential.Headers)
	data, err := json.Marshal(body)
	if err != nil {
		return Result{}, nil, err
	}
	size := newAnswerSize(cmp.Or(askedTokens(body), m.MaxTokens))
	ci.maxLine = maxLineFor(size.asked)
	headers := map[string]string{"Accept": "application/json", "anthropic-version": anthropicVersion}
	key := a.cfg.Credential.APIKey
	switch {
	case key != "" && (oauth || m.Provider == "github-copilot"):
		headers["Authorization"] = "Bearer " + key
	case key != "":
		headers["x-api-key"] = key // as pi-ai sends a key
	}
	if oauth {
		headers["User-Agent"], headers["x-app"] = "claude-cli/"+claudeCodeVersion, "cli"
	}
	var final map[string]string
	if len(betas) > 0 {
		// pi-ai's betas, which a configured anthropic-beta replaced (anthropicBody).
		final = map[string]string{"anthropic-beta": strings.Join(betas, ",")}
	}
	usage := &Usage{}
	zero := 0.0
	usage.CacheWrite1h = &zero
	var texts []*strings.Builder
	blocks := map[int]*strings.Builder{}
	stop, stopErr := "", ""
	calledTool := false
	var read sseRead
	call := sseCall{endpoint: m.BaseURL, url: strings.TrimRight(m.BaseURL, "/") + "/v1/messages?beta=true", body: data, headers: headers, final: final}
	se, err := streamSSE(parent, ctx, cancel, ci, a.client, a.cfg, call, &read, func(ev sseEvent) bool {
		switch {
		case ev.Name == "" || ev.Name == "ping" || len(bytes.TrimSpace(ev.Data)) == 0:
			return true // as Anthropic's clients skip them
		case ev.Name == "error":
			read.failure = errorEvent(ev.Data)
			return false
		}
		var e anthropicEvent
		if read.failure = unmarshalEvent(ev.Data, &e); read.failure != nil {
			return false
		}
		if read.failure = size.add(len(e.ContentBlock.Text) + len(e.Delta.Text) + len(e.Delta.Thinking)); read.failure != nil {
			return false
		}
		switch e.Type {
		case "message_start":
			u := e.Message.Usage
			usage.Input, usage.Output, usage.CacheRead, usage.CacheWrite = val(u.InputTokens), val(u.OutputTokens), val(u.CacheReadInputTokens), val(u.CacheCreationInputTokens)
			h := 0.0
			if u.CacheCreation != nil {
				h = val(u.CacheCreation.Ephemeral1h)
			}
			usage.CacheWrite1h = &h
		case "content_block_start":
			switch e.ContentBlock.Type {
			case "text":
				b := &strings.Builder{}
				b.WriteString(e.ContentBlock.Text)
				blocks[e.Index] = b
				texts = append(texts, b)
			case "tool_use":
				calledTool = true
			}
		case "content_block_delta":
			if e.Delta.Type == "text_delta" {
				if b := blocks[e.Index]; b != nil {
					b.WriteString(e.Delta.Text)
				}
			}
		case "content_block_stop":
			delete(blocks, e.Index)
		case "message_delta":
			if e.Delta.StopReason != "" {
				stop = e.Delta.StopReason
				if stop == "refusal" {
					stopErr = "The model refused to complete the request"
					if e.Delta.StopDetails != nil && e.Delta.StopDetails.Explanation != "" {
						stopErr = e.Delta.StopDetails.Explanation
					}
				}
			}
			if u := e.Usage; u != nil {
				if u.InputTokens != nil {
					usage.Input = *u.InputTokens
				}
				if u.OutputTokens != nil {
					usage.Output = *u.OutputTokens
				}
				if u.CacheReadInputTokens != nil {
					usage.CacheRead = *u.CacheReadInputTokens
				}
				if u.CacheCreationInputTokens != nil {
					usage.CacheWrite = *u.CacheCreationInputTokens
				}
				if u.CacheCreation != nil && u.CacheCreation.Ephemeral1h != nil {
					h := *u.CacheCreation.Ephemeral1h
					usage.CacheWrite1h = &h
				}
				if u.OutputTokensDetails != nil && u.OutputTokensDetails.ThinkingTokens != nil {
					r := *u.OutputTokensDetails.ThinkingTokens
					usage.Reasoning = &r
				}
			}
		}
		usage.TotalTokens = usage.Input + usage.Output + usage.CacheRead + usage.CacheWrite
		read.chunks++
		reportTokens(req, at, start, read.chunks)
		return true
	})
	if se != nil || err != nil {
		return Result{}, se, err
	}
	piCost(m, usage)
	switch stop {
	case "":
		return failed(KindTransient, msgConnectionCut)
	case "max_tokens":
		return failed(KindLength, msgTokenCap)
	case "tool_use":
		calledTool = true
	case "end_turn", "pause_turn", "stop_sequence":
	case "refusal":
		return failed(KindFatal, stopErr)
	case "sensitive":
		return failed(KindFatal, "Provider stopped with: sensitive")
	default:
		return failed(KindFatal, "Unhandled stop reason: "+stop)
	}
	if calledTool {
		return failed(KindToolCall, msgToolCall)
	}
	parts := make([]string, len(texts))
	for i, b := range texts {
		parts[i] = b.String()
	}
	return finish(strings.Join(parts, "\n"), usage, m)
}
