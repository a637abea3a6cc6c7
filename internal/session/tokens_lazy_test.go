package session_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// The token estimate of a loaded message, measured from its line without decoding it,
// is the estimate of the same message decoded whole, whatever its line holds: duplicated
// content or message members, escapes and characters outside the BMP, images, blocks a
// role does not count, tool calls whose arguments stringify to another length.
func TestLazyEstimateMatchesDecoded(t *testing.T) {
	var b strings.Builder
	if err := benchgen.Write(&b, benchgen.Options{Entries: 400, Seed: 3, ImageEvery: 7}); err != nil {
		t.Fatal(err)
	}
	msg := func(id, message string) string {
		return `{"type":"message","id":"` + id + `","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":` + message + "}\n"
	}
	odd := []string{
		`{"role":"user","content":"plain words","timestamp":1}`,
		`{"role":"user","content":"esc\"aped \\ \n \u00e9t\u00e9 \ud83d\ude00 😀 é","timestamp":1}`,
		`{"role":"user","content":[{"type":"text","text":"a"}],"content":"the later string wins","timestamp":1}`,
		`{"role":"user","content":"the later array wins","content":[{"type":"text","text":"abcdef"},{"type":"image","data":"x","mimeType":"image/png"}],"timestamp":1}`,
		`{"role":"user","content":[{"type":"thinking","thinking":"not counted for a user"},{"type":"toolCall","name":"read","arguments":{}}],"timestamp":1}`,
		`{"role":"user","content":null,"timestamp":1}`,
		`{"role":"user","timestamp":1}`,
		`{"role":"user","content":42,"timestamp":1}`,
		`{"role":"user","content":[1,"two",null,{"type":"text","text":"three"},{"type":"text","text":7}],"timestamp":1}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"out\tput 日本"}],"isError":false,"timestamp":1}`,
		`{"role":"custom","customType":"x","content":"custom text","display":true,"timestamp":1}`,
		`{"role":"assistant","content":"a string is no block","timestamp":1}`,
		`{"role":"assistant","content":[{"type":"image","data":"x"},{"type":"thinking","thinking":"hm \u2028"},{"type":"text","text":"t","type":"text"}],"stopReason":"stop","timestamp":1}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"edit","arguments":{ "n" : 1.0, "e": 1E3, "d":1,"d":2, "s":"x\/y", "a":[ 1 , {"k":-0} ] }}],"stopReason":"toolUse","timestamp":1}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c2","name":"noargs"}],"stopReason":"toolUse","timestamp":1}`,
		`{"role":"user","content":[{"type":"text","text":"first message member"}]},"message":{"role":"assistant","content":[{"type":"text","text":"second"}]`,
		`{"role":"bashExecution","command":"ls -la","output":"a\nb","exitCode":0,"timestamp":1}`,
		`{"role":"system","content":"sys","sections":{"a":"bc"},"timestamp":1}`,
		`{"role":"branchSummary","summary":"a summary","fromId":"x","timestamp":1}`,
	}
	for i, m := range odd {
		b.WriteString(msg("odd"+string(rune('a'+i)), m))
	}
	for _, load := range []string{"file", "memory"} {
		var f *session.File
		if load == "file" {
			f = sessiontest.Load(t, writeFile(t, b.String()))
		} else {
			f = sessiontest.Parse(t, []byte(b.String()))
		}
		checked := 0
		for _, e := range f.Entries {
			if e.Type != session.TypeMessage {
				continue
			}
			lazy, err := e.Message()
			if err != nil {
				t.Fatal(err)
			}
			raw, ok := jsjson.LookupField(e.Raw(), "message")
			if !ok {
				t.Fatalf("%s: no message member", e.ID)
			}
			whole, err := session.DecodeMessage(raw)
			if err != nil {
				t.Fatalf("%s: %v", e.ID, err)
			}
			if got, want := session.EstimateTokens(lazy), session.EstimateTokens(whole); got != want {
				t.Errorf("%s (%s) %s: estimate %d from the line, %d decoded", load, e.ID, lazy.Role, got, want)
			}
			checked++
		}
		if checked < 300 {
			t.Fatalf("%s: only %d messages checked", load, checked)
		}
	}
}

// Estimating many messages of a loaded file at once reads their lines together and gives
// each message's own estimate; a line rewritten behind the load's back is not measured
// from the batch's read but read on its own, which reports the rewrite.
func TestEstimateTokensEach(t *testing.T) {
	var b strings.Builder
	if err := benchgen.Write(&b, benchgen.Options{Entries: 300, Seed: 5, ImageEvery: 9}); err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, b.String())
	f := sessiontest.Load(t, p)
	var ms []*session.Message
	var want []int
	for _, e := range f.Entries {
		if m, err := e.Message(); err == nil && e.Type == session.TypeMessage {
			ms = append(ms, m)
			want = append(want, session.EstimateTokens(m))
		}
	}
	for _, n := range []int{1, 2, 16, len(ms)} {
		got := make([]int, n)
		session.EstimateTokensEach(ms[len(ms)-n:], got)
		for i, g := range got {
			if w := want[len(ms)-n+i]; g != w {
				t.Fatalf("batch of %d, message %d: %d tokens, want %d", n, i, g, w)
			}
		}
	}
	if f.ReadErr() != nil {
		t.Fatal(f.ReadErr())
	}
	// The last message's line rewritten in place (same length, another id).
	last := f.Entries[len(f.Entries)-1]
	data := []byte(b.String())
	at := strings.LastIndex(b.String(), `"id":"`+last.ID+`"`)
	copy(data[at+6:], strings.Repeat("z", len(last.ID)))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make([]int, 16)
	session.EstimateTokensEach(ms[len(ms)-16:], got)
	if !errors.Is(f.ReadErr(), session.ErrRewritten) {
		t.Fatalf("a rewritten line went unreported: %v", f.ReadErr())
	}
	for i, g := range got[:15] {
		if w := want[len(ms)-16+i]; g != w {
			t.Fatalf("message %d beside the rewritten line: %d tokens, want %d", i, g, w)
		}
	}
}
