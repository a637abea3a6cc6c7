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
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Call is one request the server received.
type Call struct {
	N      int // 0-based arrival order
	Header http.Header
	Body   []byte
	Start  time.Time
	End    time.Time // when its step returned
	// Gone is set when the handler saw the client go away (request context done).
	Gone bool
	// chunks counts the content chunks its step wrote.
	chunks *atomic.Int32
}

// Chunks is how many content chunks the step wrote for this call.
func (c Call) Chunks() int {
	if c.chunks == nil {
		return 0
	}
	return int(c.chunks.Load())
}

// callKey is the request context key of a step's *Call.
type callKey struct{}

// CallOf is the Call of a request a step is answering (a step that computes its answer
// from the request reads the body here).
func CallOf(r *http.Request) *Call {
	c, _ := r.Context().Value(callKey{}).(*Call)
	return c
}

// CallSnapshot is a copy of the request's Call taken under the server's lock: the server
// marks a call Gone from another goroutine when its client goes away, so a step must
// not copy the Call bare.
func CallSnapshot(r *http.Request) Call {
	c := CallOf(r)
	if c == nil {
		return Call{}
	}
	if srv, ok := r.Context().Value(serverKey{}).(*Server); ok {
		srv.mu.Lock()
		defer srv.mu.Unlock()
	}
	return *c
}

// Usage is the token usage a streamed answer reports in its final chunk.
type Usage struct{ Prompt, Completion, Cached int }

// Format is what every chunk names: the model, the creation time and the default usage.
type Format struct {
	Model   string
	Created int
	Usage   Usage
}

// defaultFormat is the format of a new Server.
var defaultFormat = Format{Model: "fake-summarizer", Created: 1, Usage: Usage{Prompt: 100, Completion: 20}}

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
	format   Format
	// onRequest runs for every request before its step.
	onRequest func(c *Call)
	// Started receives the arrival number of every request (dropped when full).
	Started   chan int
	quit      chan struct{}
	closeOnce sync.Once
}

