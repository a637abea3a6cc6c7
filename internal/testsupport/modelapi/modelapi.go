// Package modelapi is a local capture server that speaks the streaming format of every
// API pi-lsp summarizes over: anthropic-messages (POST …/messages), openai-responses
// (…/responses), openai-completions (…/chat/completions) and google-generative-ai
// (…/models/ID:streamGenerateContent?alt=sse). It records each request (method, path with
// its query, headers, JSON body) and answers the n-th with Answer (" n" appended from the
// second on), a normal stop (or Finish), and usage 100n input / 10n output tokens, so
// that a test can run real Pi and pi-lsp against it and compare what each sent.
//
// Import it only from _test.go files.
package modelapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Request is one request the server received.
type Request struct {
	Method string
	// Path is the URL path with its query ("/v1/messages?beta=true").
	Path   string
	Header http.Header
	Body   any // the JSON body, decoded
}

// Server is a capture server.
type Server struct {
	*httptest.Server
	// Answer is the summary text streamed back ("SUMMARY" by default).
	Answer string
	// Finish, when set, is the stop of every answer in the API's words ("length" maps
	// to each API's output-limit stop; openai-completions' "tool_calls" streams a call
	// of the read tool in place of the text).
	Finish string
	// Status, when non-zero, answers every request with that HTTP status and an error
	// body in the API's shape (StatusMessage its message).
	Status        int
	StatusMessage string

	mu   sync.Mutex
	reqs []Request
}

// New starts a capture server that the test closes.
func New(t testing.TB) *Server {
	s := &Server{Answer: "SUMMARY"}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Requests are the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Bodies are the JSON bodies of the requests received so far, in order.
func (s *Server) Bodies() []any {
	var out []any
	for _, r := range s.Requests() {
		out = append(out, r.Body)
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body any
	if err := json.Unmarshal(data, &body); err != nil {
		body = map[string]any{"unparsed": string(data)}
	}
	path := r.URL.Path
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: path, Header: r.Header.Clone(), Body: body})
	n := len(s.reqs)
	s.mu.Unlock()
	text := s.Answer
	if n > 1 {
		text = fmt.Sprintf("%s %d", s.Answer, n)
	}
	if s.Status != 0 {
		msg := s.StatusMessage
		if msg == "" {
			msg = http.StatusText(s.Status)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.Status)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "error", "code": s.Status}})
		_, _ = w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name string, v any) {
		b, _ := json.Marshal(v)
		if name != "" {
			fmt.Fprintf(w, "event: %s\n", name)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	model, _ := body.(map[string]any)["model"].(string)
	in, out := 100*n, 10*n
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		finish := "stop"
		if s.Finish != "" {
			finish = s.Finish
		}
		chunk := func(o map[string]any) {
			o["id"], o["object"], o["created"], o["model"] = "c1", "chat.completion.chunk", 0, model
			ev("", o)
		}
		if finish == "tool_calls" { // a model that calls a tool instead of answering
			chunk(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
				map[string]any{"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": "read", "arguments": "{}"}}}}, "finish_reason": nil}}})
		} else {
			chunk(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": text}, "finish_reason": nil}}})
		}
		chunk(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}})
		chunk(map[string]any{"choices": []any{}, "usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}})
		fmt.Fprint(w, "data: [DONE]\n\n")
	case strings.HasSuffix(r.URL.Path, "/messages"):
		stop := s.finish("end_turn", "max_tokens")
		ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
			"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": in, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		ev("ping", map[string]any{"type": "ping"})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": out}})
		ev("message_stop", map[string]any{"type": "message_stop"})
	case strings.HasSuffix(r.URL.Path, "/responses"):
		status, incomplete := "completed", any(nil)
		if s.Finish == "length" {
			status, incomplete = "incomplete", map[string]any{"reason": "max_output_tokens"}
		}
		item := map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []any{}}
		ev("response.created", map[string]any{"type": "response.created", "sequence_number": 0,
			"response": map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "model": model, "output": []any{}}})
		ev("response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item})
		ev("response.content_part.added", map[string]any{"type": "response.content_part.added", "sequence_number": 2, "item_id": "msg_1", "output_index": 0,
			"content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		ev("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_1", "output_index": 0,
			"content_index": 0, "delta": text})
		done := map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
		ev("response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": 4, "output_index": 0, "item": done})
		ev("response."+status, map[string]any{"type": "response." + status, "sequence_number": 5, "response": map[string]any{
			"id": "resp_1", "object": "response", "status": status, "model": model, "output": []any{done}, "incomplete_details": incomplete,
			"usage": map[string]any{"input_tokens": in, "output_tokens": out, "total_tokens": in + out,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}})
	case strings.Contains(r.URL.Path, ":streamGenerateContent"):
		finish := s.finish("STOP", "MAX_TOKENS")
		ev("", map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}, "index": 0}},
			"responseId": "r1", "modelVersion": model})
		ev("", map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": ""}}}, "finishReason": finish, "index": 0}},
			"usageMetadata": map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out}, "responseId": "r1", "modelVersion": model})
	default:
		http.Error(w, "unknown API path "+r.URL.Path, http.StatusNotFound)
	}
}

// finish is s.Finish in an API's words: normal for none, length for "length".
func (s *Server) finish(normal, length string) string {
	switch s.Finish {
	case "":
		return normal
	case "length":
		return length
	}
	return s.Finish
}

// WithoutFileBlocks drops the <read-files>/<modified-files> blocks ending a summary.
func WithoutFileBlocks(s string) string {
	for _, tag := range []string{"\n\n<read-files>", "\n\n<modified-files>"} {
		if i := strings.Index(s, tag); i >= 0 {
			s = s[:i]
		}
	}
	return s
}
