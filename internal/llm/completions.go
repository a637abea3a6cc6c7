package llm

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
)

// The openai-completions body of a request, as pi-ai 1.6.0's buildParams writes
// it for a context of a system prompt and one user text, with
// cacheRetention "none" (as compaction's completeSummarization asks): the instruction role, the
// output limit and its field, store, usage in the stream, and the reasoning fields of the
// model's thinking format (thinking objects, chat template arguments, max_tokens for some
// hosts, routing preferences, as pi-ai's compat rules choose them).

// completionsCompat is pi-ai's getCompat (detectCompat from the provider and base URL,
// then the model's compat) for the fields a request reads.
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

// newSessionID is a routing id like the uuidv7 compaction gives each request.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// completionsBody is the body and the extra headers of a request to an
// openai-completions model.
func completionsBody(m *catalog.Model, req Request) (map[string]any, map[string]string) {
	c := completionsCompatOf(m)
	prompt := req.User
	effort := reasoningLevel(m, req.ThinkingLevel)
	role := "system"
	if m.Reasoning && c.supportsDeveloperRole {
		role = "developer"
	}
	body := map[string]any{
		"model": m.ID,
		"messages": []any{
			map[string]any{"role": role, "content": req.System},
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
	maxTokens := maxTokensFor(m, req)
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

// CompatibleProvider is the provider of a model made of the fields of an
// OpenAI-compatible endpoint configured for pi-lsp (CompatibleModel).
const CompatibleProvider = "openai-compatible"

// CompatibleModel is the model of an OpenAI-compatible chat-completions endpoint (base URL
// with /v1, model id, window, output limit (0: DefaultMaxTokens), whether it takes a
// reasoning effort), as a model of a custom models.json provider made of those fields.
func CompatibleModel(baseURL, id string, contextWindow, maxTokens int, reasoning bool) *catalog.Model {
	return &catalog.Model{ID: id, API: catalog.APIOpenAICompletions, Provider: CompatibleProvider, BaseURL: baseURL,
		Reasoning: reasoning, ContextWindow: contextWindow, MaxTokens: maxTokens}
}

// completionsAPI makes requests to an openai-completions model.
type completionsAPI struct{ apiBase }

// piUsage normalizes an OpenAI usage object as Pi's openai-completions provider does:
// input excludes the cached prompt tokens, which are counted as cacheRead, and
// totalTokens is the sum of the parts.
func piUsage(u *completionsUsage) *Usage {
	cached := 0
	if d := u.PromptTokensDetails; d != nil {
		cached = d.CachedTokens
	}
	input := max(0, u.PromptTokens-cached)
	reasoning := 0.0
	if d := u.CompletionTokensDetails; d != nil {
		reasoning = float64(d.ReasoningTokens)
	}
	computed := false // pi-ai computed the cost (piCost fills it in from the model's prices)
	return &Usage{Input: float64(input), Output: float64(u.CompletionTokens), CacheRead: float64(cached),
		Reasoning: &reasoning, TotalTokens: float64(input + u.CompletionTokens + cached),
		Cost: &Cost{TotalFromProvider: &computed}}
}

func (o *completionsAPI) attempt(parent context.Context, req Request, start time.Time, at Progress) (Result, *Error, error) {
	ci := &callInfo{}
	ctx, cancel := context.WithCancel(withCall(parent, ci))
	defer cancel()
	m := o.cfg.Model
	body, affinity := completionsBody(m, req)
	data, err := json.Marshal(body)
	if err != nil {
		return Result{}, nil, err
	}
	size := newAnswerSize(cmp.Or(askedTokens(body), m.MaxTokens))
	ci.maxLine = maxLineFor(size.asked)
	headers := map[string]string{"Accept": "text/event-stream", "Cache-Control": "no-cache"}
	if key := o.cfg.Credential.APIKey; key != "" {
		headers["Authorization"] = "Bearer " + key
	}
	var text strings.Builder
	var usage *Usage
	finished, finish := false, ""
	calledTool := false
	var read sseRead
	call := sseCall{endpoint: m.BaseURL, url: strings.TrimRight(m.BaseURL, "/") + "/chat/completions", body: data, headers: headers, final: affinity, flushAtEnd: true}
	se, err := streamSSE(parent, ctx, cancel, ci, o.client, o.cfg, call, &read, func(ev sseEvent) bool {
		if string(bytes.TrimSpace(ev.Data)) == "[DONE]" {
			return false
		}
		var c completionsChunk
		if read.failure = decodeEvent(ev.Data, &c); read.failure != nil {
			return false
		}
		for _, ch := range c.Choices {
			if read.failure = size.add(len(ch.Delta.Content) + len(ch.Delta.ReasoningContent) + len(ch.Delta.Reasoning)); read.failure != nil {
				return false
			}
			text.WriteString(ch.Delta.Content)
			if len(ch.Delta.ToolCalls) > 0 || ch.Delta.FunctionCall != nil {
				calledTool = true
			}
			if ch.FinishReason != "" {
				finished, finish = true, ch.FinishReason
			}
		}
		if c.Usage != nil {
			usage = piUsage(c.Usage)
			piCost(m, usage)
		}
		read.chunks++
		reportTokens(req, at, start, read.chunks)
		return true
	})
	if se != nil || err != nil {
		return Result{}, se, err
	}
	if !finished {
		return failed(KindTransient, msgConnectionCut)
	}
	switch {
	case finish == "length":
		return failed(KindLength, msgTokenCap)
	case calledTool || finish == "tool_calls" || finish == "function_call":
		return failed(KindToolCall, msgToolCall)
	}
	out := strings.TrimSpace(text.String())
	if out == "" {
		return failed(KindEmpty, msgEmpty)
	}
	return Result{Text: out, Usage: usage, Model: m.ID}, nil, nil
}

// completionsChunk is the part of a chat-completions stream chunk pi-ai reads.
type completionsChunk struct {
	Choices []struct {
		Delta struct {
			Content          string            `json:"content"`
			ReasoningContent string            `json:"reasoning_content"`
			Reasoning        string            `json:"reasoning"`
			ToolCalls        []json.RawMessage `json:"tool_calls"`
			FunctionCall     *json.RawMessage  `json:"function_call"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *completionsUsage `json:"usage"`
}

// completionsUsage is a chat-completions usage object.
type completionsUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}
