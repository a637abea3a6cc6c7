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

// The openai-responses request, as pi-ai 1.6.0's streamSimple and buildParams
// write it for a system prompt and one user text with cacheRetention
// "none": POST {baseUrl}/responses with the prompt as a developer (reasoning model) or
// system message, the text as input_text, store false, max_output_tokens fitted to the
// window, and the reasoning effort with its summary and encrypted content, or the
// model's "off" effort (the instruction role, configuration_update items,
// prompt_cache_options and the fields a ChatGPT sign-in refuses follow the model's compat).

const responsesMinOutputTokens = 16

// isChatGPTSignIn is pi-ai's: a non-sk- credential sent to OpenAI's own endpoint.
func isChatGPTSignIn(m *catalog.Model, key string) bool {
	return m.Provider == "openai" && m.BaseURL == "https://api.openai.com/v1" && key != "" && !strings.HasPrefix(key, "sk-")
}

// responsesBody is the body of a request to an openai-responses model.
func responsesBody(m *catalog.Model, req Request, key string) map[string]any {
	prompt := req.User
	effort := reasoningLevel(m, req.ThinkingLevel)
	chatGPT := isChatGPTSignIn(m, key)
	compatBool := func(k string, d bool) bool {
		if v, ok := m.CompatBool(k); ok {
			return v
		}
		return d
	}
	configUpdate := ""
	if compatBool("supportsMidConvoEffort", false) && effort != "" && !chatGPT {
		configUpdate = m.MappedLevel(effort)
	}
	role := "system"
	if m.Reasoning && compatBool("supportsDeveloperRole", true) {
		role = "developer"
	}
	input := []any{
		map[string]any{"role": role, "content": req.System},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": prompt}}},
	}
	if configUpdate != "" {
		input = append(input, map[string]any{"type": "configuration_update", "reasoning": map[string]any{"effort": configUpdate}})
	}
	body := map[string]any{
		"model":  m.ID,
		"input":  input,
		"stream": true,
		"store":  false,
	}
	if compatBool("supportsExplicitPromptCacheMode", false) && !chatGPT {
		body["prompt_cache_options"] = map[string]any{"mode": "explicit"}
	}
	if maxTokens := maxTokensFor(m, req); maxTokens > 0 && compatBool("supportsMaxOutputTokens", true) && !chatGPT {
		body["max_output_tokens"] = max(maxTokens, responsesMinOutputTokens)
	}
	if m.Reasoning {
		if effort != "" {
			e := m.MappedLevel(effort)
			if configUpdate != "" {
				e = "medium"
			}
			body["reasoning"] = map[string]any{"effort": e, "summary": "auto"}
			body["include"] = []any{"reasoning.encrypted_content"}
		} else if v, present := m.ThinkingLevelMap["off"]; m.Provider != "github-copilot" && !(present && v == nil) {
			off := "none"
			if present {
				off = *v
			}
			body["reasoning"] = map[string]any{"effort": off}
		}
		if m.Provider == "xai" {
			body["include"] = []any{"reasoning.encrypted_content"}
		}
	}
	for k, v := range samplingParams(m, effort) {
		body[k] = v
	}
	return body
}

// responsesAPI makes requests to an openai-responses model.
type responsesAPI struct{ apiBase }

// responsesEvent is the part of a stream event pi-ai reads.
type responsesEvent struct {
	Type        string `json:"type"`
	OutputIndex int    `json:"output_index"`
	Delta       string `json:"delta"`
	Code        string `json:"code"`
	Message     string `json:"message"`
	Item        struct {
		Type    string `json:"type"`
		Content []struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Refusal string `json:"refusal"`
		} `json:"content"`
	} `json:"item"`
	Response struct {
		Status            string `json:"status"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Usage *struct {
			InputTokens        float64 `json:"input_tokens"`
			OutputTokens       float64 `json:"output_tokens"`
			TotalTokens        float64 `json:"total_tokens"`
			InputTokensDetails *struct {
				CachedTokens     float64 `json:"cached_tokens"`
				CacheWriteTokens float64 `json:"cache_write_tokens"`
			} `json:"input_tokens_details"`
			OutputTokensDetails *struct {
				ReasoningTokens float64 `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	} `json:"response"`
}

