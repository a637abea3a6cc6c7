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
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// Long jobs (a compaction here) report through the client's progress (a token the
// server creates or the client's own, else window/showMessage) and are cancellable by
// $/cancelRequest, by the progress token, or by shutdown; a cancelled job writes nothing.

// TestProgressFallbacks: a client without workDoneProgress, or one that refuses the
// token, gets window/showMessage instead of $/progress, and the job still runs.
func TestProgressFallbacks(t *testing.T) {
	check := func(t *testing.T, e *lsptest.Env, path string) {
		before := sessiontest.Read(t, path)
		if _, err := e.Call("pi/compact", nil); err != nil {
			t.Fatal(err)
		}
		if len(appended(t, before, path)) != 1 {
			t.Errorf("nothing compacted")
		}
		msgs := e.Await(5*time.Second, lsptest.NotificationMatching("window/showMessage", "job end", func(p json.RawMessage) bool {
			return strings.HasPrefix(lsptest.Fields(p)["message"].(string), compactTitle+": ")
		}))
		if ps := lsptest.Progresses(msgs); len(ps) != 0 {
			t.Errorf("$/progress sent: %+v", ps)
		}
	}
	t.Run("no capability", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, path := compactEnv(t, llm, lsptest.Config{NoProgress: true})
		check(t, e, path)
		for _, m := range e.Messages() {
			if m.Kind == lsptest.KindCall && m.Method == "window/workDoneProgress/create" {
				t.Errorf("token created for a client without workDoneProgress")
			}
		}
	})
	t.Run("create refused", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, path := compactEnv(t, llm, lsptest.Config{Hooks: lsptest.Hooks{CreateProgress: func(ctx context.Context, p json.RawMessage) (any, error) {
			return nil, errors.New("no progress here")
		}}})
		check(t, e, path)
	})
	t.Run("create never answered, job cancelled", func(t *testing.T) {
		llm := fakemodel.NewSummarizer(t)
		e, path := compactEnv(t, llm, lsptest.Config{Hooks: lsptest.Hooks{CreateProgress: hangs}})
		before := sessiontest.Read(t, path)
		cancelWhileWaiting(t, e, false, "window/workDoneProgress/create")
		if !bytes.Equal(before, sessiontest.Read(t, path)) {
			t.Errorf("the session file changed")
		}
	})
}

// TestProgressCancelTokenSpelling: window/workDoneProgress/cancel finds the job by the
// token's value, however the client spells it.
func TestProgressCancelTokenSpelling(t *testing.T) {
	for _, tc := range []struct {
		name        string
		token       any
		cancelToken json.RawMessage
	}{
		{"escaped string", "tok-x", json.RawMessage(`"tok\u002dx"`)},
		{"number as float", 42, json.RawMessage(`42.0`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm := fakemodel.NewSummarizer(t)
			llm.Set(func(f *fakemodel.Summarizer) { f.Hold = true })
			e, path := compactEnv(t, llm, lsptest.Config{})
			before := sessiontest.Read(t, path)
			p := e.Start("pi/compact", map[string]any{"workDoneToken": tc.token}, true)
			select {
			case <-llm.Started:
			case <-time.After(10 * time.Second):
				t.Fatal("summarizer not called")
			}
			e.Notify("window/workDoneProgress/cancel", map[string]any{"token": tc.cancelToken})
			if _, cerr := p.Wait(5 * time.Second); cerr == nil || cerr.Code != rpc.CodeRequestCancelled {
				t.Fatalf("answer %v", cerr)
			}
			if !bytes.Equal(before, sessiontest.Read(t, path)) {
				t.Errorf("the session file changed")
			}
		})
	}
}

// cancelWhileWaiting starts a pi/compact job (with a string id, or a number), cancels it
// once the server made the call that is never answered, and checks that the job
// answers cancelled at once.
func cancelWhileWaiting(t *testing.T, e *lsptest.Env, stringID bool, call string) {
	t.Helper()
	p := e.Start("pi/compact", nil, stringID)
	e.Await(5*time.Second, lsptest.ServerCall(call))
	p.Cancel()
	t0 := time.Now()
	if _, cerr := p.Wait(5 * time.Second); cerr == nil || cerr.Code != rpc.CodeRequestCancelled {
		t.Fatalf("answer %v", cerr)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("the cancelled job waited %v for the unanswered %s request", d, call)
	}
}

// TestCancelWhileHookPending: cancelling a job that waits for the client's hook answers
// at once, without waiting for the hook timeout.
func TestCancelWhileHookPending(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	e, path := hungHookEnv(t, llm, 30*time.Second)
	before := sessiontest.Read(t, path)
	cancelWhileWaiting(t, e, true, "pi/beforeCompact")
	e.Await(5*time.Second, lsptest.NotificationMatching("pi/compactionEnd", "aborted", lsptest.Has(map[string]any{"aborted": true})), lsptest.CompletedProgress(compactTitle))
	if !bytes.Equal(before, sessiontest.Read(t, path)) {
		t.Errorf("the session file changed")
	}
	if llm.Requests.Load() != 0 {
		t.Errorf("the summarizer ran after the cancel")
	}
}

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
