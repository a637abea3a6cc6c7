package compaction_test

// A scripted OpenAI-compatible chat-completions server for tests. It speaks the real
// streaming format (`data: {chunk}` frames with choices[].delta.content, a finish_reason
// chunk, a final usage chunk with "choices": [], `data: [DONE]`, and `: keep-alive`
// comment lines), records every request, and plays one scripted step per request.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// llmRequest is one request the fake server received.
type llmRequest struct {
	N      int // 0-based arrival order
	Raw    []byte
	Body   chatBody
	Header http.Header
	Start  time.Time
	End    time.Time
	// Cancelled is set when the handler saw the request context end (client gone).
	Cancelled bool
	// chunks counts the content chunks the handler wrote.
	chunks *atomic.Int32
}

// Chunks is how many content chunks the handler wrote.
func (r llmRequest) Chunks() int { return int(r.chunks.Load()) }

type chatMessage struct {
	Role    string      `json:"role"`
	Content textContent `json:"content"`
}

// textContent is a message's content as a string, whether it came as one (Pi sends the
// system prompt so) or as text parts (Pi sends the user prompt so).
type textContent string

func (c *textContent) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = textContent(s)
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	var out strings.Builder
	for _, p := range parts {
		out.WriteString(p.Text)
	}
	*c = textContent(out.String())
	return nil
}

type chatBody struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxTokens           int           `json:"max_tokens"`
	MaxCompletionTokens int           `json:"max_completion_tokens"`
	Stream              bool          `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Store           *bool  `json:"store"`
	ReasoningEffort string `json:"reasoning_effort"`
}

func (b chatBody) system() string {
	for _, m := range b.Messages {
		if m.Role == "system" {
			return string(m.Content)
		}
	}
	return ""
}

func (b chatBody) user() string {
	for _, m := range b.Messages {
		if m.Role == "user" {
			return string(m.Content)
		}
	}
	return ""
}

// isTurnPrefix tells the turn-prefix request from the history request.
func (b chatBody) isTurnPrefix() bool { return strings.HasPrefix(b.user(), "# Conversation\n") }

// llmStep answers one request.
type llmStep func(w http.ResponseWriter, r *http.Request, req *llmRequest)

type fakeLLM struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	queue    []llmStep
	fallback llmStep
	reqs     []*llmRequest
	// onRequest, when set, runs before the step (e.g. to append to a session file).
	onRequest func(req *llmRequest)
}

// newFakeLLM starts a server that plays steps in order, then fallback for every later
// request (a plain "SUMMARY" answer when fallback is nil).
func newFakeLLM(t testing.TB, steps ...llmStep) *fakeLLM {
	t.Helper()
	f := &fakeLLM{t: t, queue: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the base URL including /v1.
func (f *fakeLLM) URL() string { return f.srv.URL + "/v1" }

func (f *fakeLLM) setFallback(s llmStep) {
	f.mu.Lock()
	f.fallback = s
	f.mu.Unlock()
}

// requests returns a snapshot of the recorded requests.
func (f *fakeLLM) requests() []llmRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]llmRequest, len(f.reqs))
	for i, r := range f.reqs {
		out[i] = *r
	}
	return out
}

func (f *fakeLLM) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func (f *fakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := &llmRequest{Raw: raw, Header: r.Header.Clone(), Start: time.Now(), chunks: new(atomic.Int32)}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		f.t.Errorf("fake LLM: request body is not JSON: %v\n%s", err, raw)
	}
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		f.t.Errorf("fake LLM: unexpected %s %s", r.Method, r.URL.Path)
	}
	f.mu.Lock()
	req.N = len(f.reqs)
	f.reqs = append(f.reqs, req)
	var step llmStep
	if len(f.queue) > 0 {
		step, f.queue = f.queue[0], f.queue[1:]
	} else {
		step = f.fallback
	}
	hook := f.onRequest
	f.mu.Unlock()
	if step == nil {
		step = say("SUMMARY")
	}
	if hook != nil {
		hook(req)
	}
	step(w, r, req)
	f.mu.Lock()
	req.End = time.Now()
	if r.Context().Err() != nil {
		req.Cancelled = true
	}
	f.mu.Unlock()
}

// --- SSE writing ---

type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, f: w.(http.Flusher)}
	s.f.Flush()
	return s
}

func (s *sse) raw(line string) {
	_, _ = io.WriteString(s.w, line)
	s.f.Flush()
}

func (s *sse) data(v any) {
	b, _ := json.Marshal(v)
	s.raw("data: " + string(b) + "\n\n")
}

func (s *sse) keepAlive() { s.raw(": keep-alive\n\n") }

func chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
}

func (s *sse) role()             { s.data(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) }
func (s *sse) content(t string)  { s.data(chunk(map[string]any{"content": t}, nil)) }
func (s *sse) finish(why string) { s.data(chunk(map[string]any{}, why)) }
func (s *sse) done()             { s.raw("data: [DONE]\n\n") }
func (s *sse) usage(u fakeUsage) {
	s.data(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": "fake-model",
		"choices": []any{},
		"usage": map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion,
			"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached}},
	})
}

type fakeUsage struct{ Prompt, Completion, Cached int }

// defaultUsage is what say() reports in its usage chunk.
var defaultUsage = fakeUsage{Prompt: 1234, Completion: 56, Cached: 7}

// pieces splits text into n roughly equal parts (at least one).
func pieces(text string, n int) []string {
	r := []rune(text)
	if n < 1 || len(r) < n {
		return []string{text}
	}
	var out []string
	size := (len(r) + n - 1) / n
	for i := 0; i < len(r); i += size {
		out = append(out, string(r[i:min(len(r), i+size)]))
	}
	return out
}

// streamOpts tune a normal streamed answer.
type streamOpts struct {
	delay      time.Duration // before each content chunk
	firstDelay time.Duration // before the first byte of the body
	keepAlives int           // comment lines before the first chunk
	usage      *fakeUsage
	noUsage    bool
	started    *sse // the response is already an event stream
}

func stream(w http.ResponseWriter, r *http.Request, req *llmRequest, text string, o streamOpts) {
	if o.firstDelay > 0 {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(o.firstDelay):
		}
	}
	s := o.started
	if s == nil {
		s = startSSE(w)
	}
	for range o.keepAlives {
		s.keepAlive()
	}
	s.role()
	for _, p := range pieces(text, 3) {
		if o.delay > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(o.delay):
			}
		}
		s.content(p)
		req.chunks.Add(1)
		s.keepAlive()
	}
	s.finish("stop")
	if !o.noUsage {
		u := defaultUsage
		if o.usage != nil {
			u = *o.usage
		}
		s.usage(u)
	}
	s.done()
}

// say streams text as a normal, complete answer.
func say(text string) llmStep { return sayWith(text, streamOpts{}) }

func sayWith(text string, o streamOpts) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) { stream(w, r, req, text, o) }
}

// sayFn answers with a text computed from the request.
func sayFn(fn func(req *llmRequest) string, o streamOpts) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) { stream(w, r, req, fn(req), o) }
}

// status answers with an HTTP error status and a body; hdr are header key/value pairs.
func status(code int, body string, hdr ...string) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

func rateLimited(retryAfter string) llmStep {
	return status(http.StatusTooManyRequests,
		`{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
		"Retry-After", retryAfter)
}