func (a *responsesAPI) attempt(parent context.Context, req Request, start time.Time, at Progress) (Result, *Error, error) {
	m := a.cfg.Model
	ci := &callInfo{}
	ctx, cancel := context.WithCancel(withCall(parent, ci))
	defer cancel()
	body := responsesBody(m, req, a.cfg.Credential.APIKey)
	data, err := json.Marshal(body)
	if err != nil {
		return Result{}, nil, err
	}
	size := newAnswerSize(cmp.Or(askedTokens(body), m.MaxTokens))
	ci.maxLine = maxLineFor(size.asked)
	thinking := 0
	headers := map[string]string{"Accept": "application/json"}
	if key := a.cfg.Credential.APIKey; key != "" {
		headers["Authorization"] = "Bearer " + key
	} // else the credential is a configured Authorization header, as pi-ai sends it
	texts := map[int]*strings.Builder{}
	var order []int
	var usage *Usage
	status, incomplete := "", ""
	terminal, calledTool := false, false
	var read sseRead
	call := sseCall{endpoint: m.BaseURL, url: strings.TrimRight(m.BaseURL, "/") + "/responses", body: data, headers: headers}
	se, err := streamSSE(parent, ctx, cancel, ci, a.client, a.cfg, call, &read, func(ev sseEvent) bool {
		if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
			return false
		}
		var e responsesEvent
		if read.failure = decodeEvent(ev.Data, &e); read.failure != nil {
			return false
		}
		read.chunks++
		reportTokens(req, at, start, read.chunks)
		switch e.Type {
		case "response.output_item.added":
			switch e.Item.Type {
			case "message":
				if texts[e.OutputIndex] == nil {
					texts[e.OutputIndex] = &strings.Builder{}
					order = append(order, e.OutputIndex)
				}
			case "function_call", "custom_tool_call":
				calledTool = true
			}
		case "response.output_text.delta", "response.refusal.delta":
			if b := texts[e.OutputIndex]; b != nil {
				b.WriteString(e.Delta)
			}
		case "response.output_item.done":
			if e.Item.Type == "message" {
				b := texts[e.OutputIndex]
				if b == nil {
					b = &strings.Builder{}
					texts[e.OutputIndex] = b
					order = append(order, e.OutputIndex)
				}
				b.Reset()
				for _, c := range e.Item.Content {
					if c.Type == "output_text" {
						b.WriteString(c.Text)
					} else {
						b.WriteString(c.Refusal)
					}
				}
			} else if e.Item.Type == "function_call" || e.Item.Type == "custom_tool_call" {
				calledTool = true
			}
		case "response.completed", "response.incomplete":
			terminal = true
			r := e.Response
			if u := r.Usage; u != nil {
				cached, written := 0.0, 0.0
				if d := u.InputTokensDetails; d != nil {
					cached, written = d.CachedTokens, d.CacheWriteTokens
				}
				reasoning := 0.0
				if d := u.OutputTokensDetails; d != nil {
					reasoning = d.ReasoningTokens
				}
				usage = &Usage{Input: max(0, u.InputTokens-cached-written), Output: u.OutputTokens, CacheRead: cached,
					CacheWrite: written, Reasoning: &reasoning, TotalTokens: u.TotalTokens}
			}
			status = r.Status
			if r.IncompleteDetails != nil {
				incomplete = r.IncompleteDetails.Reason
			}
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			thinking += len(e.Delta)
		case "error":
			read.failure = &Error{Kind: KindTransient, Message: "Error Code " + e.Code + ": " + e.Message}
		case "response.failed":
			terminal = true
			msg := "Unknown error (no error details in response)"
			switch {
			case e.Response.Error != nil:
				code := e.Response.Error.Code
				if code == "" {
					code = "unknown"
				}
				text := e.Response.Error.Message
				if text == "" {
					text = "no message"
				}
				msg = code + ": " + text
			case e.Response.IncompleteDetails != nil && e.Response.IncompleteDetails.Reason != "":
				msg = "incomplete: " + e.Response.IncompleteDetails.Reason
			}
			read.failure = &Error{Kind: KindTransient, Message: msg}
		}
		received := thinking
		for _, b := range texts {
			received += b.Len()
		}
		if se := size.set(received); se != nil {
			read.failure = se
			return false
		}
		if read.failure != nil {
			if contextTooLongRe.MatchString(read.failure.Message) {
				read.failure.Kind = KindContextTooLong
			}
			return false
		}
		return true
	})
	if se != nil || err != nil {
		return Result{}, se, err
	}
	if !terminal {
		return failed(KindTransient, msgConnectionCut)
	}
	if usage == nil {
		usage = &Usage{}
	}
	piCost(m, usage)
	switch status {
	case "completed", "in_progress", "queued", "":
	case "incomplete":
		if incomplete == "max_output_tokens" {
			return failed(KindLength, msgTokenCap)
		}
		msg := "Response incomplete without a provider reason"
		if incomplete != "" {
			msg = "Response incomplete: " + incomplete
		}
		return failed(KindFatal, msg)
	default:
		return failed(KindFatal, "the response ended with status "+status)
	}
	if calledTool {
		return failed(KindToolCall, msgToolCall)
	}
	parts := make([]string, 0, len(order))
	for _, i := range order {
		parts = append(parts, texts[i].String())
	}
	return finish(strings.Join(parts, "\n"), usage, m)
}
