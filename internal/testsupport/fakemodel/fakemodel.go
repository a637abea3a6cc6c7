// Package fakemodel is the one scripted OpenAI-compatible chat-completions server
// (httptest) that speaks the real streaming format and can misbehave on purpose: HTTP
// errors with Retry-After, streams cut mid-answer, malformed SSE data, empty answers,
// stalls (before the headers, after them, mid-answer), keep-alive comments before a late
// answer, connection resets, context-too-long refusals, and answers held until the
// client gives up. Each request plays the next scripted step; when the script is used
// up, the fallback step plays (a plain summary by default).
//
// Import it only from _test.go files.
package fakemodel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Call is one request the server received.
type Call struct {
	N      int // 0-based arrival order
	Header http.Header
	Body   []byte
	Start  time.Time
	// Gone is set when the handler saw the client go away (request context done).
	Gone bool
}

// Step answers one request.
type Step func(w http.ResponseWriter, r *http.Request)

// Server is the fake endpoint.
type Server struct {
	// URL is the base URL including /v1, as summarizer configs take it.
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	queue    []Step
	fallback Step
	calls    []*Call
	// Started receives the arrival number of every request (dropped when full).
	Started   chan int
	quit      chan struct{}
	closeOnce sync.Once
}

// New starts a server that plays steps in order, then the fallback.
func New(t testing.TB, steps ...Step) *Server {
	t.Helper()
	s := &Server{queue: steps, Started: make(chan int, 4096), quit: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// Close ends every held step, drops the connections and stops the server. It is
// idempotent (the test's cleanup calls it too).
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.quit)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// SetFallback sets the step played once the script is used up.
func (s *Server) SetFallback(st Step) {
	s.mu.Lock()
	s.fallback = st
	s.mu.Unlock()
}

// Push appends steps to the script.
func (s *Server) Push(steps ...Step) {
	s.mu.Lock()
	s.queue = append(s.queue, steps...)
	s.mu.Unlock()
}

// Calls returns a snapshot of the requests received.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		out[i] = *c
	}
	return out
}

// Count is the number of requests received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	c := &Call{N: len(s.calls), Header: r.Header.Clone(), Body: body, Start: time.Now()}
	s.calls = append(s.calls, c)
	var st Step
	if len(s.queue) > 0 {
		st, s.queue = s.queue[0], s.queue[1:]
	} else {
		st = s.fallback
	}
	s.mu.Unlock()
	select {
	case s.Started <- c.N:
	default:
	}
	if st == nil {
		st = Say("SUMMARY from the fake model.")
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-r.Context().Done():
			s.mu.Lock()
			c.Gone = true
			s.mu.Unlock()
		case <-done:
		}
	}()
	st(w, r.WithContext(withQuit(r, s.quit)))
	close(done)
}

// ---- SSE helpers ----

type sse struct {
	w  http.ResponseWriter
	fl http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	s := &sse{w: w, fl: fl}
	s.flush()
	return s
}

func (s *sse) flush() {
	if s.fl != nil {
		s.fl.Flush()
	}
}

func (s *sse) raw(text string) {
	_, _ = io.WriteString(s.w, text)
	s.flush()
}

func (s *sse) data(v any) {
	b, _ := json.Marshal(v)
	s.raw("data: " + string(b) + "\n\n")
}

func chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake-summarizer",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}

func (s *sse) role()             { s.data(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) }
func (s *sse) content(t string)  { s.data(chunk(map[string]any{"content": t}, nil)) }
func (s *sse) finish(why string) { s.data(chunk(map[string]any{}, why)) }
func (s *sse) usage() {
	s.data(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake-summarizer",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
}
func (s *sse) done() { s.raw("data: [DONE]\n\n") }

// Pieces splits text into n pieces (the last may be empty).
func Pieces(text string, n int) []string {
	if n < 1 {
		n = 1
	}
	out := make([]string, n)
	per := (len(text) + n - 1) / n
	for i := range out {
		lo, hi := min(i*per, len(text)), min((i+1)*per, len(text))
		out[i] = text[lo:hi]
	}
	return out
}

// wait sleeps d unless the client goes away (false).
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// StreamOpts shape a streamed answer.
type StreamOpts struct {
	Chunks int           // content chunks (default 3)
	Delay  time.Duration // before each content chunk
	// HoldAfter, when > 0, stops after that many content chunks until the client goes
	// away (or the server closes): a summarizer that never finishes.
	HoldAfter int
	// OnChunk, when set, is called after each content chunk was flushed (1-based).
	OnChunk func(n int)
}

// Stream streams text as a complete, well-formed answer.
func Stream(text string, o StreamOpts) Step {
	return func(w http.ResponseWriter, r *http.Request) { startSSE(w).stream(r, text, o) }
}

func (s *sse) stream(r *http.Request, text string, o StreamOpts) {
	n := o.Chunks
	if n <= 0 {
		n = 3
	}
	s.role()
	for i, p := range Pieces(text, n) {
		if !wait(r, o.Delay) {
			return
		}
		s.content(p)
		if o.OnChunk != nil {
			o.OnChunk(i + 1)
		}
		if o.HoldAfter > 0 && i+1 == o.HoldAfter {
			<-r.Context().Done()
			return
		}
	}
	s.finish("stop")
	s.usage()
	s.done()
}

// KeepAlivesThen answers 200 with an event-stream, sends an SSE comment (": ping") every
// `every` for `total`, then streams text: a local model busy with a long prompt, whose
// server keeps the connection alive before the first token.
func KeepAlivesThen(every, total time.Duration, text string) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		for end := time.Now().Add(total); time.Now().Before(end); {
			if !wait(r, every) {
				return
			}
			s.raw(": ping\n\n")
		}
		s.stream(r, text, StreamOpts{})
	}
}

