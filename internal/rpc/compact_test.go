package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

const compactTitle = "Compacting session"

// appended checks the file only grew from before and returns its new lines, decoded.
func appended(t *testing.T, before []byte, path string) []map[string]any {
	t.Helper()
	now := sessiontest.Read(t, path)
	if !bytes.HasPrefix(now, before) {
		t.Fatalf("%s was rewritten, not appended to", path)
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(now[len(before):]), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("appended line is not JSON: %s", line)
		}
		out = append(out, m)
	}
	return out
}

// compactEnv is a session with something to compact and a fake LLM as summarizer.
func compactEnv(t *testing.T, llm *fakemodel.Summarizer, cfg lsptest.Config) (*lsptest.Env, string) {
	t.Helper()
	t.Setenv("PI_LSP_TEST_KEY", "test-key")
	if cfg.Corpus == nil {
		cfg.Corpus = []string{"auto-threshold"}
	}
	cfg.InitOptions = lsptest.Merge(llm.Config(), map[string]any{"keepRecentTokens": 200}, cfg.InitOptions)
	e := lsptest.NewEnv(t, cfg)
	return e, e.Sessions[cfg.Corpus[len(cfg.Corpus)-1]]
}

// hangs is a client hook (or a window/workDoneProgress/create handler) that never
// answers: it returns only when the server gives up on the request.
func hangs(ctx context.Context, _ json.RawMessage) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// hungHookEnv is compactEnv with a pi/beforeCompact hook that never answers, which the
// server gives up on after timeout.
func hungHookEnv(t *testing.T, llm *fakemodel.Summarizer, timeout time.Duration) (*lsptest.Env, string) {
	t.Helper()
	return compactEnv(t, llm, lsptest.Config{ClientHooks: true, Options: rpc.Options{HookTimeout: timeout}, Hooks: lsptest.Hooks{BeforeCompact: hangs}})
}

func isEnd(want map[string]any) func(json.RawMessage) bool { return lsptest.Has(want) }

func TestCompactWithServerCreatedToken(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	llm.Set(func(f *fakemodel.Summarizer) { f.Delay = 60 * time.Millisecond; f.Chunks = 6 })
	e, path := compactEnv(t, llm, lsptest.Config{})
	before := sessiontest.Read(t, path)
	p := e.Start("workspace/executeCommand", map[string]any{"command": "pi.compact", "arguments": []any{map[string]any{}}}, false)
	msgs := e.Await(15*time.Second,
		lsptest.ResponseTo(p.ID),
		lsptest.ServerCall("window/workDoneProgress/create"),
		lsptest.ProgressBeginAtZero(compactTitle),
		lsptest.ProgressReportMatching(compactTitle, "summarizing"),
		lsptest.CompletedProgress(compactTitle),
		lsptest.NotificationMatching("pi/compactionStart", "manual", lsptest.Has(map[string]any{"session": path, "reason": "manual"})),
		lsptest.OnceMet(lsptest.CompletedProgress(compactTitle),
			lsptest.NotificationMatching("pi/compactionEnd", "manual success", lsptest.Has(map[string]any{"session": path, "reason": "manual", "aborted": false, "willRetry": false}))),
	)
	res, cerr := p.Wait(time.Second)
	if cerr != nil {
		t.Fatalf("pi.compact: %v", cerr)
	}
	// create → begin(0%) → reports (non-decreasing) → end, all on the created token.
	var created string
	createSeq := -1
	for _, m := range msgs {
		if m.Kind == lsptest.KindCall && m.Method == "window/workDoneProgress/create" {
			created = string(lsptest.Decode[struct{ Token json.RawMessage }](t, m.Params).Token)
			createSeq = m.Seq
			break
		}
	}
	ps := lsptest.ProgressOf(msgs, compactTitle)
	if ps[0].Token != created || ps[0].Seq < createSeq {
		t.Errorf("begin token %s at #%d, created token %s at #%d", ps[0].Token, ps[0].Seq, created, createSeq)
	}
	if !ps[0].Canc {
		t.Errorf("begin is not cancellable")
	}
	last := 0.0
	reports := 0
	for _, pr := range ps[1 : len(ps)-1] {
		if pr.Kind != "report" {
			t.Errorf("unexpected %s between begin and end", pr.Kind)
			continue
		}
		reports++
		if pr.Pct == nil || *pr.Pct < last || *pr.Pct > 100 {
			t.Errorf("report percentage %v after %v", pr.Pct, last)
		} else {
			last = *pr.Pct
		}
	}
	if reports == 0 {
		t.Errorf("no progress reports")
	}
	// compactionStart comes after begin, compactionEnd before end.
	var startSeq, endSeq int
	for _, m := range msgs {
		switch m.Method {
		case "pi/compactionStart":
			startSeq = m.Seq
		case "pi/compactionEnd":
			endSeq = m.Seq
		}
	}
	if startSeq < ps[0].Seq || endSeq > ps[len(ps)-1].Seq {
		t.Errorf("order: begin #%d start #%d end-event #%d progress-end #%d", ps[0].Seq, startSeq, endSeq, ps[len(ps)-1].Seq)
	}
	// The answer comes last, so a client that closes its progress UI on the answer
	// has seen every report.
	for _, m := range msgs {
		if m.Kind == lsptest.KindResponse && m.ID == p.ID && m.Seq < ps[len(ps)-1].Seq {
			t.Errorf("answer #%d before progress end #%d", m.Seq, ps[len(ps)-1].Seq)
		}
	}
	// The entry was appended, and is what the answer and compactionEnd say.
	lines := appended(t, before, path)
	if len(lines) != 1 || lines[0]["type"] != "compaction" {
		t.Fatalf("appended %v, want one compaction entry", lines)
	}
	entry := lines[0]
	if entry["parentId"] != "8852ca19" || entry["fromHook"] != false {
		t.Errorf("entry parentId %v fromHook %v", entry["parentId"], entry["fromHook"])
	}
	if !strings.HasPrefix(entry["summary"].(string), "## Goal\nFake summary from the test endpoint.") {
		t.Errorf("summary = %q", entry["summary"])
	}
	got := lsptest.Decode[struct {
		Entry        map[string]any `json:"entry"`
		TokensBefore float64        `json:"tokensBefore"`
		TokensAfter  float64        `json:"tokensAfter"`
	}](t, res)
	if got.Entry["id"] != entry["id"] || got.TokensBefore != entry["tokensBefore"] || got.TokensAfter <= 0 || got.TokensAfter >= got.TokensBefore {
		t.Errorf("answer %s does not match the entry %v", lsptest.Trunc(res), entry)
	}
	for _, m := range msgs {
		if m.Method == "pi/compactionEnd" {
			r := lsptest.Fields(m.Params)["result"].(map[string]any)
			if r["summary"] != entry["summary"] || r["firstKeptEntryId"] != entry["firstKeptEntryId"] {
				t.Errorf("compactionEnd.result %v differs from the entry", r)
			}
			if _, ok := lsptest.Fields(m.Params)["errorMessage"]; ok {
				t.Errorf("errorMessage on success: %s", m.Params)
			}
		}
	}
	// The new state is pushed.
	e.Await(5*time.Second, lsptest.NotificationMatching("pi/sessionChanged", "new leaf", lsptest.Has(map[string]any{"session": path, "leafId": entry["id"]})))
}

