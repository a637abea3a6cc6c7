package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// Corpus choices (testdata/corpus/genuine, written by real Pi 0.73.1 against a fake model):
//   - misc-messages.jsonl, keep 120: a normal cut (no split, no previous compaction), 8
//     messages summarized;
//   - full-main.jsonl, keep 100: a split turn with both a history part (13 messages) and a
//     turn prefix, modified file notes.txt;
//   - auto-threshold.jsonl, keep 200: an iterative compaction over an earlier one (update
//     prompt with <previous-summary>);
//   - compact-split.jsonl, keep 1000: nothing to summarize.
const (
	normalFile    = "genuine/misc-messages.jsonl"
	normalKeep    = 120
	splitFile     = "genuine/full-main.jsonl"
	splitKeep     = 100
	iterativeFile = "genuine/auto-threshold.jsonl"
	iterativeKeep = 200
)

func runWith(ctx context.Context, path string, s compaction.Summarizer, st session.CompactionSettings, opt compaction.Options) (*compaction.RunResult, error) {
	snap, err := session.LoadSnapshot(path)
	if err != nil {
		return nil, err
	}
	return compaction.Run(ctx, snap, compaction.RunOptions{Options: opt, Settings: st, Summarizer: s})
}

// normalRun compacts a fresh copy of normalFile under ctx with the OpenAI summarizer at
// srv (fastConfig, adjusted by tune), and returns the copy, its bytes before the run and
// what Run returned.
func normalRun(t *testing.T, ctx context.Context, srv *fakeLLM, tune func(*fakemodel.OpenAIConfig)) (path string, before []byte, res *compaction.RunResult, err error) {
	t.Helper()
	path = corpusCopy(t, normalFile)
	before = sessiontest.Read(t, path)
	cfg := fastConfig(srv.URL())
	tune(&cfg)
	res, err = runWith(ctx, path, fakemodel.NewOpenAI(cfg), settings(normalKeep, 16384), compaction.Options{})
	return path, before, res, err
}

