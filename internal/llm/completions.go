package llm

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	openai "github.com/sashabaranov/go-openai"
	"io"
	"strings"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
)

// The openai-completions body of a request, as pi-ai 1.6.0's buildParams writes
// it for a context of a system prompt and one user text, with
// cacheRetention "none" (as compaction's completeSummarization asks): the instruction role, the
// output limit and its field, store, usage in the stream, and the reasoning fields of the
// model's thinking format. go-openai sends it and parses the stream; its typed request
// cannot express the formats pi-ai's compat rules choose (thinking objects, chat template
// arguments, max_tokens for some hosts, routing preferences), so the body is built here.

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
type completionsAPI struct {
	cfg    Config
	client *openai.Client
}

func newCompletionsAPI(cfg Config) attemptFunc {
	oc := openai.DefaultConfig(cfg.Credential.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.Model.BaseURL, "/")
	oc.EmptyMessagesLimit = 100000 // keep-alive comment lines are not errors
	oc.HTTPClient = &headerDoer{client: httpClient(cfg.HTTPClient), headers: mergeHeaders(cfg.Model.Headers, cfg.Credential.Headers)}
	a := &completionsAPI{cfg: cfg, client: openai.NewClientWithConfig(oc)}
	return a.attempt
}

func classify(err error, status int) *Error {
	var api *openai.APIError
	var reqErr *openai.RequestError
	se := &Error{Kind: KindTransient, Status: status, Message: err.Error()}
	switch {
	case errors.As(err, &api):
		if api.HTTPStatusCode != 0 {
			se.Status = api.HTTPStatusCode
		}
		se.Message = api.Message
		code := fmt.Sprint(api.Code)
		typ := api.Type
		switch {
		case code == "context_length_exceeded" || typ == "exceed_context_size_error" || contextTooLongRe.MatchString(api.Message):
			se.Kind = KindContextTooLong
		case se.Status == 429:
			se.Kind = KindRateLimited
		case se.Status == 401 || se.Status == 403:
			se.Kind = KindAuth
		case se.Status >= 500 || se.Status == 0 || se.Status == 408:
			se.Kind = KindTransient
		default:
			se.Kind = KindFatal
		}
	case errors.As(err, &reqErr):
		se.Status = reqErr.HTTPStatusCode
		se.Message = strings.TrimSpace(string(reqErr.Body))
		if se.Message == "" {
			se.Message = reqErr.Error()
		}
		switch {
		case contextTooLongRe.MatchString(se.Message):
			se.Kind = KindContextTooLong
		case se.Status == 429:
			se.Kind = KindRateLimited
		case se.Status == 401 || se.Status == 403:
			se.Kind = KindAuth
		case se.Status >= 500:
			se.Kind = KindTransient
		default:
			se.Kind = KindFatal
		}
	}
	return se
}

// piUsage normalizes an OpenAI usage object as Pi's openai-completions provider does:
// input excludes the cached prompt tokens, which are counted as cacheRead, and
// totalTokens is the sum of the parts.
func piUsage(u *openai.Usage) *Usage {
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
	// The body is pi-ai 1.6.0's for this model (completionsBody); go-openai sends it and
	// parses the stream. Its typed request only has to ask for a stream.
	m := o.cfg.Model
	body, headers := completionsBody(m, req)
	data, err := json.Marshal(body)
	if err != nil {
		return Result{}, nil, err
	}
	ci.send = data
	size := newAnswerSize(cmp.Or(askedTokens(body), m.MaxTokens))
	ci.maxLine = maxLineFor(size.asked)
	if len(headers) > 0 {
		ctx = context.WithValue(ctx, headersKey{}, headers)
	}
	creq := openai.ChatCompletionRequest{Model: m.ID, Stream: true}
	// A stalled stream is cancelled by a watchdog that any received byte resets
	// (keep-alive comments included: a reasoning model behind a proxy may send only
	// those for minutes; TotalTimeout still bounds the whole request).
	stall := time.AfterFunc(o.cfg.StallTimeout, cancel)
	defer stall.Stop()
	ci.activity = func() { stall.Reset(o.cfg.StallTimeout) }
	stream, err := o.client.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		if parent.Err() != nil {
			return Result{}, nil, parent.Err()
		}
		if se := ci.refused(); se != nil {
			return Result{}, se, se
		}
		if ci.status == 0 && ctx.Err() == nil && unreachable(err) {
			se := unreachableError(m.BaseURL, err)
			return Result{}, se, se
		}
		se := classify(err, ci.status)
		se.retryAfterHint = ci.retryAfter
		if ctx.Err() != nil {
			se.Kind, se.Message, se.stalled = KindTransient, "no response within "+o.cfg.StallTimeout.String()+": stalled before the response headers", true
		}
		return Result{}, se, se
	}
	defer stream.Close()
	var text strings.Builder
	var usage *Usage
	finished := false
	finish := openai.FinishReason("")
	calledTool := false
	chunks := 0
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if parent.Err() != nil {
				return Result{}, nil, parent.Err()
			}
			se := classify(err, 0)
			var syn *json.SyntaxError
			var typ *json.UnmarshalTypeError
			var api *openai.APIError
			switch {
			case isLineTooLong(err):
				se = lineTooLong(ci)
			case ctx.Err() != nil:
				se.Kind, se.stalled = KindTransient, true
				se.Message = "stream stalled for " + o.cfg.StallTimeout.String() + ": no byte received"
			case errors.As(err, &syn) || errors.As(err, &typ):
				se.Kind, se.Message = KindTransient, "malformed stream data from the server: "+err.Error()
			case errors.As(err, &api):
				// An error event after a 200 (its HTTP status is 0): classified by
				// its code and message, transient unless it says otherwise.
				se.Message = "error event in the stream: " + se.Message
				if se.Kind == KindFatal && se.Status == 0 {
					se.Kind = KindTransient
				}
			case errors.Is(err, io.ErrUnexpectedEOF):
				se.Kind, se.Message = KindTransient, "stream broken: the connection closed mid-answer (unexpected EOF)"
			default:
				se.Kind, se.Message = KindTransient, "stream broken: "+err.Error()
			}
			return Result{}, se, se
		}
		stall.Reset(o.cfg.StallTimeout)
		for _, ch := range resp.Choices {
			if se := size.add(len(ch.Delta.Content) + len(ch.Delta.ReasoningContent)); se != nil {
				return Result{}, se, se
			}
			text.WriteString(ch.Delta.Content)
			if len(ch.Delta.ToolCalls) > 0 || ch.Delta.FunctionCall != nil {
				calledTool = true
			}
			if ch.FinishReason != "" {
				finished, finish = true, ch.FinishReason
			}
		}
		if resp.Usage != nil {
			usage = piUsage(resp.Usage)
			piCost(m, usage)
		}
		chunks++
		if req.Progress != nil {
			p := at
			p.Starting, p.Retry, p.Wait = false, "", 0
			p.Tokens, p.Elapsed = chunks, time.Since(start)
			req.Progress(p)
		}
	}
	if !finished {
		return failed(KindTransient, msgConnectionCut)
	}
	switch {
	case finish == openai.FinishReasonLength:
		return failed(KindLength, msgTokenCap)
	case calledTool || finish == openai.FinishReasonToolCalls || finish == openai.FinishReasonFunctionCall:
		return failed(KindToolCall, msgToolCall)
	}
	out := strings.TrimSpace(text.String())
	if out == "" {
		return failed(KindEmpty, msgEmpty)
	}
	return Result{Text: out, Usage: usage, Model: m.ID}, nil, nil
}
