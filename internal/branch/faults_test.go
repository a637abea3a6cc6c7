package branch

// LLM faults during a navigation with a branch summary, against a scripted SSE server
// and the real OpenAI-compatible summarizer: the navigation either succeeds after a
// bounded number of retries (and appends exactly its entries) or fails with a clear
// reason, and then the session file is byte-identical.

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

const faultSummary = "## Goal\nSummary of the abandoned branch from the fake model."

func TestNavigateSummaryLLMFaults(t *testing.T) {
	type want struct {
		ok       bool
		errHas   []string // substrings of the error (case-insensitive)
		calls    int      // exact number of requests (0: do not check)
		maxCalls int
		minTime  time.Duration
		maxTime  time.Duration
		tooLong  bool // errors.Is(err, compaction.ErrContextTooLong)
	}
	ok := fakemodel.Say(faultSummary)
	cases := []struct {
		name     string
		steps    []fakemodel.Step
		fallback fakemodel.Step
		cfg      func(*fakemodel.OpenAIConfig)
		want     want
	}{
		{name: "500 then success", steps: []fakemodel.Step{fakemodel.ServerError(), fakemodel.ServerError()}, fallback: ok,
			want: want{ok: true, calls: 3}},
		{name: "500 every time", fallback: fakemodel.ServerError(),
			want: want{errHas: []string{"HTTP 500", "after 3 retries"}, calls: 4}},
		{name: "502 with an HTML body", fallback: fakemodel.Status(http.StatusBadGateway, "<html><body>Bad Gateway</body></html>", "Content-Type", "text/html"),
			want: want{errHas: []string{"502"}, calls: 4}},
		{name: "429 with Retry-After then success", steps: []fakemodel.Step{fakemodel.RateLimited("1")}, fallback: ok,
			want: want{ok: true, calls: 2, minTime: 900 * time.Millisecond}},
		{name: "429 every time, Retry-After beyond the cap", fallback: fakemodel.RateLimited("3600"),
			cfg:  func(c *fakemodel.OpenAIConfig) { c.MaxRetryDelay = 100 * time.Millisecond },
			want: want{errHas: []string{"HTTP 429", "rate limit", "after 3 retries"}, calls: 4, maxTime: 5 * time.Second}},
		{name: "stream cut then success", steps: []fakemodel.Step{fakemodel.CutAfter(2)}, fallback: ok,
			want: want{ok: true, calls: 2}},
		{name: "stream cut every time", fallback: fakemodel.CutAfter(2),
			want: want{errHas: []string{"stream", "after 3 retries"}, calls: 4}},
		{name: "stream ends without finishing", fallback: fakemodel.EndAfter(2),
			want: want{errHas: []string{"stream ended before the model finished"}, calls: 4}},
		{name: "malformed SSE then success", steps: []fakemodel.Step{fakemodel.Malformed()}, fallback: ok,
			want: want{ok: true, calls: 2}},
		{name: "malformed SSE every time", fallback: fakemodel.Malformed(),
			want: want{errHas: []string{"malformed stream data"}, calls: 4}},
		{name: "error event mid-stream", fallback: fakemodel.ErrorEvent("upstream overloaded"),
			want: want{errHas: []string{"upstream overloaded"}, calls: 4}},
		{name: "empty answer", fallback: fakemodel.Empty(),
			want: want{errHas: []string{"empty summary"}, calls: 1}},
		{name: "stall mid-stream then success", steps: []fakemodel.Step{fakemodel.StallAfter(1, time.Minute)}, fallback: ok,
			want: want{ok: true, calls: 2, maxTime: 10 * time.Second}},
		{name: "stall mid-stream every time", fallback: fakemodel.StallAfter(1, time.Minute),
			want: want{errHas: []string{"stalled"}, calls: 2, maxTime: 10 * time.Second}}, // a stall is retried once
		{name: "no response headers", fallback: fakemodel.StallBeforeHeaders(time.Minute),
			want: want{errHas: []string{"no response within"}, calls: 2, maxTime: 10 * time.Second}},
		{name: "connection reset then success", steps: []fakemodel.Step{fakemodel.Reset(), fakemodel.Reset()}, fallback: ok,
			want: want{ok: true, calls: 3}},
		{name: "connection reset every time", fallback: fakemodel.Reset(),
			want: want{errHas: []string{"after 3 retries"}, maxCalls: 4}},
		{name: "context too long", fallback: fakemodel.ContextTooLong(),
			want: want{errHas: []string{"maximum context length"}, calls: 1, tooLong: true}},
		{name: "401 is not retried", fallback: fakemodel.Status(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`),
			want: want{errHas: []string{"HTTP 401", "Incorrect API key"}, calls: 1}},
		{name: "whole summary bounded by TotalTimeout", fallback: fakemodel.Stream(faultSummary, fakemodel.StreamOpts{Chunks: 50, Delay: 100 * time.Millisecond}),
			cfg:  func(c *fakemodel.OpenAIConfig) { c.TotalTimeout = 500 * time.Millisecond },
			want: want{errHas: []string{"deadline exceeded"}, calls: 1, maxTime: 5 * time.Second}},
	}
	var mu sync.Mutex
	var succeeded, failedClean, requests int
	t.Cleanup(func() { // after the parallel subtests
		t.Logf("RESULT llm-faults (branch summary): %d fault scenarios: %d navigations succeeded after retries, %d failed with a clear reason and the file byte-identical; %d requests in all",
			len(cases), succeeded, failedClean, requests)
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := fakemodel.New(t, c.steps...)
			srv.SetFallback(c.fallback)
			cfg := fakemodel.OpenAIConfig{BaseURL: srv.URL, Model: "fake-summarizer", APIKey: "test-key",
				RetryLimits: compaction.RetryLimits{MaxRetries: 3, RetryBase: 10 * time.Millisecond, MaxRetryDelay: 2 * time.Second,
					StallTimeout: 300 * time.Millisecond, TotalTimeout: 30 * time.Second}}
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			path := mainTree(t)
			before := sessiontest.Read(t, path)
			start := time.Now()
			var res *NavigateResult
			var err error
			noHang(t, 60*time.Second, func() {
				res, err = Navigate(context.Background(), sessiontest.Snapshot(t, path), "a2", NavigateOptions{Summarize: true, Summarizer: fakemodel.NewOpenAI(cfg)})
			})
			elapsed := time.Since(start)
			calls := srv.Count()
			t.Logf("%d request(s), %v: err=%v", calls, elapsed.Round(time.Millisecond), err)
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				requests += calls
				if !t.Failed() {
					if err == nil {
						succeeded++
					} else {
						failedClean++
					}
				}
			}()
			w := c.want
			if w.calls > 0 && calls != w.calls {
				t.Errorf("%d requests, want %d", calls, w.calls)
			}
			if w.maxCalls > 0 && (calls < 1 || calls > w.maxCalls) {
				t.Errorf("%d requests, want 1..%d", calls, w.maxCalls)
			}
			if w.minTime > 0 && elapsed < w.minTime {
				t.Errorf("took %v, want at least %v (Retry-After honoured)", elapsed, w.minTime)
			}
			if w.maxTime > 0 && elapsed > w.maxTime {
				t.Errorf("took %v, want at most %v", elapsed, w.maxTime)
			}
			after := sessiontest.Read(t, path)
			if !w.ok {
				if err == nil {
					t.Fatalf("navigation succeeded, want an error (%v)", w.errHas)
				}
				msg := strings.ToLower(err.Error())
				for _, s := range w.errHas {
					if !strings.Contains(msg, strings.ToLower(s)) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				if !strings.Contains(msg, "branch summarization failed") {
					t.Errorf("error %q does not say what failed (Branch summarization failed)", err)
				}
				if w.tooLong && !errors.Is(err, compaction.ErrContextTooLong) {
					t.Errorf("error %v is not ErrContextTooLong", err)
				}
				if !bytes.Equal(before, after) {
					t.Errorf("the session file changed after a failed navigation (%d → %d bytes)", len(before), len(after))
				}
				return
			}
			if err != nil {
				t.Fatalf("navigation failed: %v", err)
			}
			if res.SummaryEntry == nil {
				t.Fatal("no summary entry")
			}
			if !bytes.HasPrefix(after, before) {
				t.Fatal("the file was rewritten, not appended to")
			}
			news := appended(t, path, before)
			if len(news) != 1 || news[0].Type != session.TypeBranchSummary {
				t.Fatalf("appended %d entries (%v), want exactly one branch_summary", len(news), ids(news))
			}
			if got := news[0].BranchSummary().Summary; !strings.Contains(got, "Summary of the abandoned branch") {
				t.Errorf("summary %q lacks the model's text", got)
			}
		})
	}
}
