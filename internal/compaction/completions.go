package compaction

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
)

// The openai-completions body of a summary request, as pi-ai 1.6.0's buildParams writes
// it for a context of the summarization system prompt and one user text, with
// cacheRetention "none" (compaction's completeSummarization): the instruction role, the
// output limit and its field, store, usage in the stream, and the reasoning fields of the
// model's thinking format. go-openai sends it and parses the stream; its typed request
// cannot express the formats pi-ai's compat rules choose (thinking objects, chat template
// arguments, max_tokens for some hosts, routing preferences), so the body is built here.

// completionsCompat is pi-ai's getCompat (detectCompat from the provider and base URL,
// then the model's compat) for the fields a summary request reads.
type completionsCompat struct {
	supportsStore, supportsDeveloperRole, supportsReasoningEffort, supportsUsageInStreaming bool
	maxTokensField, thinkingFormat                                                          string
	chatTemplateKwargs, chatTemplateArgs                                                    map[string]any
	thinkingTokenBudgetField                                                                string
	sendSessionAffinityHeaders                                                              bool
	sessionAffinityFormat                                                                   string
}

func completionsCompatOf(m *catalog.Model) completionsCompat {
	provider, base := m.Provider, m.BaseURL
	has := func(s string) bool { return strings.Contains(base, s) }
	isZai := provider == "zai" || provider == "zai-coding-cn" || has("api.z.ai") || has("open.bigmodel.cn")
	isTogether := provider == "together" || has("api.together.ai") || has("api.together.xyz")
	isMoonshot := provider == "moonshotai" || provider == "moonshotai-cn" || has("api.moonshot.")
	isOpenRouter := provider == "openrouter" || has("openrouter.ai")
	isCFWorkers := provider == "cloudflare-workers-ai" || has("api.cloudflare.com")
	isCFGateway := provider == "cloudflare-ai-gateway" || has("gateway.ai.cloudflare.com")
	isNvidia := provider == "nvidia" || has("integrate.api.nvidia.com")
	isAntLing := provider == "ant-ling" || has("api.ant-ling.com")
	isCerebras := provider == "cerebras" || has("cerebras.ai")
	isDeepSeek := provider == "deepseek" || strings.Contains(strings.ToLower(base), "deepseek.com")
	isGrok := provider == "xai" || has("api.x.ai")
	nonStandard := isNvidia || isCerebras || isGrok || isTogether || has("chutes.ai") || isDeepSeek || isZai || isMoonshot ||
		provider == "opencode" || has("opencode.ai") || isCFWorkers || isCFGateway || isAntLing
	useMaxTokens := has("chutes.ai") || isDeepSeek || isMoonshot || isCFGateway || isTogether || isNvidia || isAntLing || isZai
	c := completionsCompat{
		supportsStore:              !nonStandard,
		supportsDeveloperRole:      provider == "openai" || has("api.openai.com"),
		supportsReasoningEffort:    !isGrok && !isZai && !isMoonshot && !isTogether && !isCFGateway && !isNvidia && !isAntLing,
		supportsUsageInStreaming:   true,
		maxTokensField:             "max_completion_tokens",
		thinkingFormat:             "openai",
		chatTemplateKwargs:         map[string]any{},
		chatTemplateArgs:           map[string]any{},
		sendSessionAffinityHeaders: isOpenRouter,
		sessionAffinityFormat:      "openai",
	}
	if useMaxTokens {
		c.maxTokensField = "max_tokens"
	}
	switch {
	case isDeepSeek:
		c.thinkingFormat = "deepseek"
	case isZai:
		c.thinkingFormat = "zai"
	case isTogether:
		c.thinkingFormat = "together"
	case isAntLing:
		c.thinkingFormat = "ant-ling"
	case isOpenRouter:
		c.thinkingFormat = "openrouter"
	}
	if isOpenRouter {
		c.sessionAffinityFormat = "openrouter"
	}
	boolOf := func(key string, to *bool) {
		if v, ok := m.CompatBool(key); ok {
			*to = v
		}
	}
	boolOf("supportsStore", &c.supportsStore)
	boolOf("supportsDeveloperRole", &c.supportsDeveloperRole)
	boolOf("supportsReasoningEffort", &c.supportsReasoningEffort)
	boolOf("supportsUsageInStreaming", &c.supportsUsageInStreaming)
	boolOf("sendSessionAffinityHeaders", &c.sendSessionAffinityHeaders)
	if v, ok := m.CompatString("maxTokensField"); ok {
		c.maxTokensField = v
	}
	if v, ok := m.CompatString("thinkingFormat"); ok {
		c.thinkingFormat = v
	}
	if v, ok := m.CompatString("sessionAffinityFormat"); ok {
		c.sessionAffinityFormat = v
	}
	if v, ok := m.Compat["chatTemplateKwargs"].(map[string]any); ok {
		c.chatTemplateKwargs = v
	}
	if v, ok := m.Compat["chatTemplateArgs"].(map[string]any); ok {
		c.chatTemplateArgs = v
	}
	if v, ok := m.CompatString("thinkingTokenBudgetField"); ok {
		c.thinkingTokenBudgetField = v
	} else if v, ok := m.CompatBool("supportsThinkingTokenBudget"); ok && v {
		c.thinkingTokenBudgetField = "thinking_token_budget"
	}
	return c
}