// A normal summary: one request with Pi's shape, one compaction entry with the summary,
// the cut, tokensBefore, details and the usage of the stream's usage chunk.
func TestOpenAINormalSummary(t *testing.T) {
	isolate.Setup(t)
	t.Setenv("PI_LSP_TEST_KEY", "sk-from-env")
	srv := newFakeLLM(t, sayWith("## Goal\nModel summary of the older part.", streamOpts{keepAlives: 3}))
	s, _, err := service.SummarizerConfig{Kind: "openai", BaseURL: srv.URL(), Model: "fake-model", APIKeyEnv: "PI_LSP_TEST_KEY"}.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := corpusCopy(t, normalFile)
	before := sessiontest.Read(t, path)
	st := settings(normalKeep, 10001)
	prep := prepareFile(t, path, st)
	if prep.IsSplitTurn || prep.HasPrevious || len(prep.MessagesToSummarize) == 0 {
		t.Fatalf("corpus changed: want a plain cut, got split=%v previous=%v messages=%d", prep.IsSplitTurn, prep.HasPrevious, len(prep.MessagesToSummarize))
	}

	res, err := runWith(context.Background(), path, s, st, compaction.Options{})
	if err != nil {
		t.Fatal(err)
	}

	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(reqs))
	}
	r := reqs[0]
	if got := r.Header.Get("Authorization"); got != "Bearer sk-from-env" {
		t.Errorf("Authorization = %q, want the key from PI_LSP_TEST_KEY", got)
	}
	if r.Body.Model != "fake-model" || !r.Body.Stream {
		t.Errorf("model %q stream %v", r.Body.Model, r.Body.Stream)
	}
	if r.Body.StreamOptions == nil || !r.Body.StreamOptions.IncludeUsage {
		t.Errorf("stream_options.include_usage not set: %s", r.Raw)
	}
	if r.Body.Store == nil || *r.Body.Store {
		t.Errorf(`"store": false missing: %s`, r.Raw)
	}
	// Pi 1.6.0 asks for the model's own limit (16384 for a custom model that names
	// none), shrunk only when the window is too small; compaction.reserveTokens plays no
	// part (TestSummaryRequestsMatchPi16 covers the shrinking).
	if r.Body.MaxCompletionTokens != compaction.DefaultMaxTokens {
		t.Errorf("max_completion_tokens = %d, want %d", r.Body.MaxCompletionTokens, compaction.DefaultMaxTokens)
	}
	if r.Body.MaxTokens != 0 {
		t.Errorf("max_tokens = %d, want unset", r.Body.MaxTokens)
	}
	if r.Body.ReasoningEffort != "" {
		t.Errorf("reasoning_effort = %q for a model not configured for reasoning", r.Body.ReasoningEffort)
	}
	if len(r.Body.Messages) != 2 || r.Body.Messages[0].Role != "system" || r.Body.Messages[1].Role != "user" {
		t.Fatalf("messages: %s", r.Raw)
	}
	if r.Body.system() != compaction.SystemPrompt {
		t.Errorf("system prompt differs")
	}
	wantUser := "<conversation>\n" + compaction.SerializeAgentMessages(prep.MessagesToSummarize) + "\n</conversation>\n\n"
	if u := r.Body.user(); !strings.HasPrefix(u, wantUser) || strings.Contains(u, "<previous-summary>") || strings.Contains(u, "Additional focus") {
		t.Errorf("user prompt:\n%.600s", u)
	}
	if u := r.Body.user(); u != compaction.BuildPrompt(compaction.Request{Kind: compaction.KindHistory, Conversation: compaction.SerializeAgentMessages(prep.MessagesToSummarize)}) {
		t.Errorf("user prompt is not the initial prompt")
	}

	e := sessiontest.Last(t, path)
	if e.Type != session.TypeCompaction || e.ID != res.Entry.ID {
		t.Fatalf("last entry %s %s, want the new compaction %s", e.Type, e.ID, res.Entry.ID)
	}
	if !strings.HasPrefix(string(sessiontest.Read(t, path)), string(before)) {
		t.Fatal("the file was not appended to: its old bytes changed")
	}
	m := entryJSON(t, e)
	if m["summary"] != "## Goal\nModel summary of the older part." {
		t.Errorf("summary = %q", m["summary"])
	}
	if m["firstKeptEntryId"] != prep.FirstKeptEntryID || m["tokensBefore"] != prep.TokensBefore || m["fromHook"] != false {
		t.Errorf("entry %s", e.Raw())
	}
	if m["parentId"] != prep.Path[len(prep.Path)-1].ID {
		t.Errorf("parentId = %v, want the leaf", m["parentId"])
	}
	if d, _ := json.Marshal(m["details"]); string(d) != `{"modifiedFiles":[],"readFiles":[]}` {
		t.Errorf("details = %s", d)
	}
	u, _ := json.Marshal(m["usage"])
	// Pi's normalization: input excludes the cached prompt tokens; Pi's full Usage shape,
	// cost included (Pi 1.6.0's session totals read usage.cost.total), in Pi's key order,
	// usage before fromHook.
	if string(u) != `{"cacheRead":7,"cacheWrite":0,"cost":{"cacheRead":0,"cacheWrite":0,"input":0,"output":0,"total":0,"totalFromProvider":false},"input":1227,"output":56,"reasoning":0,"totalTokens":1290}` {
		t.Errorf("usage = %s", u)
	}
	if want := `"usage":{"input":1227,"output":56,"cacheRead":7,"cacheWrite":0,"reasoning":0,"totalTokens":1290,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0,"totalFromProvider":false}},"fromHook":false}`; !strings.Contains(string(e.Raw()), want) {
		t.Errorf("entry %s\nlacks %s", e.Raw(), want)
	}
	if res.Outcome.TokensAfter <= 0 || res.Outcome.TokensAfter >= prep.TokensBefore {
		t.Errorf("tokensAfter = %v, before %v", res.Outcome.TokensAfter, prep.TokensBefore)
	}
	// The written file loads with the summary as the first context message.
	f, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c := session.NewIndex(f).BuildContext("")
	if len(c.Messages) == 0 || c.Messages[0].Role != session.RoleCompactionSummary || c.Messages[0].SummaryText() != m["summary"] {
		t.Errorf("context does not start with the summary")
	}
}

