package rpc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

const overflowError = "400 This model's maximum context length is 128000 tokens. (context_length_exceeded)"

func userMsg(text string, ts int64) map[string]any {
	return map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}, "timestamp": ts}
}

func assistantMsg(text string, input int, stop, errMsg string, ts int64) map[string]any {
	content := []any{}
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	m := map[string]any{"role": "assistant", "content": content, "api": "openai-completions", "provider": "fake", "model": "fake-model",
		"usage": map[string]any{"input": input, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + 40,
			"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
		"stopReason": stop, "timestamp": ts}
	if errMsg != "" {
		m["errorMessage"] = errMsg
		m["usage"].(map[string]any)["output"] = 0
	}
	return m
}

// appendTurn appends one turn through pi/append: the user's message at ts, then the
// assistant's answer a millisecond later (its text, the input tokens its usage reports,
// its stop reason and error message, as assistantMsg takes them).
func appendTurn(e *lsptest.Env, ts int64, user, answer string, input int, stop, errMsg string) (rpc.AppendResult, error) {
	return e.Append(map[string]any{"messages": []any{userMsg(user, ts), assistantMsg(answer, input, stop, errMsg, ts+1)}})
}

// hostedEnv is a session the sidecar hosts, with a 10k window and 2k reserve, so an
// assistant usage above 8k triggers the threshold compaction.
func hostedEnv(t *testing.T) (*lsptest.Env, string) {
	llm := fakemodel.NewSummarizer(t)
	return compactEnv(t, llm, lsptest.Config{InitOptions: map[string]any{"contextWindow": 10000, "reserveTokens": 2000}})
}

func TestAutoCompactionThreshold(t *testing.T) {
	e, path := hostedEnv(t)
	before := sessiontest.Read(t, path)
	now := time.Now().UnixMilli()
	res, err := appendTurn(e, now, "what changed in notes.txt?", "It says beta now.", 9000, "stop", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Session != path || len(res.EntryIDs) != 2 || res.LeafID != res.EntryIDs[1] || res.AutoCompaction != "threshold" {
		t.Fatalf("answer %+v", res)
	}
	e.Await(15*time.Second,
		lsptest.NotificationMatching("pi/compactionStart", "threshold", lsptest.Has(map[string]any{"session": path, "reason": "threshold"})),
		lsptest.NotificationMatching("pi/compactionEnd", "threshold success", func(p json.RawMessage) bool {
			return lsptest.Has(map[string]any{"reason": "threshold", "aborted": false, "willRetry": false, "errorMessage": nil})(p) && lsptest.Fields(p)["result"] != nil
		}),
		lsptest.CompletedProgress(compactTitle),
	)
	lines := appended(t, before, path)
	if len(lines) != 3 {
		t.Fatalf("appended %d lines, want user, assistant, compaction", len(lines))
	}
	if lines[0]["parentId"] != "8852ca19" || lines[1]["parentId"] != lines[0]["id"] {
		t.Errorf("messages not chained on the leaf: %v %v", lines[0], lines[1])
	}
	if c := lines[2]; c["type"] != "compaction" || c["parentId"] != lines[1]["id"] {
		t.Errorf("compaction %v", c)
	}
	// A small usage does not compact.
	res, err = appendTurn(e, time.Now().UnixMilli(), "and now?", "fine", 500, "stop", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.AutoCompaction != "" {
		t.Errorf("answer %+v", res)
	}
}

func TestAutoCompactionOverflow(t *testing.T) {
	e, path := hostedEnv(t)
	before := sessiontest.Read(t, path)
	now := time.Now().UnixMilli()
	res, err := appendTurn(e, now, "paste the whole log", "", 0, "error", overflowError)
	if err != nil {
		t.Fatal(err)
	}
	if res.AutoCompaction != "overflow" {
		t.Fatalf("answer %+v", res)
	}
	ids := res.EntryIDs
	userID, errID := ids[0], ids[1]
	e.Await(15*time.Second,
		lsptest.NotificationMatching("pi/compactionStart", "overflow", lsptest.Has(map[string]any{"reason": "overflow"})),
		lsptest.NotificationMatching("pi/compactionEnd", "overflow, will retry", func(p json.RawMessage) bool {
			return lsptest.Has(map[string]any{"reason": "overflow", "aborted": false, "willRetry": true, "errorMessage": nil})(p) && lsptest.Fields(p)["result"] != nil
		}),
	)
	// Pi 1.6.0's recovery: the failed attempt is hidden by a context_edit omission on the
	// same branch, and the compaction follows it; the error stays in the file and on the
	// path, out of the context.
	lines := appended(t, before, path)
	if len(lines) != 4 || lines[2]["type"] != "context_edit" || lines[3]["type"] != "compaction" {
		t.Fatalf("appended %v", lines)
	}
	if edit := lines[2]; edit["targetId"] != errID || edit["parentId"] != errID {
		t.Errorf("omission %v, want target and parent %s", edit, errID)
	}
	if raw := sessiontest.Read(t, path); !bytes.Contains(raw, []byte(`"targetId":"`+errID+`","replacement":null}`)) {
		t.Errorf("the omission is not written as Pi writes it (replacement null, last)")
	}
	if lines[3]["parentId"] != lines[2]["id"] {
		t.Errorf("compaction parent %v, want the omission %v", lines[3]["parentId"], lines[2]["id"])
	}
	f, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := session.NewIndex(f).BuildContext("")
	for _, m := range ctx.Messages {
		if strings.Contains(m.ErrorMessage(), "maximum context length") {
			t.Errorf("the context still holds the overflow error")
		}
	}
	tree, err := e.Call("pi/tree", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(tree, []byte(fmt.Sprintf(`"id":%q`, errID))) {
		t.Errorf("the error entry is gone from the tree")
	}
	_ = userID

	// A second overflow right after the recovery (no new user message): Pi's failure
	// message, and no second compaction.
	mark := e.Mark()
	before = sessiontest.Read(t, path)
	res, err = e.Append(map[string]any{"messages": []any{assistantMsg("", 0, "error", overflowError, time.Now().UnixMilli()+5)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.AutoCompaction != "" {
		t.Errorf("answer %+v", res)
	}
	e.Await(5*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/compactionEnd", "recovery failed", lsptest.Has(map[string]any{
		"reason": "overflow", "aborted": false, "willRetry": false, "errorMessage": compaction.OverflowRecoveryFailed}))))
	if !strings.HasPrefix(compaction.OverflowRecoveryFailed, "Context overflow recovery failed after one compact-and-retry attempt.") {
		t.Errorf("message %q", compaction.OverflowRecoveryFailed)
	}
	time.Sleep(200 * time.Millisecond)
	for _, m := range e.Messages()[mark:] {
		if m.Method == "pi/compactionStart" {
			t.Errorf("a second compaction started: %s", m)
		}
	}
	if lines := appended(t, before, path); len(lines) != 1 {
		t.Errorf("appended %d lines, want only the error message", len(lines))
	}
}

// onPath reports whether the tree answer marks id as on the active path.
func onPath(t *testing.T, tree json.RawMessage, id string) bool {
	t.Helper()
	var res struct {
		Roots []*rpc.TreeNode `json:"roots"`
	}
	if err := json.Unmarshal(tree, &res); err != nil {
		t.Fatal(err)
	}
	stack := res.Roots
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.ID == id {
			return n.OnPath
		}
		stack = append(stack, n.Children...)
	}
	t.Fatalf("%s not in the tree", id)
	return false
}

func TestAppendErrors(t *testing.T) {
	e, path := hostedEnv(t)
	outside := e.Workspace + "/copy.jsonl"
	if err := os.WriteFile(outside, sessiontest.Read(t, path), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := e.Call("pi/append", map[string]any{"messages": []any{}})
	wantCode(t, err, rpc.CodeInvalidParams)
	_, err = e.Call("pi/append", map[string]any{"messages": []any{map[string]any{"content": "no role"}}})
	wantCode(t, err, rpc.CodeInvalidParams)
	_, err = e.Call("pi/append", map[string]any{"messages": []any{userMsg("x", 1)}, "session": outside})
	if ce := wantCode(t, err, rpc.CodeInvalidParams); ce.Kind() != rpc.KindOutsideSessions {
		t.Errorf("kind %s", ce.Kind())
	}
	_, err = e.Call("pi/append", map[string]any{"messages": "not an array"})
	wantCode(t, err, rpc.CodeInvalidParams)
	many := make([]any, rpc.MaxAppendMessages+1)
	for i := range many {
		many[i] = userMsg("x", int64(i))
	}
	before := sessiontest.Read(t, path)
	_, err = e.Call("pi/append", map[string]any{"messages": many})
	wantCode(t, err, rpc.CodeInvalidParams)
	if !bytes.Equal(sessiontest.Read(t, path), before) {
		t.Error("a refused append wrote to the session")
	}
}

// TestAppendWritesMessagesAsSent: a message is written with its members in the order the
// client sent them and its strings as they were (no escaping added), on one line
// whatever whitespace the client put between its tokens.
func TestAppendWritesMessagesAsSent(t *testing.T) {
	e, path := hostedEnv(t)
	before := sessiontest.Read(t, path)
	mark := e.RawMark()
	body := "{\"jsonrpc\":\"2.0\",\"id\":\"raw-append\",\"method\":\"pi/append\",\"params\":{\"messages\":[{\n  \"role\": \"user\",\n  \"content\": \"a <b> & c\",\n  \"timestamp\": 1\n}]}}"
	e.WriteRaw([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)))
	e.AwaitRaw(10*time.Second, mark, "the append's answer", func(frames []json.RawMessage) bool {
		for _, f := range frames {
			if bytes.Contains(f, []byte(`"raw-append"`)) {
				return true
			}
		}
		return false
	})
	now := sessiontest.Read(t, path)
	added := bytes.Split(bytes.TrimSuffix(now[len(before):], []byte("\n")), []byte("\n"))
	if len(added) != 1 {
		t.Fatalf("appended %d lines, want 1: %q", len(added), now[len(before):])
	}
	var line map[string]json.RawMessage
	if err := json.Unmarshal(added[0], &line); err != nil {
		t.Fatal(err)
	}
	if want := `{"role":"user","content":"a <b> & c","timestamp":1}`; string(line["message"]) != want {
		t.Errorf("message written as %s, want %s", line["message"], want)
	}
}

// TestLiveFileFromAnotherWriter: lines another process appends (plain O_APPEND writes)
// are pushed as pi/sessionChanged with the new leaf and entry count; a torn line waits
// for its newline.
func TestLiveFileFromAnotherWriter(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}})
	path := e.Sessions["tree-nav"]
	e.Await(5*time.Second, lsptest.NotificationMatching("pi/sessionChanged", "initial state", lsptest.Has(map[string]any{"session": path, "leafId": "9e8d20a8", "entries": 45.0})))
	write := func(s string) { sessiontest.Append(t, path, s) }
	line := func(id, parent, text string) string {
		b, _ := json.Marshal(map[string]any{"type": "message", "id": id, "parentId": parent, "timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
			"message": userMsg(text, time.Now().UnixMilli())})
		return string(b) + "\n"
	}
	mark := e.Mark()
	write(line("feed0001", "9e8d20a8", "typed in another terminal"))
	e.Await(5*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/sessionChanged", "new leaf", lsptest.Has(map[string]any{"session": path, "leafId": "feed0001", "entries": 46.0}))),
		lsptest.Since(mark, lsptest.NotificationMatching("pi/contextUsage", "usage", lsptest.Has(map[string]any{"session": path}))))

	// A torn line is not an entry until its newline arrives.
	second := line("feed0002", "feed0001", "second line")
	mark = e.Mark()
	write(second[:20])
	time.Sleep(500 * time.Millisecond)
	for _, m := range e.Messages()[mark:] {
		if m.Method == "pi/sessionChanged" && lsptest.Fields(m.Params)["leafId"] == "feed0002" {
			t.Fatalf("a torn line was indexed: %s", m)
		}
	}
	write(second[20:])
	e.Await(5*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/sessionChanged", "completed line", lsptest.Has(map[string]any{"leafId": "feed0002", "entries": 47.0}))))
	res, err := e.Context(nil)
	if err != nil {
		t.Fatal(err)
	}
	if lsptest.Str(res.LeafID) != "feed0002" {
		t.Errorf("pi/context leaf %v", lsptest.Str(res.LeafID))
	}
}

