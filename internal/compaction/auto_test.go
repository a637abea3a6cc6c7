package compaction_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// autoSession is a small session whose last entries are a turn: a user message, an
// assistant answer (tail) and whatever follows.
func autoSession(t *testing.T, tail ...string) *session.Index {
	t.Helper()
	lines := []string{
		`{"type":"session","version":3,"id":"0190a000-0000-7000-8000-00000000000a","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1767225601000}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m","usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110},"stopReason":"stop","timestamp":1767225602000}}`,
		`{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"do it","timestamp":1767225603000}}`,
	}
	f, err := session.Parse([]byte(strings.Join(append(lines, tail...), "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return session.NewIndex(f)
}

func assistantLine(id, parent, stop, errMsg string, input, output int, calls ...string) string {
	content := `[{"type":"text","text":"partial"}`
	for _, c := range calls {
		content += fmt.Sprintf(`,{"type":"toolCall","id":%q,"name":"read","arguments":{"path":"a.txt"}}`, c)
	}
	content += "]"
	em := ""
	if errMsg != "" {
		em = fmt.Sprintf(`,"errorMessage":%q`, errMsg)
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":%s,"provider":"p","model":"m","usage":{"input":%d,"output":%d,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":%q%s,"timestamp":1767225604000}}`,
		id, parent, content, input, output, input+output, stop, em)
}

func toolResultLine(id, parent, callID string) string {
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"toolResult","toolCallId":%q,"toolName":"read","content":[{"type":"text","text":"data"}],"isError":false,"timestamp":1767225605000}}`, id, parent, callID)
}

// Pi 1.6.0's _checkCompaction decisions.
func TestDecideAutoAsPi16(t *testing.T) {
	st := session.CompactionSettings{Enabled: true, ReserveTokens: 2000, KeepRecentTokens: 20000}
	for _, tc := range []struct {
		name  string
		tail  []string
		tried bool
		want  compaction.AutoDecision
	}{
		{"overflow error: omit, compact, retry",
			[]string{assistantLine("a2", "u2", "error", "400 This model's maximum context length is 8192 tokens", 0, 0)}, false,
			compaction.AutoDecision{Reason: "overflow", WillRetry: true, Omit: []string{"a2"}}},
		{"a rate limit is no overflow",
			[]string{assistantLine("a2", "u2", "error", "429 rate limit: too many tokens per minute", 0, 0)}, false,
			compaction.AutoDecision{}},
		{"bare 413", []string{assistantLine("a2", "u2", "error", "413 Payload Too Large", 0, 0)}, false,
			compaction.AutoDecision{Reason: "overflow", WillRetry: true, Omit: []string{"a2"}}},
		{"cut-off answer below the limit: its tool results are hidden too",
			[]string{assistantLine("a2", "u2", "length", "", 500, 30, "c1", "c2"), toolResultLine("t1", "a2", "c1"), toolResultLine("t2", "t1", "c2"), toolResultLine("t3", "t2", "other")}, false,
			compaction.AutoDecision{Reason: "overflow", WillRetry: true, Omit: []string{"a2", "t1", "t2"}}},
		{"an answer that used the whole output limit is not recovered",
			[]string{assistantLine("a2", "u2", "length", "", 500, 4096)}, false, compaction.AutoDecision{}},
		{"silent overflow: compact, no retry, nothing hidden",
			[]string{assistantLine("a2", "u2", "stop", "", 12000, 10)}, false, compaction.AutoDecision{Reason: "overflow"}},
		{"a second recovery in the turn is refused",
			[]string{assistantLine("a2", "u2", "error", "prompt is too long: 300000 tokens", 0, 0)}, true,
			compaction.AutoDecision{Reason: "overflow", Failed: compaction.OverflowRecoveryFailed}},
		{"a second cut-off answer is refused in its own words",
			[]string{assistantLine("a2", "u2", "length", "", 500, 30)}, true,
			compaction.AutoDecision{Reason: "overflow", Failed: compaction.TruncatedRecoveryFailed}},
		{"threshold", []string{assistantLine("a2", "u2", "stop", "", 8500, 10)}, false, compaction.AutoDecision{Reason: "threshold"}},
		{"below the threshold", []string{assistantLine("a2", "u2", "stop", "", 5000, 10)}, false, compaction.AutoDecision{}},
		{"aborted", []string{assistantLine("a2", "u2", "aborted", "", 9900, 10)}, false, compaction.AutoDecision{}},
		{"an answer already hidden is not recovered again",
			[]string{assistantLine("a2", "u2", "error", "context_length_exceeded", 0, 0),
				`{"type":"context_edit","id":"e1","parentId":"a2","timestamp":"2026-01-01T00:00:06.000Z","targetId":"a2","replacement":null}`}, false,
			compaction.AutoDecision{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := autoSession(t, tc.tail...)
			var a *session.Entry
			for _, e := range ix.Entries() {
				if m, err := e.Message(); err == nil && m.Role == session.RoleAssistant {
					a = e
				}
			}
			got := compaction.DecideAuto(compaction.AutoInput{Path: ix.LeafPath(), Assistant: a, Settings: st,
				Window: 10000, MaxTokens: 4096, RecoveryTried: tc.tried})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