// A split turn: the history and then the turn prefix are summarized, one request after
// the other as Pi 1.6.0 makes them, both with the custom focus, and merged with Pi's
// separator.
func TestOpenAISplitTurnSequential(t *testing.T) {
	srv := newFakeLLM(t)
	srv.setFallback(sayParts("HISTORY SUMMARY", "PREFIX SUMMARY", streamOpts{delay: 60 * time.Millisecond}))
	path := corpusCopy(t, splitFile)
	st := settings(splitKeep, 10001)
	prep := prepareFile(t, path, st)
	if !prep.IsSplitTurn || len(prep.TurnPrefixMessages) == 0 || len(prep.MessagesToSummarize) == 0 {
		t.Fatalf("corpus changed: want a split turn with history, got split=%v prefix=%d history=%d", prep.IsSplitTurn, len(prep.TurnPrefixMessages), len(prep.MessagesToSummarize))
	}
	res, err := runWith(context.Background(), path, fakemodel.NewOpenAI(fastConfig(srv.URL())), st,
		compaction.Options{CustomInstructions: "focus on notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d, want 2", len(reqs))
	}
	// The second request is sent once the first answer has streamed (each chunk waits
	// 60 ms), not at the same time; the fake's End is taken after the client already has
	// the whole answer, so the starts are compared, not End against Start.
	if reqs[0].Body.isTurnPrefix() || !reqs[1].Body.isTurnPrefix() || reqs[1].Start.Sub(reqs[0].Start) < 50*time.Millisecond {
		t.Errorf("want the history request, then the turn prefix after it: %v-%v (prefix %v) and %v-%v", reqs[0].Start, reqs[0].End, reqs[0].Body.isTurnPrefix(), reqs[1].Start, reqs[1].End)
	}
	var hist, prefix llmRequest
	for _, r := range reqs {
		if r.Body.isTurnPrefix() {
			prefix = r
		} else {
			hist = r
		}
	}
	if prefix.Body.MaxCompletionTokens != compaction.DefaultMaxTokens || hist.Body.MaxCompletionTokens != compaction.DefaultMaxTokens {
		t.Errorf("max_completion_tokens: prefix %d, history %d (want the model's limit)", prefix.Body.MaxCompletionTokens, hist.Body.MaxCompletionTokens)
	}
	if !strings.HasSuffix(hist.Body.user(), "\n\nAdditional focus: focus on notes.txt") {
		t.Errorf("history prompt lacks the custom focus")
	}
	wantPrefix := "# Conversation\n" + compaction.SerializeAgentMessages(prep.TurnPrefixMessages) + "\n\n# Instructions\n"
	if u := prefix.Body.user(); !strings.HasPrefix(u, wantPrefix) || !strings.HasSuffix(u, "\n\nAdditional focus: focus on notes.txt") || strings.Contains(u, "<previous-summary>") {
		t.Errorf("prefix prompt:\n%.800s", u)
	}
	want := "HISTORY SUMMARY" + "\n\n---\n\n**Turn Context (split turn):**\n\n" + "PREFIX SUMMARY" +
		"\n\n<modified-files>\nnotes.txt\n</modified-files>"
	if res.Outcome.Summary != want {
		t.Errorf("summary =\n%q\nwant\n%q", res.Outcome.Summary, want)
	}
	if got := entryJSON(t, sessiontest.Last(t, path))["summary"]; got != want {
		t.Errorf("written summary = %q", got)
	}
	if res.Outcome.Usage == nil || res.Outcome.Usage.Input != 2*1227 || res.Outcome.Usage.TotalTokens != 2*1290 {
		t.Errorf("usage of the two calls not added: %+v", res.Outcome.Usage)
	}
}