// reasoningLevel is the reasoning a summary request asks of m at the session's thinking
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

// thinkingBudgets are pi-ai's DEFAULT_THINKING_BUDGETS (summary requests carry no
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
func maxTokensFor(m *catalog.Model, prompt string) int {
	maxTokens := m.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	return clampMaxTokens(maxTokens, m.ContextWindow, SystemPrompt, prompt)
}

// newSessionID is a routing id like the uuidv7 compaction gives each summary request.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// completionsBody is the body and the extra headers of a summary request to an
// openai-completions model.
func completionsBody(m *catalog.Model, req Request) (map[string]any, map[string]string) {
	c := completionsCompatOf(m)
	prompt := BuildPrompt(req)
	effort := reasoningLevel(m, req.ThinkingLevel)
	role := "system"
	if m.Reasoning && c.supportsDeveloperRole {
		role = "developer"
	}
	body := map[string]any{
		"model": m.ID,
		"messages": []any{
			map[string]any{"role": role, "content": SystemPrompt},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": prompt}}},
		},
		"stream": true,
	}
	if c.supportsUsageInStreaming {
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	if c.supportsStore {
		body["store"] = false
	}
	maxTokens := maxTokensFor(m, prompt)
	if maxTokens > 0 {
		if c.maxTokensField == "max_tokens" {
			body["max_tokens"] = maxTokens
		} else {
			body["max_completion_tokens"] = maxTokens
		}
	}
	mapped := func(level string) any { // thinkingLevelMap[level] ?? level, null kept
		if v, ok := m.ThinkingLevelMap[level]; ok {
			if v == nil {
				return nil
			}
			return *v
		}
		return level
	}
	offMap, offPresent := m.ThinkingLevelMap["off"]
	offNotNull := !offPresent || offMap != nil
	budget := 0
	if effort != "" && m.Reasoning {
		budget = min(thinkingBudget(effort), max(0, maxTokens-1024))
	}
	if m.Reasoning {
		switch c.thinkingFormat {
		case "zai":
			if effort != "" {
				body["thinking"] = map[string]any{"type": "enabled", "clear_thinking": false}
				if c.supportsReasoningEffort {
					if e, ok := mapped(effort).(string); ok {
						body["reasoning_effort"] = e
					}
				}
			} else {
				body["thinking"] = map[string]any{"type": "disabled"}
			}
		case "qwen":
			body["enable_thinking"] = effort != ""
			if effort != "" && c.supportsReasoningEffort {
				body["reasoning_effort"] = nullish(mapped(effort), effort)
			}
		case "qwen-chat-template":
			body["chat_template_kwargs"] = map[string]any{"enable_thinking": effort != "", "preserve_thinking": true}
		case "chat-template":
			if v := chatTemplateValues(m, effort, c.chatTemplateKwargs, budget); v != nil {
				body["chat_template_kwargs"] = v
			}
		case "baseten":
			if v := chatTemplateValues(m, effort, c.chatTemplateArgs, budget); v != nil {
				body["chat_template_args"] = v
			}
			if c.supportsReasoningEffort {
				var e any = effort
				if effort != "" {
					e = mapped(effort)
				} else if offPresent {
					e = mapped("off")
				}
				if s, ok := e.(string); ok && s != "" {
					body["reasoning_effort"] = s
				}
			}
		case "deepseek":
			if effort != "" {
				body["thinking"] = map[string]any{"type": "enabled"}
			} else if offNotNull {
				body["thinking"] = map[string]any{"type": "disabled"}
			}
			if effort != "" && c.supportsReasoningEffort {
				body["reasoning_effort"] = nullish(mapped(effort), effort)
			}
		case "openrouter":
			if effort != "" {
				body["reasoning"] = map[string]any{"effort": nullish(mapped(effort), effort)}
			} else if offNotNull {
				body["reasoning"] = map[string]any{"effort": nullish(offValue(m), "none")}
			}
		case "ant-ling":
			if effort != "" {
				if v, ok := m.ThinkingLevelMap[effort]; ok && v != nil {
					body["reasoning"] = map[string]any{"effort": *v}
				}
			}
		case "together":
			body["reasoning"] = map[string]any{"enabled": effort != ""}
			if effort != "" && c.supportsReasoningEffort {
				body["reasoning_effort"] = nullish(mapped(effort), effort)
			}
		case "string-thinking":
			if effort != "" {
				body["thinking"] = nullish(mapped(effort), effort)
			} else if offNotNull {
				body["thinking"] = nullish(offValue(m), "none")
			}
		default:
			if effort != "" && c.supportsReasoningEffort {
				body["reasoning_effort"] = nullish(mapped(effort), effort)
			} else if effort == "" && c.supportsReasoningEffort {
				if v, ok := m.ThinkingLevelMap["off"]; ok && v != nil {
					body["reasoning_effort"] = *v
				}
			}
		}
	}
	if c.thinkingTokenBudgetField != "" && budget > 0 {
		body[c.thinkingTokenBudgetField] = budget
	}
	if v, ok := m.Compat["openRouterRouting"]; ok && v != nil {
		body["provider"] = v
	}
	if v, ok := m.Compat["vercelGatewayRouting"].(map[string]any); ok {
		gw := map[string]any{}
		if o, ok := v["only"]; ok && o != nil {
			gw["only"] = o
		}
		if o, ok := v["order"]; ok && o != nil {
			gw["order"] = o
		}
		if len(gw) > 0 {
			body["providerOptions"] = map[string]any{"gateway": gw}
		}
	}
	if v, ok := m.Compat["vllmPriority"]; ok && v != nil {
		body["priority"] = v
	}
	for k, v := range samplingParams(m, effort) {
		body[k] = v
	}
	var headers map[string]string
	if c.sendSessionAffinityHeaders {
		id := newSessionID()
		headers = map[string]string{}
		if c.sessionAffinityFormat == "openrouter" {
			headers["x-session-id"] = id
		} else {
			if c.sessionAffinityFormat == "openai" {
				headers["session_id"] = id
			}
			headers["x-client-request-id"] = id
			headers["x-session-affinity"] = id
		}
	}
	return body, headers
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

// chatTemplateValues is pi-ai's buildChatTemplateValues.
func chatTemplateValues(m *catalog.Model, effort string, values map[string]any, budget int) map[string]any {
	out := map[string]any{}
	for k, v := range values {
		obj, ok := v.(map[string]any)
		if !ok {
			out[k] = v
			continue
		}
		if effort == "" {
			if omit, _ := obj["omitWhenOff"].(bool); omit {
				continue
			}
		}
		switch obj["$var"] {
		case "thinking.enabled":
			out[k] = effort != ""
			continue
		case "thinking.budget":
			if budget > 0 {
				out[k] = budget
			}
			continue
		}
		var mappedV *string
		var present bool
		if effort != "" {
			mappedV, present = m.ThinkingLevelMap[effort]
		} else {
			mappedV, present = m.ThinkingLevelMap["off"]
		}
		switch {
		case !present:
			if effort != "" {
				out[k] = effort
			}
		case mappedV != nil:
			out[k] = *mappedV
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