// Say streams text in three chunks.
func Say(text string) Step { return Stream(text, StreamOpts{}) }

// Status answers with an HTTP status and body; hdr are header name/value pairs.
func Status(code int, body string, hdr ...string) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// ServerError is HTTP 500 with an OpenAI-style error body.
func ServerError() Step {
	return Status(http.StatusInternalServerError, `{"error":{"message":"The server had an error while processing your request.","type":"server_error","code":null}}`)
}

// RateLimited is HTTP 429 with Retry-After.
func RateLimited(retryAfter string) Step {
	return Status(http.StatusTooManyRequests, `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`, "Retry-After", retryAfter)
}

// ContextTooLong is OpenAI's 400 context_length_exceeded refusal.
func ContextTooLong() Step {
	return Status(http.StatusBadRequest, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 90000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)
}

// hijackClose closes the connection under the handler without a proper end.
func hijackClose(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
		}
	}
}

// CutAfter streams n content chunks, then closes the connection mid-answer (no
// finish_reason, no [DONE], and a broken chunked encoding).
func CutAfter(n int) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.role()
		for i := 0; i < n; i++ {
			s.content(fmt.Sprintf("part %d ", i))
		}
		hijackClose(w)
	}
}

// EndAfter streams n content chunks and ends the response cleanly without a
// finish_reason or [DONE] (a proxy that drops the tail).
func EndAfter(n int) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.role()
		for i := 0; i < n; i++ {
			s.content(fmt.Sprintf("part %d ", i))
		}
	}
}

// Malformed sends one good chunk, then a data line that is not JSON.
func Malformed() Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.role()
		s.content("partial ")
		s.raw("data: {\"choices\": [{\"delta\": {\"content\": \"unterminated\n\n")
		s.raw("data: this is not json at all\n\n")
		s.done()
	}
}

// Empty finishes without any content.
func Empty() Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.role()
		s.content("   ")
		s.finish("stop")
		s.usage()
		s.done()
	}
}

// StallAfter streams n content chunks, then sends nothing until the client gives up
// (or max passes).
func StallAfter(n int, max time.Duration) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.role()
		for i := 0; i < n; i++ {
			s.content(fmt.Sprintf("part %d ", i))
		}
		wait(r, max)
	}
}

// StallAfterHeaders answers 200 with an event-stream and then sends nothing until the
// client gives up (or max passes): a server that accepted the request and hung.
func StallAfterHeaders(max time.Duration) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		wait(r, max)
	}
}

// StallBeforeHeaders sends nothing at all until the client gives up (or max passes).
func StallBeforeHeaders(max time.Duration) Step {
	return func(w http.ResponseWriter, r *http.Request) { wait(r, max) }
}

// Reset closes the connection before any response byte.
func Reset() Step {
	return func(w http.ResponseWriter, r *http.Request) { hijackClose(w) }
}

// ErrorEvent streams a chunk, then an error object as a data event (some providers do
// this after a 200).
func ErrorEvent(msg string) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.role()
		s.content("partial ")
		s.data(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil}})
	}
}

// ---- plumbing ----

// withQuit returns r's context, cancelled also when the server shuts down, so a held
// step never outlives the test. (r's context ends when the handler returns.)
func withQuit(r *http.Request, quit <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancel(r.Context())
	go func() {
		defer cancel()
		select {
		case <-quit:
		case <-ctx.Done():
		}
	}()
	return ctx
}
