package compaction_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/llm"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// The secrets a model call carries: the credential and the headers models.json
// configures (a model's and a provider's).
const (
	redirectKey         = "k-redirect-secret-0123456789"
	redirectModelHeader = "model-header-secret-4567"
	redirectCredHeader  = "cred-header-secret-8910"
)

// headerRecorder is a second server that records every request it gets, headers
// included: where a redirect would send a model call.
type headerRecorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newHeaderRecorder(t *testing.T) *headerRecorder {
	h := &headerRecorder{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen = append(h.seen, r.Header.Clone())
		h.mu.Unlock()
		http.Error(w, "not a model", http.StatusTeapot)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *headerRecorder) requests() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.seen...)
}

// redirector answers every request with code and a Location on target (same path and
// query), and counts them.
func redirector(t *testing.T, code int, target string) (*httptest.Server, func() int) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		http.Redirect(w, r, target+r.URL.RequestURI(), code)
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// checkRefusedRedirect runs a compaction of a fresh copy of a genuine session with s and
// checks that it failed on the redirect alone: one request, an error naming the status
// and the Location's host and no secret, nothing at the second server, the file
// byte-identical.
func checkRefusedRedirect(t *testing.T, s compaction.Summarizer, code int, first func() int, second *headerRecorder) {
	t.Helper()
	path := corpusCopy(t, normalFile)
	before := sessiontest.Read(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := runWith(ctx, path, s, settings(normalKeep, 16384), compaction.Options{})
	if err == nil {
		t.Fatalf("the compaction succeeded through a %d redirect: %+v", code, res)
	}
	msg := err.Error()
	host := strings.TrimPrefix(second.URL, "http://")
	for _, want := range []string{fmt.Sprintf("HTTP %d", code), "redirects to " + host, "never follows a redirect"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	for _, secret := range []string{redirectKey, redirectModelHeader, redirectCredHeader} {
		if strings.Contains(msg, secret) {
			t.Errorf("error %q holds a secret", msg)
		}
	}
	if n := first(); n != 1 {
		t.Errorf("%d requests to the base URL, want 1 (a refused redirect is not retried)", n)
	}
	if got := second.requests(); len(got) != 0 {
		t.Errorf("the redirect's target got %d requests, the first with headers %v", len(got), got[0])
	}
	sameBytes(t, path, before)
}

// A provider's base URL that answers 301, 302, 307 or 308 is never followed, over each
// of the four APIs: the credential (Authorization, x-api-key, x-goog-api-key) and the
// configured headers stay with the host the user named, the job fails at once with the
// status and the Location's host, and the session is untouched.
func TestModelCallsRefuseRedirects(t *testing.T) {
	for api, prefix := range apiPaths {
		for _, code := range []int{301, 302, 307, 308} {
			t.Run(fmt.Sprintf("%s/%d", api, code), func(t *testing.T) {
				second := newHeaderRecorder(t)
				first, count := redirector(t, code, second.URL)
				client, err := llm.New(llm.Config{
					Model: &catalog.Model{ID: "m", API: api, Provider: "acme", BaseURL: first.URL + prefix, ContextWindow: 100000, MaxTokens: 4000,
						Headers: map[string]string{"X-Model-Secret": redirectModelHeader}},
					Credential: &catalog.Credential{APIKey: redirectKey, Headers: map[string]string{"X-Provider-Secret": redirectCredHeader}},
					RetryLimits: compaction.RetryLimits{MaxRetries: 3, RetryBase: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond,
						TotalTimeout: 20 * time.Second, StallTimeout: 5 * time.Second},
				})
				if err != nil {
					t.Fatal(err)
				}
				checkRefusedRedirect(t, compaction.NewModelSummarizer(client, ""), code, count, second)
			})
		}
	}
}

// The OpenAI-compatible summarizer (PI_LSP_SUMMARIZER=openai, PI_LSP_BASE_URL) refuses a
// redirect the same way: its bearer key never reaches another host or port.
func TestOpenAICompatibleRefusesRedirects(t *testing.T) {
	for _, code := range []int{301, 302, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			isolate.Setup(t)
			second := newHeaderRecorder(t)
			first, count := redirector(t, code, second.URL)
			t.Setenv("PI_LSP_SUMMARIZER", "openai")
			t.Setenv("PI_LSP_BASE_URL", first.URL+"/v1")
			t.Setenv("PI_LSP_MODEL", "m")
			t.Setenv("PI_LSP_API_KEY_ENV", "PI_LSP_REDIRECT_KEY")
			t.Setenv("PI_LSP_REDIRECT_KEY", redirectKey)
			s, _, err := service.ConfigFromEnv().Build(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			checkRefusedRedirect(t, s, code, count, second)
		})
	}
}