func TestCompactWithClientToken(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token any
		raw   string
	}{{"numeric", 42, "42"}, {"string", "tok-abc", `"tok-abc"`}} {
		t.Run(tc.name, func(t *testing.T) {
			llm := fakemodel.NewSummarizer(t)
			llm.Set(func(f *fakemodel.Summarizer) { f.Delay = 30 * time.Millisecond })
			e, path := compactEnv(t, llm, lsptest.Config{})
			p := e.Start("workspace/executeCommand", map[string]any{"command": "pi.compact", "arguments": []any{map[string]any{"session": path}}, "workDoneToken": tc.token}, false)
			msgs := e.Await(15*time.Second, lsptest.ResponseTo(p.ID), lsptest.CompletedProgress(compactTitle), lsptest.ProgressBeginAtZero(compactTitle))
			if _, err := p.Wait(time.Second); err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if m.Kind == lsptest.KindCall && m.Method == "window/workDoneProgress/create" {
					t.Errorf("server created a token although the client sent one")
				}
			}
			for _, pr := range lsptest.Progresses(msgs) {
				if pr.Token != tc.raw {
					t.Errorf("progress on token %s, want %s exactly", pr.Token, tc.raw)
				}
			}
		})
	}
	t.Run("pi/compact request", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, _ := compactEnv(t, llm, lsptest.Config{})
		p := e.Start("pi/compact", map[string]any{"workDoneToken": "custom-7"}, true)
		msgs := e.Await(15*time.Second, lsptest.ResponseTo(p.ID), lsptest.CompletedProgress(compactTitle))
		if _, err := p.Wait(time.Second); err != nil {
			t.Fatal(err)
		}
		if ps := lsptest.ProgressOf(msgs, compactTitle); ps[0].Token != `"custom-7"` {
			t.Errorf("token %s", ps[0].Token)
		}
	})
}

