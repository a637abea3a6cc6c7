package compaction_test

// The compaction tests' view of the shared fake model (internal/testsupport/fakemodel):
// requests with their body decoded as Pi's summarizer sends it, steps that see the
// request, and the usage the summaries record (1234 in, 56 out, 7 cached).

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
)

// llmRequest is one request the fake server received, with its body decoded.
type llmRequest struct {
	N      int // 0-based arrival order
	Raw    []byte
	Body   chatBody
	Header http.Header
	Start  time.Time
	End    time.Time
	// Cancelled is set when the handler saw the request context end (client gone).
	Cancelled bool
	call      *fakemodel.Call
}

// Chunks is how many content chunks the handler wrote.
func (r llmRequest) Chunks() int { return r.call.Chunks() }

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
	srv *fakemodel.Server

	mu sync.Mutex
	// onRequest, when set, runs before the step (e.g. to append to a session file).
	onRequest func(req *llmRequest)
}

// newFakeLLM starts a server that plays steps in order, then fallback for every later
// request (a plain "SUMMARY" answer when fallback is nil).
func newFakeLLM(t testing.TB, steps ...llmStep) *fakeLLM {
	t.Helper()
	f := &fakeLLM{t: t}
	f.srv = fakemodel.New(t)
	f.srv.SetFormat(fakemodel.Format{Model: "fake-model", Created: 1700000000, Usage: defaultUsage})
	for _, st := range steps {
		f.srv.Push(f.step(st))
	}
	f.srv.SetFallback(f.step(say("SUMMARY")))
	f.srv.OnRequest(func(c *fakemodel.Call) {
		f.mu.Lock()
		hook := f.onRequest
		f.mu.Unlock()
		if hook != nil {
			hook(f.request(*c))
		}
	})
	return f
}

// URL is the base URL including /v1.
func (f *fakeLLM) URL() string { return f.srv.URL }

func (f *fakeLLM) setFallback(s llmStep) {
	if s == nil {
		s = say("SUMMARY")
	}
	f.srv.SetFallback(f.step(s))
}

// step adapts an llmStep to the server's steps.
func (f *fakeLLM) step(st llmStep) fakemodel.Step {
	return func(w http.ResponseWriter, r *http.Request) { st(w, r, f.request(fakemodel.CallSnapshot(r))) }
}

// request decodes a call; every request must be a JSON chat-completions POST.
func (f *fakeLLM) request(c fakemodel.Call) *llmRequest {
	req := &llmRequest{N: c.N, Raw: c.Body, Header: c.Header, Start: c.Start, End: c.End, Cancelled: c.Gone, call: &c}
	if err := json.Unmarshal(c.Body, &req.Body); err != nil {
		f.t.Errorf("fake LLM: request body is not JSON: %v\n%s", err, c.Body)
	}
	return req
}

// requests returns a snapshot of the recorded requests.
func (f *fakeLLM) requests() []llmRequest {
	var out []llmRequest
	for _, c := range f.srv.Calls() {
		out = append(out, *f.request(c))
	}
	return out
}

func (f *fakeLLM) count() int { return f.srv.Count() }

type fakeUsage = fakemodel.Usage

// defaultUsage is what say() reports in its usage chunk.
var defaultUsage = fakeUsage{Prompt: 1234, Completion: 56, Cached: 7}

// adapt is a server step as an llmStep.
func adapt(s fakemodel.Step) llmStep {
	return func(w http.ResponseWriter, r *http.Request, _ *llmRequest) { s(w, r) }
}

// streamOpts tune a normal streamed answer.
type streamOpts struct {
	delay      time.Duration // before each content chunk
	firstDelay time.Duration // before the first byte of the body
	keepAlives int           // comment lines before the first chunk
	usage      *fakeUsage
	noUsage    bool
}

func (o streamOpts) shared() fakemodel.StreamOpts {
	return fakemodel.StreamOpts{Chunks: 3, Delay: o.delay, FirstDelay: o.firstDelay, KeepAlives: o.keepAlives,
		KeepAliveEach: true, Usage: o.usage, NoUsage: o.noUsage}
}

// say streams text as a normal, complete answer.
func say(text string) llmStep { return sayWith(text, streamOpts{}) }

func sayWith(text string, o streamOpts) llmStep { return adapt(fakemodel.Stream(text, o.shared())) }

// sayFn answers with a text computed from the request.
func sayFn(fn func(req *llmRequest) string, o streamOpts) llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		fakemodel.Stream(fn(req), o.shared())(w, r)
	}
}

// sayParts answers a turn-prefix request (of a split turn) with prefix and any other
// with history.
func sayParts(history, prefix string, o streamOpts) llmStep {
	return sayFn(func(r *llmRequest) string {
		if r.Body.isTurnPrefix() {
			return prefix
		}
		return history
	}, o)
}

// The error bodies are OpenAI's, to the letter (the tests match their messages).

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
func cutAfter(n int) llmStep { return adapt(fakemodel.CutAfter(n)) }

// endAfter streams n content chunks and then ends the response cleanly, without a
// finish_reason and without [DONE] (a proxy that closes the stream early).
func endAfter(n int) llmStep { return adapt(fakemodel.EndAfter(n)) }

// garbage streams one good chunk, then a data line that is not JSON.
func garbage() llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		s := fakemodel.StartSSE(w, r)
		s.Role()
		s.Content("fine so far ")
		s.Raw("data: {this is not json\n\n")
		s.Finish("stop")
		s.Done()
	}
}

// emptyAnswer finishes normally without any content.
func emptyAnswer() llmStep {
	return func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		s := fakemodel.StartSSE(w, r)
		s.Role()
		s.Finish("stop")
		s.Usage(&fakeUsage{Prompt: 100, Completion: 0})
		s.Done()
	}
}

// midStreamError sends a good chunk, then an error frame (as OpenRouter and others do
// after a 200).
func midStreamError(msg string) llmStep { return adapt(fakemodel.ErrorEvent(msg)) }

// stallAfter streams n chunks and then sends nothing until the client goes away (or max
// passes).
func stallAfter(n int, max time.Duration) llmStep { return adapt(fakemodel.StallAfter(n, max)) }

// stallAfterHeaders answers 200 with an event-stream and then sends nothing until the
// client goes away (or max passes): a server that accepted the request and hung.
func stallAfterHeaders(max time.Duration) llmStep { return adapt(fakemodel.StallAfterHeaders(max)) }

// stallBeforeHeaders sends nothing at all until the client goes away (or max passes).
func stallBeforeHeaders(max time.Duration) llmStep {
	return adapt(fakemodel.StallBeforeHeaders(max))
}

// keepAlivesThen sends a keep-alive comment every `every` for `total`, then answers.
func keepAlivesThen(every, total time.Duration, text string) llmStep {
	return adapt(fakemodel.KeepAlivesThen(every, total, text))
}

// reset closes the connection with a TCP RST before answering anything.
func reset() llmStep { return adapt(fakemodel.Reset()) }

// slow streams a chunk every `every` until the client goes away (or max passes); seen
// is closed when the handler observes the request context's end.
func slow(every, max time.Duration, seen chan<- struct{}) llmStep {
	return adapt(fakemodel.Slow(every, max, seen))
}

// status answers with an HTTP error status and a body; hdr are header key/value pairs.
func status(code int, body string, hdr ...string) llmStep {
	return adapt(fakemodel.Status(code, body, hdr...))
}