// New starts a server that plays steps in order, then the fallback.
func New(t testing.TB, steps ...Step) *Server {
	t.Helper()
	s := &Server{queue: steps, Started: make(chan int, 4096), quit: make(chan struct{}), format: defaultFormat}
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

// SetFormat sets what the chunks of later answers name.
func (s *Server) SetFormat(f Format) {
	s.mu.Lock()
	s.format = f
	s.mu.Unlock()
}

// OnRequest sets a function run for every later request before its step (e.g. to
// append to a session file while the summarizer works).
func (s *Server) OnRequest(fn func(c *Call)) {
	s.mu.Lock()
	s.onRequest = fn
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
	c := &Call{N: len(s.calls), Header: r.Header.Clone(), Body: body, Start: time.Now(), chunks: new(atomic.Int32)}
	s.calls = append(s.calls, c)
	var st Step
	if len(s.queue) > 0 {
		st, s.queue = s.queue[0], s.queue[1:]
	} else {
		st = s.fallback
	}
	hook := s.onRequest
	s.mu.Unlock()
	select {
	case s.Started <- c.N:
	default:
	}
	if st == nil {
		st = Say("SUMMARY from the fake model.")
	}
	if hook != nil {
		hook(c)
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
	st(w, r.WithContext(context.WithValue(context.WithValue(withQuit(r, s.quit), callKey{}, c), serverKey{}, s)))
	close(done)
	s.mu.Lock()
	c.End = time.Now()
	c.Gone = c.Gone || r.Context().Err() != nil
	s.mu.Unlock()
}

// ---- SSE writing ----

// SSE writes one event-stream answer in the server's format and counts its content
// chunks on the request's Call; a test's own step writes odd answers with it.
type SSE struct {
	w      http.ResponseWriter
	fl     http.Flusher
	call   *Call
	format Format
}

// StartSSE answers 200 with an event-stream and flushes the headers.
func StartSSE(w http.ResponseWriter, r *http.Request) *SSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	s := &SSE{w: w, fl: fl, call: CallOf(r), format: defaultFormat}
	if s.call != nil {
		if srv, ok := r.Context().Value(serverKey{}).(*Server); ok {
			srv.mu.Lock()
			s.format = srv.format
			srv.mu.Unlock()
		}
	}
	s.flush()
	return s
}

// serverKey is the request context key of the Server answering.
type serverKey struct{}

func (s *SSE) flush() {
	if s.fl != nil {
		s.fl.Flush()
	}
}

// Raw writes text as it is.
func (s *SSE) Raw(text string) {
	_, _ = io.WriteString(s.w, text)
	s.flush()
}

// Data writes v as one data event.
func (s *SSE) Data(v any) {
	b, _ := json.Marshal(v)
	s.Raw("data: " + string(b) + "\n\n")
}

func (s *SSE) chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": s.format.Created, "model": s.format.Model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}

// Role writes the first chunk, the assistant's role.
func (s *SSE) Role() { s.Data(s.chunk(map[string]any{"role": "assistant", "content": ""}, nil)) }

// Content writes one content chunk.
func (s *SSE) Content(t string) {
	s.Data(s.chunk(map[string]any{"content": t}, nil))
	if s.call != nil {
		s.call.chunks.Add(1)
	}
}

// Finish writes the chunk with the finish reason.
func (s *SSE) Finish(why string) { s.Data(s.chunk(map[string]any{}, why)) }

// Usage writes the final usage chunk (choices empty, as with include_usage); nil is
// the format's usage.
func (s *SSE) Usage(u *Usage) {
	if u == nil {
		u = &s.format.Usage
	}
	s.Data(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": s.format.Created, "model": s.format.Model,
		"choices": []any{},
		"usage": map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion,
			"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached}}})
}

// KeepAlive writes an SSE comment line.
func (s *SSE) KeepAlive(text string) { s.Raw(": " + text + "\n\n") }

// Done writes the [DONE] sentinel.
func (s *SSE) Done() { s.Raw("data: [DONE]\n\n") }

// Pieces splits text into n pieces of about equal length in runes (the last may be
// empty), so that no piece splits a character.
func Pieces(text string, n int) []string {
	if n < 1 {
		n = 1
	}
	rs := []rune(text)
	out := make([]string, n)
	per := (len(rs) + n - 1) / n
	for i := range out {
		lo, hi := min(i*per, len(rs)), min((i+1)*per, len(rs))
		out[i] = string(rs[lo:hi])
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
	// FirstDelay passes before the first byte of the answer, headers included.
	FirstDelay time.Duration
	// KeepAlives is how many comment lines come before the first chunk; KeepAliveEach
	// adds one after every content chunk.
	KeepAlives    int
	KeepAliveEach bool
	// Usage replaces the format's usage; NoUsage leaves the usage chunk out.
	Usage   *Usage
	NoUsage bool
	// HoldAfter, when > 0, stops after that many content chunks until the client goes
	// away (or the server closes): a summarizer that never finishes.
	HoldAfter int
	// OnChunk, when set, is called after each content chunk was flushed (1-based).
	OnChunk func(n int)
}

// Stream streams text as a complete, well-formed answer.
func Stream(text string, o StreamOpts) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		if o.FirstDelay > 0 && !wait(r, o.FirstDelay) {
			return
		}
		StartSSE(w, r).Stream(r, text, o)
	}
}

// StreamFn streams the text fn computes from the request.
func StreamFn(fn func(c *Call) string, o StreamOpts) Step {
	return func(w http.ResponseWriter, r *http.Request) { Stream(fn(CallOf(r)), o)(w, r) }
}

// Stream writes text as the rest of a complete answer on an event stream already begun.
func (s *SSE) Stream(r *http.Request, text string, o StreamOpts) {
	n := o.Chunks
	if n <= 0 {
		n = 3
	}
	for range o.KeepAlives {
		s.KeepAlive("keep-alive")
	}
	s.Role()
	for i, p := range Pieces(text, n) {
		if !wait(r, o.Delay) {
			return
		}
		s.Content(p)
		if o.OnChunk != nil {
			o.OnChunk(i + 1)
		}
		if o.KeepAliveEach {
			s.KeepAlive("keep-alive")
		}
		if o.HoldAfter > 0 && i+1 == o.HoldAfter {
			<-r.Context().Done()
			return
		}
	}
	s.Finish("stop")
	if !o.NoUsage {
		s.Usage(o.Usage)
	}
	s.Done()
}

// KeepAlivesThen answers 200 with an event-stream, sends an SSE comment (": ping") every
// `every` for `total`, then streams text: a local model busy with a long prompt, whose
// server keeps the connection alive before the first token.
func KeepAlivesThen(every, total time.Duration, text string) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := StartSSE(w, r)
		for end := time.Now().Add(total); time.Now().Before(end); {
			if !wait(r, every) {
				return
			}
			s.Raw(": ping\n\n")
		}
		s.Stream(r, text, StreamOpts{})
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

// startParts starts an answer and streams n content chunks of it.
func startParts(w http.ResponseWriter, r *http.Request, n int) {
	s := StartSSE(w, r)
	s.Role()
	for i := 0; i < n; i++ {
		s.Content(fmt.Sprintf("part %d ", i))
	}
}

// CutAfter streams n content chunks, then closes the connection mid-answer (no
// finish_reason, no [DONE], and a broken chunked encoding).
func CutAfter(n int) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		startParts(w, r, n)
		hijackClose(w)
	}
}

