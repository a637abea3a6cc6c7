package compaction_test

// A model server that answers 200 with an event-stream and then sends nothing must not
// hold a job for minutes: the stall is retried once, the whole summary is bounded, each
// attempt is announced, a cancel returns at once, and the file stays byte-identical. A
// server that keeps sending bytes (keep-alive comments) is not stalled: only the bound
// stops it.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// attemptLog records the attempt notes a summary reports and when they came.
type attemptLog struct {
	mu    sync.Mutex
	start time.Time
	notes []string
	at    []time.Duration
}

func newAttemptLog() *attemptLog { return &attemptLog{start: time.Now()} }

// compactLogged compacts a copy of the normal session with the OpenAI summarizer of
// cfg and returns the log of its attempts with the outcome's error.
func compactLogged(t *testing.T, cfg fakemodel.OpenAIConfig) (*attemptLog, error) {
	t.Helper()
	log := newAttemptLog()
	_, err := runWith(context.Background(), corpusCopy(t, normalFile), fakemodel.NewOpenAI(cfg), settings(normalKeep, 16384), compaction.Options{Progress: log.record})
	return log, err
}

func (l *attemptLog) record(p compaction.Progress) {
	n := p.Note()
	if n == "" {
		return
	}
	if !strings.HasPrefix(p.Message(), "summarizing") {
		panic("progress message " + p.Message())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.Kind == compaction.KindTurnPrefix {
		n = "prefix " + n
	}
	l.notes = append(l.notes, n)
	l.at = append(l.at, time.Since(l.start))
}

func (l *attemptLog) get() ([]string, []time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.notes), slices.Clone(l.at)
}