// An iterative compaction sends the previous summary in <previous-summary> with the
// update prompt.
func TestOpenAIIterativeUpdate(t *testing.T) {
	srv := newFakeLLM(t, say("UPDATED SUMMARY"))
	path := corpusCopy(t, iterativeFile)
	st := settings(iterativeKeep, 16384)
	prep := prepareFile(t, path, st)
	if !prep.HasPrevious || prep.IsSplitTurn || len(prep.MessagesToSummarize) == 0 {
		t.Fatalf("corpus changed: previous=%v split=%v", prep.HasPrevious, prep.IsSplitTurn)
	}
	res, err := runWith(context.Background(), path, fakemodel.NewOpenAI(fastConfig(srv.URL())), st, compaction.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	u := reqs[0].Body.user()
	wantHead := "<conversation>\n" + compaction.SerializeAgentMessages(prep.MessagesToSummarize) + "\n</conversation>\n\n" +
		"<previous-summary>\n" + prep.PreviousSummary + "\n</previous-summary>\n\n"
	if !strings.HasPrefix(u, wantHead) {
		t.Errorf("prompt does not carry the previous summary:\n%.1500s", u)
	}
	if u != compaction.BuildPrompt(compaction.Request{Kind: compaction.KindHistory, Conversation: compaction.SerializeAgentMessages(prep.MessagesToSummarize), PreviousSummary: prep.PreviousSummary}) {
		t.Errorf("not the update prompt")
	}
	if reqs[0].Body.MaxCompletionTokens != compaction.DefaultMaxTokens {
		t.Errorf("max_completion_tokens = %d, want the model's limit %d", reqs[0].Body.MaxCompletionTokens, compaction.DefaultMaxTokens)
	}
	// notes.txt comes from the previous compaction's details.
	if want := "UPDATED SUMMARY\n\n<modified-files>\nnotes.txt\n</modified-files>"; res.Outcome.Summary != want {
		t.Errorf("summary = %q, want %q", res.Outcome.Summary, want)
	}
}

// Design divergence 1: where Pi 0.73.1 writes "No prior history." and loses the previous
// summary (spec §10.4), pi-lsp keeps the previous summary as the history part. No genuine
// session has this shape, so the spec's synthetic file is used.
func TestOpenAIKeepsPreviousSummaryWherePiDropsIt(t *testing.T) {
	srv := newFakeLLM(t)
	srv.setFallback(sayParts("UNEXPECTED HISTORY CALL", "PREFIX SUMMARY", streamOpts{}))
	path := corpusCopy(t, "synthetic/spec-10-4-dropped-summary.jsonl")
	st := settings(300, 16384)
	prep := prepareFile(t, path, st)
	if !prep.IsSplitTurn || len(prep.MessagesToSummarize) != 0 || !prep.HasPrevious || len(prep.TurnPrefixMessages) == 0 {
		t.Fatalf("corpus changed: %+v", prep.Cut)
	}
	res, err := runWith(context.Background(), path, fakemodel.NewOpenAI(fastConfig(srv.URL())), st, compaction.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.count(); n != 1 {
		t.Errorf("requests = %d, want only the turn-prefix call", n)
	}
	if !srv.requests()[0].Body.isTurnPrefix() {
		t.Errorf("the one request is not the turn prefix")
	}
	pi := compaction.NoPriorHistory + compaction.SplitTurnSeparator + "PREFIX SUMMARY"
	if strings.HasPrefix(res.Outcome.Summary, compaction.NoPriorHistory) {
		t.Errorf("summary dropped the previous summary as Pi does: %q (Pi: %q)", res.Outcome.Summary, pi)
	}
	want := prep.PreviousSummary + compaction.SplitTurnSeparator + "PREFIX SUMMARY"
	if !strings.HasPrefix(res.Outcome.Summary, want) {
		t.Errorf("summary = %q, want it to start with %q", res.Outcome.Summary, want)
	}
}

// 429 with Retry-After: the summarizer waits about Retry-After, capped by MaxRetryDelay,
// then succeeds.
func TestOpenAIRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter string
		maxDelay   time.Duration
		min, max   time.Duration
	}{
		{"honoured", "1", 5 * time.Second, 900 * time.Millisecond, 2500 * time.Millisecond},
		{"capped", "30", 200 * time.Millisecond, 180 * time.Millisecond, 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeLLM(t, rateLimited(tc.retryAfter), say("AFTER RATE LIMIT"))
			_, _, res, err := normalRun(t, context.Background(), srv, func(cfg *fakemodel.OpenAIConfig) { cfg.MaxRetryDelay = tc.maxDelay })
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.requests()
			if len(reqs) != 2 {
				t.Fatalf("requests = %d, want 2", len(reqs))
			}
			wait := reqs[1].Start.Sub(reqs[0].End)
			if wait < tc.min || wait > tc.max {
				t.Errorf("waited %v between the 429 and the retry, want %v..%v", wait, tc.min, tc.max)
			}
			if res.Outcome.Summary != "AFTER RATE LIMIT" {
				t.Errorf("summary = %q", res.Outcome.Summary)
			}
		})
	}
}