// EndAfter streams n content chunks and ends the response cleanly without a
// finish_reason or [DONE] (a proxy that drops the tail).
func EndAfter(n int) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		startParts(w, r, n)
	}
}

// Malformed sends one good chunk, then a data line that is not JSON.
func Malformed() Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := StartSSE(w, r)
		s.Role()
		s.Content("partial ")
		s.Raw("data: {\"choices\": [{\"delta\": {\"content\": \"unterminated\n\n")
		s.Raw("data: this is not json at all\n\n")
		s.Done()
	}
}

// Empty finishes without any content.
func Empty() Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := StartSSE(w, r)
		s.Role()
		s.Content("   ")
		s.Finish("stop")
		s.Usage(nil)
		s.Done()
	}
}

// StallAfter streams n content chunks, then sends nothing until the client gives up
// (or max passes).
func StallAfter(n int, max time.Duration) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		startParts(w, r, n)
		wait(r, max)
	}
}

// StallAfterHeaders answers 200 with an event-stream and then sends nothing until the
// client gives up (or max passes): a server that accepted the request and hung.
func StallAfterHeaders(max time.Duration) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		StartSSE(w, r)
		wait(r, max)
	}
}

// StallBeforeHeaders sends nothing at all until the client gives up (or max passes).
func StallBeforeHeaders(max time.Duration) Step {
	return func(w http.ResponseWriter, r *http.Request) { wait(r, max) }
}

// Reset drops the connection with a TCP RST before any response byte.
func Reset() Step {
	return func(w http.ResponseWriter, r *http.Request) {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				_ = conn.Close()
			}
		}
	}
}

// Slow streams a chunk every `every` until the client goes away (or max passes); seen,
// when not nil, is closed when the step observes the client's end.
func Slow(every, max time.Duration, seen chan<- struct{}) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := StartSSE(w, r)
		s.Role()
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
			s.Content(fmt.Sprintf("slow %d ", i))
		}
	}
}

// ErrorEvent streams a chunk, then an error object as a data event (some providers do
// this after a 200).
func ErrorEvent(msg string) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		s := StartSSE(w, r)
		s.Role()
		s.Content("partial ")
		s.Data(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil}})
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