// summarizerFromSettings builds the openai summarizer the way the CLI and the server do,
// with its timeouts from the piLsp object of Pi's global settings file.
func summarizerFromSettings(t *testing.T, url, piLsp string) compaction.Summarizer {
	t.Helper()
	agent := t.TempDir()
	if err := os.WriteFile(filepath.Join(agent, "settings.json"), []byte(`{"compaction": {"enabled": true}, "piLsp": `+piLsp+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PI_LSP_TEST_KEY", "sk-test-key")
	t.Setenv("PI_LSP_SUMMARY_TIMEOUT", "")
	t.Setenv("PI_LSP_STALL_TIMEOUT", "")
	cfg := service.SummarizerConfig{Kind: "openai", BaseURL: url, Model: "fake-model", APIKeyEnv: "PI_LSP_TEST_KEY"}
	s, _, err := cfg.Over(service.ConfigFromEnv()).Over(service.ConfigFromSettings(agent, t.TempDir())).Build(agent)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The stall case: 2 s stall timeout and 5 s bound (from the settings file). The job fails
// with a clear error within the bound, after exactly two attempts, each announced before
// the error; the file is byte-identical. (Without the stall rule the default retries
// would run into the bound and fail with a timeout instead.)
func TestOpenAIStallFailsWithinTheBound(t *testing.T) {
	srv := newFakeLLM(t)
	srv.setFallback(stallAfterHeaders(time.Minute))
	sum := summarizerFromSettings(t, srv.URL(), `{"summaryTimeout": 5, "stallTimeout": "2s"}`)
	path := corpusCopy(t, normalFile)
	before := sessiontest.Read(t, path)
	log := newAttemptLog()
	_, err := runWith(context.Background(), path, sum, settings(normalKeep, 16384), compaction.Options{Progress: log.record})
	elapsed := time.Since(log.start)
	if err == nil {
		t.Fatal("no error")
	}
	t.Logf("RESULT stalled-model (compaction.Run): %d attempts, failed after %v (bound 5s, stall 2s): %v", srv.count(), elapsed.Round(10*time.Millisecond), err)
	if elapsed > 5500*time.Millisecond {
		t.Errorf("failed after %v, past the 5s bound", elapsed)
	}
	if n := srv.count(); n != 2 {
		t.Errorf("%d requests, want 2 (a stall is retried once)", n)
	}
	for _, want := range []string{"stream stalled for 2s", "no byte received", "after 1 retry"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	var se *compaction.SummaryError
	if !errors.As(err, &se) || se.Kind != compaction.KindTransient {
		t.Errorf("error %v is not a transient SummaryError", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Error("a stall must not look like a user cancel")
	}
	notes, at := log.get()
	if want := []string{"attempt 1 of 4", "attempt 2 of 2 after stall"}; !slices.Equal(notes, want) {
		t.Errorf("attempt notes %q, want %q", notes, want)
	} else if at[1] < 1900*time.Millisecond || at[1] > elapsed {
		t.Errorf("attempt 2 announced at %v: want after the 2s stall and before the error (%v)", at[1], elapsed)
	}
	// Both requests were abandoned by the client (the handler sees its context end).
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ended := 0
		for _, r := range srv.requests() {
			if r.Cancelled {
				ended++
			}
		}
		if ended == srv.count() {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%d of %d requests were abandoned by the client", ended, srv.count())
			break
		}
	}
	sameBytes(t, path, before)

	// A split turn runs two summaries at once: both stall, the job is still bounded.
	split := corpusCopy(t, splitFile)
	before = sessiontest.Read(t, split)
	n0 := srv.count()
	log = newAttemptLog()
	_, err = runWith(context.Background(), split, sum, settings(splitKeep, 16384), compaction.Options{Progress: log.record})
	elapsed = time.Since(log.start)
	if err == nil || !strings.Contains(err.Error(), "stalled") || elapsed > 5500*time.Millisecond {
		t.Errorf("split turn: %v after %v", err, elapsed)
	}
	if n := srv.count() - n0; n < 2 || n > 4 {
		t.Errorf("split turn: %d requests, want 2..4", n)
	}
	if notes, _ := log.get(); !slices.Contains(notes, "attempt 2 of 2 after stall") && !slices.Contains(notes, "prefix attempt 2 of 2 after stall") {
		t.Errorf("split turn: attempt notes %q", notes)
	}
	sameBytes(t, split, before)
}

// However long the bound, a stall is retried once: two requests, not 1 + MaxRetries.
func TestOpenAIStallRetriedOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		step llmStep
		want string
	}{
		{"after headers", stallAfterHeaders(time.Minute), "stream stalled for 300ms"},
		{"before headers", stallBeforeHeaders(time.Minute), "no response within 300ms"},
		{"mid-stream", stallAfter(2, time.Minute), "stream stalled for 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeLLM(t)
			srv.setFallback(tc.step)
			cfg := fastConfig(srv.URL())
			cfg.MaxRetries = 5
			cfg.StallTimeout = 300 * time.Millisecond
			cfg.TotalTimeout = 20 * time.Second
			log, err := compactLogged(t, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "after 1 retry") {
				t.Fatalf("error %v", err)
			}
			if n := srv.count(); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
			if d := time.Since(log.start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
			if notes, _ := log.get(); !slices.Equal(notes, []string{"attempt 1 of 6", "attempt 2 of 2 after stall"}) {
				t.Errorf("attempt notes %q", notes)
			}
		})
	}
}

// After another failure, a stall still ends the retries after one more attempt, and the
// notes say why each attempt was made.
func TestOpenAIStallAfterServerError(t *testing.T) {
	srv := newFakeLLM(t, serverError(), stallAfterHeaders(time.Minute), stallAfterHeaders(time.Minute), say("TOO LATE"))
	cfg := fastConfig(srv.URL())
	cfg.MaxRetries = 3
	cfg.StallTimeout = 300 * time.Millisecond
	cfg.RetryBase = 20 * time.Millisecond
	log, err := compactLogged(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "stream stalled") || !strings.Contains(err.Error(), "after 2 retries") {
		t.Fatalf("error %v", err)
	}
	if n := srv.count(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if notes, _ := log.get(); !slices.Equal(notes, []string{"attempt 1 of 4", "attempt 2 of 4 after HTTP 500, in 0.0s", "attempt 3 of 3 after stall"}) {
		t.Errorf("attempt notes %q", notes)
	}
}

// A server that sends a keep-alive comment every 200 ms, and the answer only after
// longer than the stall timeout (a local model busy with a long prompt), succeeds with
// one request.
func TestOpenAIKeepAliveBeforeLateAnswer(t *testing.T) {
	srv := newFakeLLM(t, keepAlivesThen(200*time.Millisecond, 2500*time.Millisecond, "LATE BUT FINE"))
	sum := summarizerFromSettings(t, srv.URL(), `{"summaryTimeout": 10, "stallTimeout": 1}`)
	path := corpusCopy(t, normalFile)
	log := newAttemptLog()
	res, err := runWith(context.Background(), path, sum, settings(normalKeep, 16384), compaction.Options{Progress: log.record})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome.Summary != "LATE BUT FINE" || srv.count() != 1 {
		t.Errorf("summary %q after %d requests", res.Outcome.Summary, srv.count())
	}
	if d := time.Since(log.start); d < 2500*time.Millisecond {
		t.Errorf("answered after %v: the server waited 2.5s", d)
	}
	if notes, _ := log.get(); !slices.Equal(notes, []string{"attempt 1 of 4"}) {
		t.Errorf("attempt notes %q", notes)
	}
}

// A server that only ever sends keep-alives is not stalled: the bound alone stops it,
// with one request, and the error names the bound and how to raise it.
func TestOpenAIBoundStopsKeepAlivesForever(t *testing.T) {
	srv := newFakeLLM(t)
	// Keep-alives come twenty times as often as the stall timeout, so that a loaded
	// machine's scheduling gaps never look like a stall.
	srv.setFallback(keepAlivesThen(50*time.Millisecond, time.Minute, "NEVER"))
	sum := summarizerFromSettings(t, srv.URL(), `{"summaryTimeout": 2, "stallTimeout": 1}`)
	path := corpusCopy(t, normalFile)
	before := sessiontest.Read(t, path)
	start := time.Now()
	_, err := runWith(context.Background(), path, sum, settings(normalKeep, 16384), compaction.Options{})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
	for _, want := range []string{"total timeout of 2s", "summaryTimeout", "PI_LSP_SUMMARY_TIMEOUT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if d := time.Since(start); d < 1900*time.Millisecond || d > 6*time.Second {
		t.Errorf("stopped after %v, want the 2s bound", d)
	}
	if n := srv.count(); n != 1 {
		t.Errorf("%d requests: keep-alives are not a stall", n)
	}
	sameBytes(t, path, before)
}

// Cancelling during a stall, in the first attempt or in its retry, returns at once with
// context.Canceled and writes nothing.
func TestOpenAICancelMidStall(t *testing.T) {
	for _, at := range []int{0, 1} {
		t.Run([]string{"first attempt", "stall retry"}[at], func(t *testing.T) {
			srv := newFakeLLM(t)
			srv.setFallback(stallAfterHeaders(time.Minute))
			sum := summarizerFromSettings(t, srv.URL(), `{"summaryTimeout": 30, "stallTimeout": 1}`)
			path := corpusCopy(t, normalFile)
			before := sessiontest.Read(t, path)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var cancelledAt time.Time
			srv.mu.Lock()
			srv.onRequest = func(req *llmRequest) {
				if req.N == at {
					time.AfterFunc(300*time.Millisecond, func() {
						mu.Lock()
						cancelledAt = time.Now()
						mu.Unlock()
						cancel()
					})
				}
			}
			srv.mu.Unlock()
			_, err := runWith(ctx, path, sum, settings(normalKeep, 16384), compaction.Options{})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v does not wrap context.Canceled", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if cancelledAt.IsZero() {
				t.Fatal("never cancelled")
			}
			if d := time.Since(cancelledAt); d > 500*time.Millisecond {
				t.Errorf("returned %v after the cancel", d)
			}
			if n := srv.count(); n != at+1 {
				t.Errorf("%d requests, want %d", n, at+1)
			}
			sameBytes(t, path, before)
		})
	}
}
