package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/llm"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/modelapi"
)

var apiPaths = map[string]string{
	catalog.APIAnthropicMessages: "",
	catalog.APIOpenAIResponses:   "/v1",
	catalog.APIOpenAICompletions: "/v1",
	catalog.APIGoogle:            "/v1beta",
}

func client(t *testing.T, api, base string, cred *catalog.Credential) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{
		Model:      &catalog.Model{ID: "m", API: api, Provider: "acme", BaseURL: base, ContextWindow: 100000, MaxTokens: 4000},
		Credential: cred, RetryLimits: llm.RetryLimits{MaxRetries: 3, RetryBase: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond,
			TotalTimeout: 20 * time.Second, StallTimeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every API streams its answer to the end and reports usage in Pi's shape.
func TestModelSummarizerAnswers(t *testing.T) {
	for api, prefix := range apiPaths {
		t.Run(api, func(t *testing.T) {
			srv := modelapi.New(t)
			s := client(t, api, srv.URL+prefix, &catalog.Credential{APIKey: "k-1234"})
			r, err := s.Complete(context.Background(), llm.Request{System: "Summarize.", User: "[User]: hi"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != "SUMMARY" || r.Usage == nil || r.Usage.Input+r.Usage.CacheRead != 100 || r.Usage.Output != 10 || r.Usage.Cost == nil {
				t.Errorf("result %+v usage %+v", r, r.Usage)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests", n)
			}
			srv.Finish = "length"
			_, err = s.Complete(context.Background(), llm.Request{System: "Summarize.", User: "[User]: hi"})
			var se *llm.Error
			if !errors.As(err, &se) || se.Kind != llm.KindLength {
				t.Errorf("an answer cut at the output limit: %v", err)
			}
		})
	}
}

// A refused credential is not retried, and its error names the provider, where the key
// came from and the fix, never the key.
func TestModelSummarizerAuthFailure(t *testing.T) {
	for api, prefix := range apiPaths {
		t.Run(api, func(t *testing.T) {
			srv := modelapi.New(t)
			srv.Status, srv.StatusMessage = 401, "invalid x-api-key k-secret-value"
			cred := &catalog.Credential{APIKey: "k-secret-value", Source: "environment variable ACME_API_KEY", Fix: "check ACME_API_KEY (or run pi auth login acme)"}
			s := client(t, api, srv.URL+prefix, cred)
			_, err := s.Complete(context.Background(), llm.Request{System: "Summarize.", User: "[User]: hi"})
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, want := range []string{"acme refused the credential", "HTTP 401", "invalid x-api-key", "environment variable ACME_API_KEY", "fix: check ACME_API_KEY"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "k-secret-value") {
				t.Errorf("the key is in the error: %q", msg)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests for a refused key, want 1", n)
			}
		})
	}
}

// A host that refuses connections fails after one retry, with the whole message, and
// the progress line announcing the retry carries it whole too.
func TestModelSummarizerUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for api, prefix := range apiPaths {
		t.Run(api, func(t *testing.T) {
			s := client(t, api, "http://"+addr+prefix, &catalog.Credential{APIKey: "k"})
			var mu sync.Mutex
			var notes []string
			_, err := s.Complete(context.Background(), llm.Request{System: "Summarize.", User: "x",
				Progress: func(p llm.Progress) {
					if p.Starting {
						mu.Lock()
						notes = append(notes, fmt.Sprintf("attempt %d of %d after %s", p.Attempt, p.MaxAttempts, p.Retry))
						mu.Unlock()
					}
				}})
			if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "after 1 retry") {
				t.Fatalf("error %v", err)
			}
			if len(notes) != 2 || !strings.HasPrefix(notes[1], "attempt 2 of 2 after ") || !strings.Contains(notes[1], "connection refused") {
				t.Errorf("progress notes %q", notes)
			}
		})
	}
}