// TestCompactCancel cancels a compaction while the summary streams: the answer is
// -32800, nothing is written, compactionEnd says aborted, and progress still ends.
func TestCompactCancel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		stringID bool
		how      string // "request" or "progress"
		token    any    // client token for progress cancellation (nil: server-created)
	}{
		{"$/cancelRequest numeric id", false, "request", nil},
		{"$/cancelRequest string id", true, "request", nil},
		{"workDoneProgress/cancel server token", false, "progress", nil},
		{"workDoneProgress/cancel numeric client token", true, "progress", 7},
		{"workDoneProgress/cancel string client token", false, "progress", "tok-x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm := fakemodel.NewSummarizer(t)
			llm.Set(func(f *fakemodel.Summarizer) { f.Hold = true })
			e, path := compactEnv(t, llm, lsptest.Config{})
			before := sessiontest.Read(t, path)
			args := map[string]any{"command": "pi.compact", "arguments": []any{map[string]any{}}}
			if tc.token != nil {
				args["workDoneToken"] = tc.token
			}
			p := e.Start("workspace/executeCommand", args, tc.stringID)
			select {
			case <-llm.Started:
			case <-time.After(10 * time.Second):
				t.Fatal("the summarizer was never called")
			}
			msgs := e.Await(5*time.Second, lsptest.ProgressReportMatching(compactTitle, "summarizing"))
			if tc.how == "request" {
				p.Cancel()
			} else {
				tok := json.RawMessage(lsptest.ProgressOf(msgs, compactTitle)[0].Token)
				e.Notify("window/workDoneProgress/cancel", map[string]any{"token": tok})
			}
			t0 := time.Now()
			_, cerr := p.Wait(5 * time.Second)
			if cerr == nil || cerr.Code != rpc.CodeRequestCancelled {
				t.Fatalf("answer %v, want %d", cerr, rpc.CodeRequestCancelled)
			}
			if d := time.Since(t0); d > 2*time.Second {
				t.Errorf("cancellation took %v", d)
			}
			e.Await(5*time.Second,
				lsptest.CompletedProgress(compactTitle),
				lsptest.NotificationMatching("pi/compactionEnd", "aborted", lsptest.Has(map[string]any{"reason": "manual", "aborted": true, "willRetry": false, "errorMessage": nil, "result": nil})),
			)
			if !bytes.Equal(sessiontest.Read(t, path), before) {
				t.Errorf("the session file changed")
			}
			deadline := time.Now().Add(5 * time.Second)
			for llm.Cancelled.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if llm.Cancelled.Load() == 0 {
				t.Errorf("the summary request was not aborted")
			}
		})
	}
}

// TestShutdownWithJobInFlight: shutdown answers within a second, the running job gets
// -32800 and writes nothing, and exit then returns 0.
func TestShutdownWithJobInFlight(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	llm.Set(func(f *fakemodel.Summarizer) { f.Hold = true })
	e, path := compactEnv(t, llm, lsptest.Config{})
	before := sessiontest.Read(t, path)
	p := e.Start("pi/compact", map[string]any{}, false)
	select {
	case <-llm.Started:
	case <-time.After(10 * time.Second):
		t.Fatal("the summarizer was never called")
	}
	e.Shutdown(time.Second)
	if _, cerr := p.Wait(time.Second); cerr == nil || cerr.Code != rpc.CodeRequestCancelled {
		t.Fatalf("job answer %v, want %d", cerr, rpc.CodeRequestCancelled)
	}
	e.Notify("exit", nil)
	if code := e.ExitCode(3 * time.Second); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if !bytes.Equal(sessiontest.Read(t, path), before) {
		t.Errorf("the session file changed")
	}
}