// An automatic run with nothing to compact emits nothing (Pi 1.6.0 prepares first): no
// progress, no start, no end.
func TestAutoCompactionNothingToCompactIsSilent(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	e, path := compactEnv(t, llm, lsptest.Config{InitOptions: map[string]any{"contextWindow": 10000, "reserveTokens": 2000, "keepRecentTokens": 100000}})
	before := sessiontest.Read(t, path)
	mark := e.Mark()
	now := time.Now().UnixMilli()
	res, err := appendTurn(e, now, "one more", "It says beta now.", 9000, "stop", "")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	for _, m := range e.Messages()[mark:] {
		if m.Method == "pi/compactionStart" || m.Method == "pi/compactionEnd" || m.Method == "$/progress" {
			t.Errorf("an automatic run with nothing to compact sent %s", m.Method)
		}
	}
	if res.AutoCompaction != "" || len(appended(t, before, path)) != 2 {
		t.Errorf("answer %+v, appended %v", res, appended(t, before, path))
	}
	if n := llm.Requests.Load(); n != 0 {
		t.Errorf("summarizer called %d times", n)
	}
}

// An automatic compaction whose context refills past the threshold on the very next turn
// is not followed by another one (it would only summarize the summary again): the
// notification says why and names the messages that fill the context; a manual
// compaction lets the automatic one run again.
func TestAutoCompactionDoesNotLoop(t *testing.T) {
	e, path := hostedEnv(t)
	now := time.Now().UnixMilli()
	res, err := appendTurn(e, now, "what changed in notes.txt?", "It says beta now.", 9000, "stop", "")
	if err != nil || res.AutoCompaction != "threshold" {
		t.Fatalf("first threshold: %+v %v", res, err)
	}
	e.Await(15*time.Second, lsptest.CompletedProgress(compactTitle),
		lsptest.NotificationMatching("pi/compactionEnd", "threshold success", lsptest.Has(map[string]any{"reason": "threshold", "errorMessage": nil})))
	before := sessiontest.Read(t, path)
	mark := e.Mark()
	now = time.Now().UnixMilli() + 1000 // after the compaction: its usage is the new context's
	res, err = appendTurn(e, now+2, "paste the whole log", strings.Repeat("log line\n", 200), 9500, "stop", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.AutoCompaction != "" {
		t.Fatalf("compacted again one turn after the last automatic compaction: %+v", res)
	}
	e.Await(10*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/compactionEnd", "not again, with what fills the context", func(p json.RawMessage) bool {
		msg, _ := lsptest.Fields(p)["errorMessage"].(string)
		return strings.Contains(msg, "Not compacting again") && strings.Contains(msg, "refilled") && strings.Contains(msg, res.EntryIDs[1])
	})))
	if got := appended(t, before, path); len(got) != 2 {
		t.Fatalf("appended %d lines, want only the two messages", len(got))
	}
	// The user compacts by hand: the guard is reset.
	if _, err := e.Command("pi.compact", map[string]any{"session": path}); err != nil {
		t.Fatal(err)
	}
	now = time.Now().UnixMilli() + 1000
	raw := e.RawMark()
	res, err = appendTurn(e, now+4, "again", "ok", 9600, "stop", "")
	if err != nil {
		t.Fatal(err)
	}
	// The refusal, when sent, comes before the answer to the append.
	frames := e.AwaitRaw(5*time.Second, raw, "the append's answer", func(fs []json.RawMessage) bool {
		for _, f := range fs {
			if bytes.Contains(f, []byte(res.LeafID)) && bytes.Contains(f, []byte(`"entryIds"`)) {
				return true
			}
		}
		return false
	})
	for _, f := range frames {
		if bytes.Contains(f, []byte("Not compacting again")) {
			t.Fatalf("after a manual compaction the guard still refuses: %s", f)
		}
	}
}