// 500 on every attempt: bounded retries, then a clear error; the file is untouched.
func TestOpenAIServerErrorsBounded(t *testing.T) {
	srv := newFakeLLM(t)
	srv.setFallback(serverError())
	start := time.Now()
	path, before, _, err := normalRun(t, context.Background(), srv, func(cfg *fakemodel.OpenAIConfig) { cfg.MaxRetries = 2 })
	if err == nil {
		t.Fatal("no error")
	}
	if n := srv.count(); n != 3 {
		t.Errorf("requests = %d, want 3 (1 + 2 retries)", n)
	}
	msg := err.Error()
	for _, want := range []string{"HTTP 500", "server had an error", "after 2 retries"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	var se *compaction.SummaryError
	if !errors.As(err, &se) || se.Kind != compaction.KindTransient || se.Status != 500 {
		t.Errorf("error %#v is not a transient SummaryError with status 500", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	sameBytes(t, path, before)
}

// Transient failures followed by a good answer recover.
func TestOpenAIRecoversAfterTransientFailures(t *testing.T) {
	srv := newFakeLLM(t, serverError(), cutAfter(2), say("RECOVERED"))
	_, _, res, err := normalRun(t, context.Background(), srv, func(cfg *fakemodel.OpenAIConfig) { cfg.MaxRetries = 3 })
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome.Summary != "RECOVERED" || srv.count() != 3 {
		t.Errorf("summary %q after %d requests", res.Outcome.Summary, srv.count())
	}
}

// Every failure leaves the session file byte-identical and says why.
func TestOpenAIFailuresLeaveFileUntouched(t *testing.T) {
	for _, tc := range []struct {
		name     string
		step     llmStep
		requests int // expected requests (MaxRetries 1 → 2 for retryable failures)
		want     []string
		is       error
		kind     compaction.ErrorKind
		stall    time.Duration // a short stall timeout for the stall cases
	}{
		{name: "context too long", step: contextTooLong(), requests: 1, want: []string{"HTTP 400", "maximum context length is 128000 tokens"}, is: compaction.ErrContextTooLong, kind: compaction.KindContextTooLong},
		{name: "stream cut", step: cutAfter(2), requests: 2, want: []string{"stream broken", "connection closed mid-answer", "after 1 retry)"}, kind: compaction.KindTransient},
		{name: "stream ended early", step: endAfter(2), requests: 2, want: []string{"stream ended before the model finished"}, kind: compaction.KindTransient},
		{name: "malformed SSE", step: garbage(), requests: 2, want: []string{"malformed"}, kind: compaction.KindTransient},
		{name: "empty answer", step: emptyAnswer(), requests: 1, want: []string{"empty summary"}, kind: compaction.KindEmpty},
		{name: "stall mid-stream", step: stallAfter(1, 10*time.Second), requests: 2, want: []string{"stream stalled for 300ms"}, kind: compaction.KindTransient, stall: 300 * time.Millisecond},
		{name: "stall before headers", step: stallBeforeHeaders(10 * time.Second), requests: 2, want: []string{"no response within 300ms"}, kind: compaction.KindTransient, stall: 300 * time.Millisecond},
		{name: "connection reset", step: reset(), requests: 2, want: []string{"connection reset by peer", "after 1 retry)"}, kind: compaction.KindTransient},
		{name: "error frame mid-stream", step: midStreamError("upstream provider overloaded"), requests: 2, want: []string{"error event in the stream: upstream provider overloaded"}, kind: compaction.KindTransient},
		{name: "llama.cpp context too long", step: status(400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`), requests: 1, want: []string{"exceeds the available context size"}, is: compaction.ErrContextTooLong, kind: compaction.KindContextTooLong},
		{name: "context too long mid-stream", step: midStreamError("prompt is too long: 140000 tokens > 128000 maximum"), requests: 1, want: []string{"prompt is too long"}, is: compaction.ErrContextTooLong, kind: compaction.KindContextTooLong},
		{name: "unauthorized", step: status(401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`), requests: 1, want: []string{"HTTP 401", "Incorrect API key"}, kind: compaction.KindAuth},
		{name: "proxy html 502", step: status(502, "<html>bad gateway</html>"), requests: 2, want: []string{"HTTP 502", "bad gateway"}, kind: compaction.KindTransient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeLLM(t)
			srv.setFallback(tc.step)
			for _, file := range []string{normalFile, splitFile} {
				path := corpusCopy(t, file)
				before := sessiontest.Read(t, path)
				cfg := fastConfig(srv.URL())
				cfg.MaxRetries = 1
				if tc.stall > 0 {
					cfg.StallTimeout = tc.stall
				}
				n0 := srv.count()
				start := time.Now()
				_, err := runWith(context.Background(), path, fakemodel.NewOpenAI(cfg), settings(map[string]int{normalFile: normalKeep, splitFile: splitKeep}[file], 16384), compaction.Options{})
				elapsed := time.Since(start)
				if err == nil {
					t.Fatalf("%s: no error", file)
				}
				t.Logf("%s: %v", file, err)
				sameBytes(t, path, before)
				if elapsed > 5*time.Second {
					t.Errorf("%s: failing took %v", file, elapsed)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error %q lacks %q", file, err, w)
					}
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("%s: errors.Is(%v, %v) is false", file, err, tc.is)
				}
				var se *compaction.SummaryError
				if !errors.As(err, &se) || se.Kind != tc.kind {
					t.Errorf("%s: error %v: kind %v, want %v", file, err, se, tc.kind)
				}
				if file == normalFile {
					if got := srv.count() - n0; got != tc.requests {
						t.Errorf("%s: %d requests, want %d", file, got, tc.requests)
					}
				}
			}
		})
	}
}

// Cancelling mid-stream stops quickly with an error wrapping context.Canceled, the
// server sees its request context end, and nothing is written.
func TestOpenAICancelMidStream(t *testing.T) {
	seen := make(chan struct{})
	srv := newFakeLLM(t, slow(20*time.Millisecond, 10*time.Second, seen))
	path := corpusCopy(t, normalFile)
	before := sessiontest.Read(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelledAt time.Time
	progress := 0
	opt := compaction.Options{Progress: func(p compaction.Progress) {
		progress++
		if progress == 3 {
			cancelledAt = time.Now()
			cancel()
		}
	}}
	_, err := runWith(ctx, path, fakemodel.NewOpenAI(fastConfig(srv.URL())), settings(normalKeep, 16384), opt)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v does not wrap context.Canceled", err)
	}
	if cancelledAt.IsZero() {
		t.Fatal("never cancelled")
	}
	if d := time.Since(cancelledAt); d > time.Second {
		t.Errorf("returned %v after the cancel", d)
	}
	select {
	case <-seen:
	case <-time.After(2 * time.Second):
		t.Error("the server never saw the request context end")
	}
	if n := srv.count(); n != 1 {
		t.Errorf("requests = %d: a cancelled summary must not be retried", n)
	}
	sameBytes(t, path, before)
}

// Cancelling during a retry wait stops at once.
func TestOpenAICancelDuringRetryWait(t *testing.T) {
	srv := newFakeLLM(t, rateLimited("30"))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	path, before, _, err := normalRun(t, ctx, srv, func(cfg *fakemodel.OpenAIConfig) { cfg.MaxRetryDelay = time.Minute })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	sameBytes(t, path, before)
}

// Keep-alive comments are activity: a server that sends only keep-alives for longer than
// the stall timeout before answering is not a stall.
func TestOpenAIKeepAlivesAreNotStalls(t *testing.T) {
	// Keep-alives twenty times as often as the stall timeout (a loaded machine's
	// scheduling gaps are not a stall), for longer than it.
	srv := newFakeLLM(t, keepAlivesThen(50*time.Millisecond, 2*time.Second, "THOUGHT LONG"))
	_, _, res, err := normalRun(t, context.Background(), srv, func(cfg *fakemodel.OpenAIConfig) { cfg.StallTimeout = time.Second })
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome.Summary != "THOUGHT LONG" || srv.count() != 1 {
		t.Errorf("summary %q after %d requests", res.Outcome.Summary, srv.count())
	}
}

// Split turn: when one of the two calls fails, the other is cancelled instead of being
// waited for, and nothing is written.
func TestOpenAISplitTurnFailureCancelsTheOther(t *testing.T) {
	seen := make(chan struct{})
	srv := newFakeLLM(t)
	srv.setFallback(func(w http.ResponseWriter, r *http.Request, req *llmRequest) {
		if req.Body.isTurnPrefix() {
			slow(20*time.Millisecond, 10*time.Second, seen)(w, r, req)
			return
		}
		contextTooLong()(w, r, req)
	})
	path := corpusCopy(t, splitFile)
	before := sessiontest.Read(t, path)
	start := time.Now()
	_, err := runWith(context.Background(), path, fakemodel.NewOpenAI(fastConfig(srv.URL())), settings(splitKeep, 16384), compaction.Options{})
	if !errors.Is(err, compaction.ErrContextTooLong) {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v: the turn-prefix call was waited for", d)
	}
	// The turn-prefix request was either cancelled before it was sent, or the server saw
	// it cancelled.
	sent := false
	for _, r := range srv.requests() {
		sent = sent || r.Body.isTurnPrefix()
	}
	if sent {
		select {
		case <-seen:
		case <-time.After(2 * time.Second):
			t.Error("the turn-prefix request was not cancelled")
		}
	}
	sameBytes(t, path, before)
}

// The total timeout bounds a summary however the time is spent (here: a server that keeps
// streaming slowly); the error says so and wraps context.DeadlineExceeded.
func TestOpenAITotalTimeout(t *testing.T) {
	srv := newFakeLLM(t)
	srv.setFallback(slow(50*time.Millisecond, 10*time.Second, nil))
	start := time.Now()
	path, before, _, err := normalRun(t, context.Background(), srv, func(cfg *fakemodel.OpenAIConfig) { cfg.TotalTimeout = 400 * time.Millisecond })
	if err == nil || !strings.Contains(err.Error(), "total timeout of 400ms") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("a timeout must not look like a user cancel")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	sameBytes(t, path, before)
}
