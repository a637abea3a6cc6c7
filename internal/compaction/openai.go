package compaction

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// OpenAIConfig configures a summarizer for any OpenAI-compatible chat-completions
// endpoint. The API key is held in memory only and never logged or echoed.
type OpenAIConfig struct {
	BaseURL       string // including /v1
	Model         string
	APIKey        string
	ContextWindow int
	// MaxTokens is the model's own output limit (Pi's model.maxTokens; 0: Pi's default
	// for a custom model, DefaultMaxTokens). Each request asks for it, shrunk to what the
	// context window leaves after the prompt (pi-ai's clampMaxTokensToContext).
	MaxTokens int
	Reasoning bool // the model accepts a reasoning effort
	RetryLimits
	HTTPClient *http.Client

	// Catalog is the model as Pi's catalog has it (compat, thinking levels, prices): the
	// body follows pi-ai's rules for it. Nil: a model of a custom models.json provider
	// made of the fields above.
	Catalog *catalog.Model
	// Headers are the configured headers (models.json), sent as given.
	Headers map[string]string
	// Credential says, for an auth failure, where the key came from and what fixes it.
	Credential *catalog.Credential
}

// model is the catalog model the body is built for.
func (c OpenAIConfig) model() *catalog.Model {
	if c.Catalog != nil {
		return c.Catalog
	}
	return &catalog.Model{ID: c.Model, API: catalog.APIOpenAICompletions, Provider: "openai-compatible", BaseURL: c.BaseURL,
		Reasoning: c.Reasoning, ContextWindow: c.ContextWindow, MaxTokens: c.MaxTokens}
}

// RetryLimits bound the attempts of one summary (zero: the defaults NewOpenAI fills in).
type RetryLimits struct {
	// MaxRetries bounds retries on 429, 5xx and broken streams (default 3).
	MaxRetries int
	// RetryBase is the first backoff delay (default 1s), doubled each retry.
	RetryBase time.Duration
	// MaxRetryDelay caps one wait, including a server's Retry-After (default 30s).
	MaxRetryDelay time.Duration
	// TotalTimeout bounds the whole summary, retries and waits included (default
	// DefaultSummaryTimeout). It is the only limit on a server that keeps sending bytes.
	TotalTimeout time.Duration
	// StallTimeout aborts an attempt that receives no byte for this long, keep-alive
	// comments included (default DefaultStallTimeout).
	StallTimeout time.Duration
	// MaxStallRetries is how many times a stalled attempt is retried (default 1, <0:
	// never); the retry of a stall is the last attempt, whatever MaxRetries allows.
	MaxStallRetries int
}

const (
	// DefaultSummaryTimeout bounds the time one summary may hold a job.
	DefaultSummaryTimeout = 90 * time.Second
	// DefaultStallTimeout is how long an attempt may receive nothing.
	DefaultStallTimeout = 60 * time.Second
)

// OpenAI is a Summarizer backed by an OpenAI-compatible streaming endpoint.
type OpenAI struct {
	cfg    OpenAIConfig
	client *openai.Client
}

