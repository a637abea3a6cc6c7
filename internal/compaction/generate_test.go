package compaction_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// t10Session writes spec §22.2 T10's shape: an earlier compaction (summary PREV) that
// keeps from u0, then a big turn that gets split, reading p.ts and editing e.ts in its
// prefix. thinking is the session's thinking level.
func t10Session(t *testing.T, thinking string) string {
	t.Helper()
	big := func(tag string) string { return strings.Repeat(tag+" lorem ipsum dolor sit amet. ", 14) }
	lines := []string{
		`{"type":"session","version":3,"id":"0197a000-0000-7000-8000-00000000t010","timestamp":"2026-01-01T10:00:00.000Z","cwd":"/tmp/pi-lsp-t10"}`,
		`{"type":"thinking_level_change","id":"T0000001","parentId":null,"timestamp":"2026-01-01T10:00:00.500Z","thinkingLevel":"` + thinking + `"}`,
	}
	add := func(id, parent, msg string) {
		lines = append(lines, fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-01-01T10:00:01.000Z","message":%s}`, id, parent, msg))
	}
	add("T0000002", "T0000001", userMsg("u0 start"))
	add("T0000003", "T0000002", assistantMsg("a0 done"))
	lines = append(lines, `{"type":"compaction","id":"T0000004","parentId":"T0000003","timestamp":"2026-01-01T10:00:02.000Z","summary":"PREV","firstKeptEntryId":"T0000002","tokensBefore":50,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}`)
	add("T0000005", "T0000004", userMsg("u1 do the big job"))
	add("T0000006", "T0000005", assistantMsg("reading", toolCall("r1", "read", map[string]any{"path": "p.ts"})))
	add("T0000007", "T0000006", toolResult("r1", "read", "export const p = 1"))
	add("T0000008", "T0000007", assistantMsg("editing", toolCall("e1", "edit", map[string]any{"path": "e.ts", "edits": []any{}})))
	add("T0000009", "T0000008", toolResult("e1", "edit", "Successfully replaced 1 block(s) in e.ts."))
	add("T0000010", "T0000009", assistantMsg(big("a3")))
	add("T0000011", "T0000010", assistantMsg(big("a4")))
	path := filepath.Join(t.TempDir(), "t10.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// T10: split turn, previous summary, custom instructions, reserve 10000, thinking
// "medium" on a reasoning model: two calls, each asking for the model's output limit
// (reserveTokens plays no part since Pi 1.4.0) with reasoning medium; history
// {<previous-summary>, update prompt, "Additional focus"}, then prefix {"Additional
// focus", no previous summary}; the summary is HISTORY + separator + PREFIX + the file
// blocks.
func TestT10SplitTurnWithPreviousSummaryAndFocus(t *testing.T) {
	srv := newFakeLLM(t)
	srv.setFallback(sayParts("HISTORY", "PREFIX", streamOpts{}))
	path := t10Session(t, "medium")
	st := settings(150, 10000)
	prep := prepareFile(t, path, st)
	if !prep.IsSplitTurn || !prep.HasPrevious || prep.PreviousSummary != "PREV" || len(prep.MessagesToSummarize) != 2 || len(prep.TurnPrefixMessages) != 5 {
		t.Fatalf("preparation: split %v prev %q history %d prefix %d", prep.IsSplitTurn, prep.PreviousSummary, len(prep.MessagesToSummarize), len(prep.TurnPrefixMessages))
	}
	cfg := fastConfig(srv.URL())
	cfg.Reasoning = true
	res, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{
		Options:  compaction.Options{CustomInstructions: "focus on tests"}, // thinking level from the session
		Settings: st, Summarizer: fakemodel.NewOpenAI(cfg),
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	for _, r := range reqs {
		u := r.Body.user()
		if r.Body.isTurnPrefix() {
			if r.Body.MaxCompletionTokens != compaction.DefaultMaxTokens || r.Body.ReasoningEffort != "medium" {
				t.Errorf("prefix call: max %d reasoning %q", r.Body.MaxCompletionTokens, r.Body.ReasoningEffort)
			}
			if !strings.HasSuffix(u, "\n\nAdditional focus: focus on tests") || strings.Contains(u, "PREV") {
				t.Errorf("prefix prompt lacks the focus or got the previous summary")
			}
			continue
		}
		if r.Body.MaxCompletionTokens != compaction.DefaultMaxTokens || r.Body.ReasoningEffort != "medium" {
			t.Errorf("history call: max %d reasoning %q", r.Body.MaxCompletionTokens, r.Body.ReasoningEffort)
		}
		want := "<conversation>\n" + compaction.SerializeAgentMessages(prep.MessagesToSummarize) + "\n</conversation>\n\n" +
			"<previous-summary>\nPREV\n</previous-summary>\n\n"
		if !strings.HasPrefix(u, want) || !strings.HasSuffix(u, "\n\nAdditional focus: focus on tests") {
			t.Errorf("history prompt:\n%s", u)
		}
		if !strings.Contains(u, "NEW conversation messages to incorporate") {
			t.Errorf("history prompt is not the update prompt")
		}
	}
	want := "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX\n\n<read-files>\np.ts\n</read-files>\n\n<modified-files>\ne.ts\n</modified-files>"
	if res.Outcome.Summary != want {
		t.Errorf("summary:\n%q\nwant\n%q", res.Outcome.Summary, want)
	}
	if d := mustJSON(res.Outcome.Details); d != `{"readFiles":["p.ts"],"modifiedFiles":["e.ts"]}` {
		t.Errorf("details %s", d)
	}
}

// Reasoning is sent only when the model is configured for it and the thinking level is
// set and not "off" (Pi's rule).
func TestReasoningOnlyWhenConfiguredAndThinking(t *testing.T) {
	for _, tc := range []struct {
		reasoning bool
		session   string // the session's thinking level
		option    string // Options.ThinkingLevel (overrides the session's)
		want      string
	}{
		{true, "medium", "", "medium"},
		{true, "high", "", "high"},
		{true, "off", "", ""},
		{false, "medium", "", ""},
		{true, "off", "low", "low"},
		{true, "high", "off", ""},
		{true, "xhigh", "", "high"}, // pi-ai clamps xhigh to high for a model without a level map
		{true, "max", "", "high"},   // and max too
		{true, "minimal", "", "minimal"},
		{true, "off", "turbo", ""}, // unknown level: no reasoning, as pi-ai's clamp gives "off"
	} {
		srv := newFakeLLM(t)
		cfg := fastConfig(srv.URL())
		cfg.Reasoning = tc.reasoning
		_, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, t10Session(t, tc.session)), compaction.RunOptions{
			Options:  compaction.Options{ThinkingLevel: tc.option},
			Settings: settings(150, 10000), Summarizer: fakemodel.NewOpenAI(cfg),
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range srv.requests() {
			if r.Body.ReasoningEffort != tc.want {
				t.Errorf("%+v: reasoning_effort = %q, want %q", tc, r.Body.ReasoningEffort, tc.want)
			}
			if tc.want == "" && strings.Contains(string(r.Raw), "reasoning") {
				t.Errorf("%+v: request mentions reasoning: %s", tc, r.Raw)
			}
		}
	}
}

// recorder is a Summarizer that records requests and answers or fails per kind.
type recorder struct {
	mu   sync.Mutex
	reqs []compaction.Request
	fail map[compaction.Kind]error
}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) Summarize(ctx context.Context, req compaction.Request) (compaction.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	err := r.fail[req.Kind]
	r.mu.Unlock()
	if err != nil {
		return compaction.Result{}, err
	}
	return compaction.Result{Text: strings.ToUpper(string(req.Kind))}, nil
}

// Custom instructions go to the history and the turn-prefix requests, as "Additional
// focus: ..." (Pi 1.4.0+ focuses the prefix too).
func TestCustomInstructionsAppendedAsAdditionalFocus(t *testing.T) {
	prep := prepareFile(t, t10Session(t, "off"), settings(150, 10000))
	rec := &recorder{}
	if _, err := compaction.Generate(context.Background(), prep, rec, compaction.Options{CustomInstructions: "keep the test names"}); err != nil {
		t.Fatal(err)
	}
	if len(rec.reqs) != 2 {
		t.Fatalf("requests %d", len(rec.reqs))
	}
	for _, r := range rec.reqs {
		p := compaction.BuildPrompt(r)
		switch r.Kind {
		case compaction.KindHistory:
			if r.CustomInstructions != "keep the test names" || !strings.HasSuffix(p, "\n\nAdditional focus: keep the test names") || !strings.HasPrefix(p, "<conversation>\n") {
				t.Errorf("history request %+v", r)
			}
		case compaction.KindTurnPrefix:
			if r.CustomInstructions != "keep the test names" || !strings.HasSuffix(p, "\n\nAdditional focus: keep the test names") || r.PreviousSummary != "" || !strings.HasPrefix(p, "# Conversation\n") {
				t.Errorf("prefix request %+v", r)
			}
		}
	}
	// No focus, no "Additional focus".
	rec = &recorder{}
	if _, err := compaction.Generate(context.Background(), prep, rec, compaction.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range rec.reqs {
		if strings.Contains(compaction.BuildPrompt(r), "Additional focus") {
			t.Errorf("%s prompt has an Additional focus without instructions", r.Kind)
		}
	}
}

// T11: a failed summary call fails the compaction with Pi's message, and nothing else
// is produced.
func TestT11SummaryFailureMessage(t *testing.T) {
	prep := prepareFile(t, t10Session(t, "off"), settings(150, 10000))
	for _, tc := range []struct {
		kind compaction.Kind
		want string
	}{
		{compaction.KindHistory, "Summarization failed: boom"},
		{compaction.KindTurnPrefix, "Turn prefix summarization failed: boom"},
	} {
		rec := &recorder{fail: map[compaction.Kind]error{tc.kind: errors.New("boom")}}
		out, err := compaction.Generate(context.Background(), prep, rec, compaction.Options{})
		if err == nil || err.Error() != tc.want || out != nil {
			t.Errorf("%s fails: %v (outcome %v), want %q", tc.kind, err, out, tc.want)
		}
	}
	// Through the OpenAI summarizer: the server's message is in the error.
	srv := newFakeLLM(t)
	srv.setFallback(status(400, `{"error":{"message":"boom","type":"invalid_request_error","code":null}}`))
	path := normalCopy(t)
	before := sessiontest.Read(t, path)
	_, err := runWith(context.Background(), path, fakemodel.NewOpenAI(fastConfig(srv.URL())), settings(normalKeep, 16384), compaction.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "Summarization failed: ") || !strings.Contains(err.Error(), "HTTP 400: boom") {
		t.Errorf("error %v", err)
	}
	if srv.count() != 1 {
		t.Errorf("a 400 was retried (%d requests)", srv.count())
	}
	sameBytes(t, path, before)
}

func normalCopy(t *testing.T) string { return corpusCopy(t, normalFile) }

// An existing Pi setup works as is: the endpoint, model, window, reasoning flag and key
// come from an openai-completions provider of Pi's models.json (the key named by an
// environment variable, as Pi resolves it).
func TestOpenAIConfigFromPiModels(t *testing.T) {
	srv := newFakeLLM(t)
	agentDir := isolate.Setup(t).AgentDir
	t.Setenv("MY_PROVIDER_KEY", "sk-provider")
	models := `{"providers":{"local":{"baseUrl":"` + srv.URL() + `","api":"openai-completions","apiKey":"MY_PROVIDER_KEY",
		"models":[{"id":"think-model","contextWindow":64000,"reasoning":true}]}}}`
	if err := os.WriteFile(filepath.Join(agentDir, "models.json"), []byte(models), 0o644); err != nil {
		t.Fatal(err)
	}
	s, cfg, err := service.SummarizerConfig{Kind: "openai", APIKeyEnv: "UNSET_VAR_FOR_TEST_KEY"}.Build(agentDir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != srv.URL() || cfg.Model != "think-model" || cfg.Window() != 64000 || s.Name() != "openai:think-model" {
		t.Errorf("config %+v, summarizer %s", cfg, s.Name())
	}
	if _, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, t10Session(t, "low")), compaction.RunOptions{Settings: settings(150, 10000), Summarizer: s}); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.requests() {
		if r.Header.Get("Authorization") != "Bearer sk-provider" || r.Body.Model != "think-model" || r.Body.ReasoningEffort != "low" {
			t.Errorf("request: auth %q model %q reasoning %q", r.Header.Get("Authorization"), r.Body.Model, r.Body.ReasoningEffort)
		}
	}
	if srv.count() != 2 {
		t.Errorf("requests %d", srv.count())
	}
	// Misconfiguration is a clear error, not a request to nowhere.
	if _, _, err := (service.SummarizerConfig{Kind: "openai"}).Build(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no base URL") {
		t.Errorf("error %v", err)
	}
	if _, _, err := (service.SummarizerConfig{Kind: "gpt"}).Build(t.TempDir()); err == nil || !strings.Contains(err.Error(), `unknown summarizer "gpt"`) {
		t.Errorf("error %v", err)
	}
}
