package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
)

// The google-generative-ai request, as pi-ai 1.6.0 builds it and @google/genai
// sends it: POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse with x-goog-api-key,
// the prompt as systemInstruction, the text as one user content, maxOutputTokens fitted to
// the window and the thinking config of the model's family (a level for Gemini 3+, a
// budget before it, disabled when the session's level is off). Google's Go client
// (google.golang.org/genai) is served by the module proxy, but it brings gRPC, protocol
// buffers and Google Cloud's auth libraries for what is here one JSON POST and a stream
// of JSON events; pi-lsp builds the body as @google/genai serializes pi-ai's parameters
// and parses the stream itself.

var (
	gemini3Re = regexp.MustCompile(`gemini-3(?:\.\d+)?-(?:pro|flash)`)
	gemini4Re = regexp.MustCompile(`gemini-(?:[4-9]|[1-9]\d)`)
	gemma4Re  = regexp.MustCompile(`gemma-?4`)
)

// usesGoogleThinkingLevel is pi-ai's: Gemini 3 and later take a thinking level, older
// models a token budget.
func usesGoogleThinkingLevel(m *catalog.Model) bool {
	id := strings.ToLower(m.ID)
	return gemini3Re.MatchString(id) || gemini4Re.MatchString(id) || id == "gemini-flash-latest" ||
		id == "gemini-flash-lite-latest" || gemma4Re.MatchString(id)
}

// googleLevel is pi-ai's resolveGoogleThinkingLevel ("" for a mapping Google has no
// level for: pi-ai throws, and the request fails).
func googleLevel(m *catalog.Model, level string) string {
	resolved := level
	if v, ok := m.ThinkingLevelMap[level]; ok && v != nil {
		resolved = strings.ToLower(*v)
	}
	switch resolved {
	case "minimal", "low", "medium", "high":
		return strings.ToUpper(resolved)
	}
	return ""
}

// googleBudget is pi-ai's getGoogleBudget for the default budgets.
func googleBudget(m *catalog.Model, level string) int {
	budgets := map[string][4]int{
		"2.5-pro":        {128, 2048, 8192, 32768},
		"2.5-flash-lite": {512, 2048, 8192, 24576},
		"2.5-flash":      {128, 2048, 8192, 24576},
	}
	idx := map[string]int{"minimal": 0, "low": 1, "medium": 2, "high": 3}[level]
	for _, family := range []string{"2.5-pro", "2.5-flash-lite", "2.5-flash"} {
		if strings.Contains(m.ID, family) {
			return budgets[family][idx]
		}
	}
	return -1
}

// googleBody is the body of a request to a google-generative-ai model.
func googleBody(m *catalog.Model, req Request) (map[string]any, error) {
	prompt := req.User
	gen := map[string]any{}
	if maxTokens := maxTokensFor(m, req); maxTokens > 0 {
		gen["maxOutputTokens"] = maxTokens
	}
	level := reasoningLevel(m, req.ThinkingLevel)
	if m.Reasoning {
		switch {
		case level != "" && usesGoogleThinkingLevel(m):
			l := googleLevel(m, level)
			if l == "" {
				return nil, errors.New("unsupported Google thinking level mapping for " + m.Ref() + ": " + level)
			}
			gen["thinkingConfig"] = map[string]any{"includeThoughts": true, "thinkingLevel": l}
		case level != "":
			resolved := strings.ToLower(googleLevel(m, level))
			gen["thinkingConfig"] = map[string]any{"includeThoughts": true, "thinkingBudget": googleBudget(m, resolved)}
		default:
			disabled := map[string]any{"thinkingBudget": 0}
			if usesGoogleThinkingLevel(m) {
				if fb := catalog.ClampLevel(m, "off"); fb != "off" {
					if l := googleLevel(m, fb); l != "" {
						disabled = map[string]any{"thinkingLevel": l}
					}
				}
			}
			gen["thinkingConfig"] = disabled
		}
	}
	body := map[string]any{
		"contents":          []any{map[string]any{"parts": []any{map[string]any{"text": prompt}}, "role": "user"}},
		"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": req.System}}, "role": "user"},
	}
	if len(gen) > 0 {
		body["generationConfig"] = gen
	}
	return body, nil
}