// NewOpenAI builds the summarizer.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = time.Second
	}
	if cfg.MaxRetryDelay == 0 {
		cfg.MaxRetryDelay = 30 * time.Second
	}
	if cfg.TotalTimeout <= 0 {
		cfg.TotalTimeout = DefaultSummaryTimeout
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	switch {
	case cfg.MaxStallRetries == 0:
		cfg.MaxStallRetries = 1
	case cfg.MaxStallRetries < 0:
		cfg.MaxStallRetries = 0
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.EmptyMessagesLimit = 100000 // keep-alive comment lines are not errors
	oc.HTTPClient = &headerDoer{client: httpClient(cfg.HTTPClient), headers: cfg.Headers}
	return &OpenAI{cfg: cfg, client: openai.NewClientWithConfig(oc)}
}

// Name implements Summarizer.
func (o *OpenAI) Name() string { return "openai:" + o.cfg.Model }

// headerDoer adds the configured headers (models.json, session affinity) to each request;
// callTransport puts pi-lsp's body in place of go-openai's and records the response.
type headerDoer struct {
	client  *http.Client
	headers map[string]string
}

type headersKey struct{}

func (d *headerDoer) Do(req *http.Request) (*http.Response, error) {
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	if extra, ok := req.Context().Value(headersKey{}).(map[string]string); ok {
		for k, v := range extra {
			req.Header.Set(k, v)
		}
	}
	return d.client.Do(req)
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// ErrorKind classifies a failed summary call.
type ErrorKind string

const (
	KindContextTooLong ErrorKind = "contextTooLong"
	KindRateLimited    ErrorKind = "rateLimited"
	KindAuth           ErrorKind = "auth"
	KindTransient      ErrorKind = "transient"
	KindFatal          ErrorKind = "fatal"
	KindEmpty          ErrorKind = "emptySummary"
	// KindLength: the answer stopped at the output limit, so the summary is incomplete
	// (Pi 1.6.0 refuses to store it).
	KindLength ErrorKind = "length"
	// KindToolCall: the answer called a tool instead of summarizing.
	KindToolCall ErrorKind = "toolCall"
	// KindUnreachable: the connection could not be made (refused, no route, unknown
	// host); retried once.
	KindUnreachable ErrorKind = "unreachable"
	// KindOversized: the answer ran past the size its request asked for (answerSize);
	// not retried.
	KindOversized ErrorKind = "answerTooLong"
)

// The messages of the ends of a stream that every API's reader gives alike.
const (
	msgConnectionCut = "stream ended before the model finished (connection cut)"
	msgTokenCap      = "generation hit the token cap and the summary is incomplete"
	msgToolCall      = "the model called a tool instead of summarizing"
	msgEmpty         = "the model returned an empty summary"
)

// failed is an attempt's end in a SummaryError of kind with message, as an attemptFunc
// returns it.
func failed(kind ErrorKind, message string) (Result, *SummaryError, error) {
	se := &SummaryError{Kind: kind, Message: message}
	return Result{}, se, se
}

// SummaryError is a classified summarizer failure.
type SummaryError struct {
	Kind    ErrorKind
	Status  int
	Message string
	Retries int

	// Provider, Source and Fix complete an auth failure: who refused which credential,
	// where it came from, and what fixes it.
	Provider, Source, Fix string

	retryAfterHint time.Duration
	cause          error
	stalled        bool // the attempt received nothing for StallTimeout
}

// Unwrap returns the underlying cause, if any (context.DeadlineExceeded when the total
// timeout ran out).
func (e *SummaryError) Unwrap() error { return e.cause }

func (e *SummaryError) Error() string {
	if e.Kind == KindLength || e.Kind == KindToolCall {
		return e.Message // in Pi's words, under the caller's label
	}
	msg := e.Message
	if e.Status != 0 {
		msg = fmt.Sprintf("HTTP %d: %s", e.Status, msg)
	}
	if e.Kind == KindAuth && (e.Provider != "" || e.Source != "") {
		who := e.Provider
		if who == "" {
			who = "the endpoint"
		}
		msg = fmt.Sprintf("%s refused the credential (%s)", who, msg)
		if e.Source != "" {
			msg += "; it came from " + e.Source
		}
		if e.Fix != "" {
			msg += "; fix: " + e.Fix
		}
	}
	if e.Retries > 0 {
		if e.Retries == 1 {
			msg += " (after 1 retry)"
		} else {
			msg += fmt.Sprintf(" (after %d retries)", e.Retries)
		}
	}
	return "summarizer: " + msg
}

// Is lets errors.Is(err, ErrContextTooLong) match.
func (e *SummaryError) Is(target error) bool {
	return target == ErrContextTooLong && e.Kind == KindContextTooLong
}

var (
	bearerRe = regexp.MustCompile(`(?i)(bearer\s+)[^\s"',;]+`)
	skKeyRe  = regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{6,}`)
)

// redactSecrets removes the configured key and anything shaped like a key or a bearer
// token from a provider's error text.
func redactSecrets(msg string, keys ...string) string {
	for _, key := range keys {
		if len(key) >= 4 {
			msg = strings.ReplaceAll(msg, key, "[redacted]")
		}
	}
	msg = bearerRe.ReplaceAllString(msg, "${1}[redacted]")
	return skKeyRe.ReplaceAllString(msg, "sk-[redacted]")
}

var contextTooLongRe = regexp.MustCompile(`(?i)(maximum context length|context length|context_length_exceeded|exceeds the (available )?context|too many tokens|prompt is too long|token limit exceeded|exceed_context_size)`)

func classify(err error, status int) *SummaryError {
	var api *openai.APIError
	var reqErr *openai.RequestError
	se := &SummaryError{Kind: KindTransient, Status: status, Message: err.Error()}
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

// Summarize implements Summarizer: one streaming request, retried with backoff on rate
// limits, server errors and broken streams, within a bounded total time. A stall (no byte
// for StallTimeout) is retried at most MaxStallRetries times, and that retry is the last
// attempt; an unreachable host is retried once. Each attempt is announced through
// req.Progress (Starting).
func (o *OpenAI) Summarize(parent context.Context, req Request) (Result, error) {
	return summarizeWithRetries(parent, req, o.policy(), o.attempt)
}

func (o *OpenAI) policy() retryPolicy {
	secrets := []string{o.cfg.APIKey}
	for _, v := range o.cfg.Headers {
		secrets = append(secrets, strings.TrimPrefix(v, "Bearer "))
	}
	return retryPolicy{RetryLimits: o.cfg.RetryLimits, Secrets: secrets, Describe: describeFailure(o.cfg.model(), o.cfg.Credential, o.cfg.BaseURL)}
}

// describeFailure completes a failure with who refused which credential and its fix.
func describeFailure(m *catalog.Model, cred *catalog.Credential, endpoint string) func(se *SummaryError) {
	return func(se *SummaryError) {
		if se.Kind == KindAuth {
			se.Provider = m.Provider
			if cred != nil {
				se.Source, se.Fix = cred.Source, cred.Fix
			}
		}
	}
}

// retryReason is the short form of a failure in progress lines: "stall", "HTTP 503",
// "stream broken".
func retryReason(se *SummaryError) string {
	switch {
	case se.stalled:
		return "stall"
	case se.Status != 0:
		return fmt.Sprintf("HTTP %d", se.Status)
	}
	return se.Message // whole: a progress line never cuts an error off
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

// piUsage normalizes an OpenAI usage object as Pi's openai-completions provider does:
// input excludes the cached prompt tokens, which are counted as cacheRead, and
// totalTokens is the sum of the parts.
func piUsage(u *openai.Usage) *session.Usage {
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
	return &session.Usage{Input: float64(input), Output: float64(u.CompletionTokens), CacheRead: float64(cached),
		Reasoning: &reasoning, TotalTokens: float64(input + u.CompletionTokens + cached),
		Cost: &session.UsageCost{TotalFromProvider: &computed}}
}

func (o *OpenAI) attempt(parent context.Context, req Request, start time.Time, at Progress) (Result, *SummaryError, error) {
	ci := &callInfo{}
	ctx, cancel := context.WithCancel(withCall(parent, ci))
	defer cancel()
	// The body is pi-ai 1.6.0's for this model (completionsBody); go-openai sends it and
	// parses the stream. Its typed request only has to ask for a stream.
	m := o.cfg.model()
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
	// those for minutes; TotalTimeout still bounds the whole summary).
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
			se := unreachableError(o.cfg.BaseURL, err)
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
	var usage *session.Usage
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
	return Result{Text: out, Usage: usage, Model: o.cfg.Model}, nil, nil
}