func serverError() llmStep {
	return status(http.StatusInternalServerError,
		`{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`)
}

func contextTooLong() llmStep {
	return status(http.StatusBadRequest,
		`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)
}

// cutAfter streams n content chunks, then drops the TCP connection (no finish_reason,
// no terminating chunk, no [DONE]).
func cutAfter(n int) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		s := startSSE(w)
		s.role()
		for i := range n {
			s.content(fmt.Sprintf("part %d ", i))
			req.chunks.Add(1)
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		_ = conn.Close()
	}
}

// endAfter streams n content chunks and then ends the response cleanly, without a
// finish_reason and without [DONE] (a proxy that closes the stream early).
func endAfter(n int) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		s := startSSE(w)
		s.role()
		for i := range n {
			s.content(fmt.Sprintf("part %d ", i))
			req.chunks.Add(1)
		}
	}
}

// garbage streams one good chunk, then a data line that is not JSON.
func garbage() llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		s := startSSE(w)
		s.role()
		s.content("fine so far ")
		s.raw("data: {this is not json\n\n")
		s.finish("stop")
		s.done()
	}
}

// emptyAnswer finishes normally without any content.
func emptyAnswer() llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		s := startSSE(w)
		s.role()
		s.finish("stop")
		s.usage(fakeUsage{Prompt: 100, Completion: 0})
		s.done()
	}
}

// midStreamError sends a good chunk, then an error frame (as OpenRouter and others do
// after a 200).
func midStreamError(msg string) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		s := startSSE(w)
		s.role()
		s.content("partial ")
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil}})
		s.raw("data: " + string(b) + "\n\n")
	}
}

// stallAfter streams n chunks and then sends nothing until the client goes away (or max
// passes).
func stallAfter(n int, max time.Duration) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		s := startSSE(w)
		s.role()
		for i := range n {
			s.content(fmt.Sprintf("part %d ", i))
			req.chunks.Add(1)
		}
		select {
		case <-r.Context().Done():
		case <-time.After(max):
		}
	}
}

// stallAfterHeaders answers 200 with an event-stream and then sends nothing until the
// client goes away (or max passes): a server that accepted the request and hung.
func stallAfterHeaders(max time.Duration) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		startSSE(w)
		select {
		case <-r.Context().Done():
		case <-time.After(max):
		}
	}
}

// stallBeforeHeaders sends nothing at all until the client goes away (or max passes).
func stallBeforeHeaders(max time.Duration) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		select {
		case <-r.Context().Done():
		case <-time.After(max):
		}
	}
}

// keepAlivesThen sends a keep-alive comment every `every` for `total`, then answers.
func keepAlivesThen(every, total time.Duration, text string) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		s := startSSE(w)
		deadline := time.Now().Add(total)
		for time.Now().Before(deadline) {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(every):
			}
			s.raw(": OPENROUTER PROCESSING\n\n")
		}
		stream(w, r, req, text, streamOpts{started: s})
	}
}

// reset closes the connection with a TCP RST before answering anything.
func reset() llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = conn.Close()
	}
}

// slow streams a chunk every `every` until the client goes away (or max passes); seen
// is closed when the handler observes the request context's end.
func slow(every, max time.Duration, seen chan<- struct{}) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		s := startSSE(w)
		s.role()
		deadline := time.After(max)
		for i := 0; ; i++ {
			select {
			case <-r.Context().Done():
				if seen != nil {
					close(seen)
				}
				return
			case <-deadline:
				return
			case <-time.After(every):
			}
			s.content(fmt.Sprintf("slow %d ", i))
			req.chunks.Add(1)
		}
	}
}