// googleAPI makes requests to a google-generative-ai model.
type googleAPI struct{ apiBase }

type googleChunk struct {
	Candidates []struct {
		Content *struct {
			Parts []struct {
				Text         *string         `json:"text"`
				Thought      bool            `json:"thought"`
				FunctionCall json.RawMessage `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        float64 `json:"promptTokenCount"`
		CandidatesTokenCount    float64 `json:"candidatesTokenCount"`
		CachedContentTokenCount float64 `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      float64 `json:"thoughtsTokenCount"`
		TotalTokenCount         float64 `json:"totalTokenCount"`
	} `json:"usageMetadata"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (g *googleAPI) attempt(parent context.Context, req Request, start time.Time, at Progress) (Result, *Error, error) {
	m := g.cfg.Model
	body, err := googleBody(m, req)
	if err != nil {
		return failed(KindFatal, err.Error())
	}
	data, err := json.Marshal(body)
	if err != nil {
		return Result{}, nil, err
	}
	size := newAnswerSize(cmp.Or(askedTokens(body), m.MaxTokens))
	ci := &callInfo{maxLine: maxLineFor(size.asked)}
	ctx, cancel := context.WithCancel(withCall(parent, ci))
	defer cancel()
	endpoint := strings.TrimRight(m.BaseURL, "/") + "/models/" + url.PathEscape(m.ID) + ":streamGenerateContent?alt=sse"
	var headers map[string]string
	if key := g.cfg.Credential.APIKey; key != "" {
		headers = map[string]string{"x-goog-api-key": key}
	}
	var text strings.Builder
	var usage *Usage
	finishReason := ""
	calledTool := false
	var read sseRead
	handle := func(payload []byte) *Error {
		var c googleChunk
		if se := unmarshalEvent(payload, &c); se != nil {
			return se
		}
		if c.Error != nil {
			se := &Error{Kind: KindTransient, Message: "error event in the stream: " + c.Error.Message}
			if contextTooLongRe.MatchString(c.Error.Message) {
				se.Kind = KindContextTooLong
			}
			return se
		}
		read.chunks++
		reportTokens(req, at, start, read.chunks)
		if len(c.Candidates) > 0 {
			cand := c.Candidates[0]
			if cand.Content != nil {
				for _, p := range cand.Content.Parts {
					if p.Text != nil {
						if se := size.add(len(*p.Text)); se != nil {
							return se
						}
						if !p.Thought {
							text.WriteString(*p.Text)
						}
					}
					if len(p.FunctionCall) > 0 && string(p.FunctionCall) != "null" {
						calledTool = true
					}
				}
			}
			if cand.FinishReason != "" {
				finishReason = cand.FinishReason
			}
		}
		if u := c.UsageMetadata; u != nil {
			reasoning := u.ThoughtsTokenCount
			usage = &Usage{Input: u.PromptTokenCount - u.CachedContentTokenCount, Output: u.CandidatesTokenCount + u.ThoughtsTokenCount,
				CacheRead: u.CachedContentTokenCount, Reasoning: &reasoning, TotalTokens: u.TotalTokenCount}
		}
		return nil
	}
	call := sseCall{endpoint: m.BaseURL, url: endpoint, body: data, headers: headers, flushAtEnd: true}
	se, err := streamSSE(parent, ctx, cancel, ci, g.client, g.cfg, call, &read, func(ev sseEvent) bool {
		read.failure = handle(ev.Data)
		return read.failure == nil
	})
	if se != nil || err != nil {
		return Result{}, se, err
	}
	if usage == nil {
		usage = &Usage{Reasoning: new(float64)}
	}
	piCost(m, usage)
	switch finishReason {
	case "":
		return failed(KindTransient, msgConnectionCut)
	case "STOP":
	case "MAX_TOKENS", "CONTINUATION":
		return failed(KindLength, msgTokenCap)
	default:
		return failed(KindFatal, "Provider stopped with: "+finishReason)
	}
	if calledTool {
		return failed(KindToolCall, msgToolCall)
	}
	return finish(text.String(), usage, m)
}
