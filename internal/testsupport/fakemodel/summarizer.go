package fakemodel

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Summarizer is a Server whose every request plays one well-behaved streamed summary
// whose shape a test tunes while it runs: how many chunks, the delay before each, and
// whether answers hold after their first chunk until Release. It counts requests and
// the answers the client abandoned. The LSP tests use it to drive progress and
// cancellation; the failure modes are Server's scripted steps.
type Summarizer struct {
	*Server

	mu     sync.Mutex
	Chunks int           // content chunks per answer
	Delay  time.Duration // before each chunk
	// Hold makes every answer stop after its first chunk until Release or the request
	// is cancelled.
	Hold    bool
	Text    string
	release chan struct{}

	Requests atomic.Int32
	// Started receives one value per request (dropped when full).
	Started   chan struct{}
	Cancelled atomic.Int32
}

// NewSummarizer starts the endpoint; base URL (with /v1) in URL.
func NewSummarizer(t testing.TB) *Summarizer {
	t.Helper()
	f := &Summarizer{Chunks: 4, Text: "## Goal\nFake summary from the test endpoint.", release: make(chan struct{}),
		Started: make(chan struct{}, 64)}
	f.Server = New(t)
	f.SetFallback(f.answer)
	return f
}

// Close stops the endpoint (idempotent) and drops the default transport's idle
// connections, so that no keep-alive connection to it outlives the test.
func (f *Summarizer) Close() {
	f.Server.Close()
	if tr, ok := http.DefaultTransport.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
}

// Release lets held answers finish.
func (f *Summarizer) Release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.release:
	default:
		close(f.release)
	}
}

// Set changes the script under the lock.
func (f *Summarizer) Set(fn func(f *Summarizer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// Config is the initializationOptions fragment that selects this endpoint.
func (f *Summarizer) Config() map[string]any {
	return map[string]any{"summarizer": "openai", "baseUrl": f.URL, "model": "fake-summarizer", "apiKeyEnv": "PI_LSP_TEST_KEY"}
}

// answer streams Text split at word boundaries into Chunks chunks.
func (f *Summarizer) answer(w http.ResponseWriter, r *http.Request) {
	f.Requests.Add(1)
	select {
	case f.Started <- struct{}{}:
	default:
	}
	f.mu.Lock()
	chunks, delay, hold, text, release := f.Chunks, f.Delay, f.Hold, f.Text, f.release
	f.mu.Unlock()
	s := StartSSE(w, r)
	// gone counts an abandoned answer, but not one the server's own shutdown ended.
	gone := func() bool {
		select {
		case <-f.quit:
		default:
			f.Cancelled.Add(1)
		}
		return false
	}
	pause := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-r.Context().Done():
			return gone()
		}
	}
	s.Role()
	words := strings.SplitAfter(text, " ")
	per := (len(words) + chunks - 1) / max(chunks, 1)
	for i := 0; i < chunks; i++ {
		if !pause(delay) {
			return
		}
		lo, hi := min(i*per, len(words)), min((i+1)*per, len(words))
		s.Content(strings.Join(words[lo:hi], ""))
		if hold && i == 0 {
			select {
			case <-release:
			case <-r.Context().Done():
				gone()
				return
			}
		}
	}
	s.Finish("stop")
	s.Usage(nil)
	s.Done()
}