// TestCompactHooks: with experimental.pi.hooks the client decides before compacting.
func TestCompactHooks(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		var asked json.RawMessage
		e, path := compactEnv(t, llm, lsptest.Config{ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
				asked = p
				return map[string]any{"cancel": true}, nil
			}}})
		before := sessiontest.Read(t, path)
		_, err := e.Call("pi/compact", map[string]any{"instructions": "focus on files"})
		var ce *lsptest.CallError
		if !errors.As(err, &ce) || ce.Code != rpc.CodeRequestCancelled {
			t.Fatalf("answer %v, want %d", err, rpc.CodeRequestCancelled)
		}
		e.Await(5*time.Second, lsptest.NotificationMatching("pi/compactionEnd", "aborted", lsptest.Has(map[string]any{"aborted": true})), lsptest.CompletedProgress(compactTitle))
		if !bytes.Equal(sessiontest.Read(t, path), before) {
			t.Errorf("the session file changed")
		}
		if n := llm.Requests.Load(); n != 0 {
			t.Errorf("summarizer called %d times", n)
		}
		q := lsptest.Fields(asked)
		prep, _ := q["preparation"].(map[string]any)
		if q["session"] != path || q["reason"] != "manual" || q["customInstructions"] != "focus on files" || prep == nil || prep["firstKeptEntryId"] == nil || prep["conversation"] == "" {
			t.Errorf("pi/beforeCompact params %s", lsptest.Trunc(asked))
		}
	})
	t.Run("summary from the hook", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		const text = "Summary written by the editor hook."
		e, path := compactEnv(t, llm, lsptest.Config{ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
				return map[string]any{"summary": text}, nil
			}}})
		before := sessiontest.Read(t, path)
		if _, err := e.Compact(nil); err != nil {
			t.Fatal(err)
		}
		lines := appended(t, before, path)
		if len(lines) != 1 || lines[0]["summary"] != text || lines[0]["fromHook"] != true {
			t.Fatalf("appended %v, want one entry with exactly the hook's summary and fromHook true", lines)
		}
		if n := llm.Requests.Load(); n != 0 {
			t.Errorf("summarizer called %d times", n)
		}
	})
	t.Run("retain-none with usage from the hook", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		const text = "Everything so far, in the editor's words."
		e, path := compactEnv(t, llm, lsptest.Config{ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
				if lsptest.Fields(p)["willRetry"] != false {
					t.Errorf("pi/beforeCompact without willRetry: %s", lsptest.Trunc(p))
				}
				return map[string]any{"summary": text, "firstKeptEntryId": nil,
					"usage": map[string]any{"input": 50, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 55,
						"cost": map[string]any{"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3}}}, nil
			}}})
		before := sessiontest.Read(t, path)
		if _, err := e.Compact(nil); err != nil {
			t.Fatal(err)
		}
		lines := appended(t, before, path)
		if len(lines) != 1 || lines[0]["firstKeptEntryId"] != lines[0]["id"] || lines[0]["fromHook"] != true {
			t.Fatalf("appended %v, want a retain-none compaction (firstKeptEntryId its own id, as Pi 1.6.0 writes it)", lines)
		}
		if u, _ := lines[0]["usage"].(map[string]any); u == nil || u["totalTokens"] != float64(55) {
			t.Errorf("the hook's usage is not stored: %v", lines[0]["usage"])
		}
		f, err := session.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		msgs := session.NewIndex(f).BuildContext("").Messages
		if len(msgs) != 1 || msgs[0].Role != session.RoleCompactionSummary {
			t.Errorf("the context after a retain-none compaction is %d messages, want the summary alone", len(msgs))
		}
	})
	t.Run("hook that never answers", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, path := hungHookEnv(t, llm, 300*time.Millisecond)
		before := sessiontest.Read(t, path)
		t0 := time.Now()
		if _, err := e.Compact(nil); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d < 300*time.Millisecond {
			t.Errorf("finished in %v, before the hook timeout", d)
		}
		lines := appended(t, before, path)
		if len(lines) != 1 || lines[0]["fromHook"] != false {
			t.Fatalf("appended %v", lines)
		}
		if n := llm.Requests.Load(); n == 0 {
			t.Errorf("the default summarizer did not run")
		}
		e.Await(time.Second, lsptest.NotificationMatching("window/logMessage", "about the hook", func(p json.RawMessage) bool {
			return strings.Contains(string(p), "pi/beforeCompact")
		}))
	})
	t.Run("hook error", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, path := compactEnv(t, llm, lsptest.Config{ClientHooks: true, Hooks: lsptest.Hooks{
			BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
				return nil, errors.New("extension crashed")
			}}})
		before := sessiontest.Read(t, path)
		if _, err := e.Compact(nil); err != nil {
			t.Fatal(err)
		}
		if lines := appended(t, before, path); len(lines) != 1 || lines[0]["fromHook"] != false {
			t.Fatalf("appended %v", lines)
		}
	})
	t.Run("not asked without the capability", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, _ := compactEnv(t, llm, lsptest.Config{Hooks: lsptest.Hooks{
			BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
				return map[string]any{"cancel": true}, nil
			}}})
		if _, err := e.Compact(nil); err != nil {
			t.Fatal(err)
		}
		for _, m := range e.Messages() {
			if m.Kind == lsptest.KindCall && m.Method == "pi/beforeCompact" {
				t.Errorf("hook asked although the client did not declare hooks")
			}
		}
	})
}

func TestCompactNothingToCompact(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	e, path := compactEnv(t, llm, lsptest.Config{Corpus: []string{"tree-nav"}, InitOptions: map[string]any{"keepRecentTokens": 20000}})
	before := sessiontest.Read(t, path)
	res, err := e.Compact(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.NothingToCompact {
		t.Errorf("answer %+v", res)
	}
	e.Await(5*time.Second, lsptest.CompletedProgress(compactTitle), lsptest.NotificationMatching("pi/compactionEnd", "not aborted", lsptest.Has(map[string]any{"aborted": false})))
	if !bytes.Equal(sessiontest.Read(t, path), before) {
		t.Errorf("the session file changed")
	}
	if n := llm.Requests.Load(); n != 0 {
		t.Errorf("summarizer called %d times", n)
	}
}
