package branch

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/watchdog"
)

// A test session is written from lines built by the helpers below; each entry gets a
// timestamp one second after the previous one.

type line map[string]any

var clock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func base(typ, id, parent string) line {
	l := line{"type": typ, "id": id}
	if parent == "" {
		l["parentId"] = nil
	} else {
		l["parentId"] = parent
	}
	return l
}

func textContent(text string) []any { return []any{map[string]any{"type": "text", "text": text}} }

func user(id, parent, text string) line {
	l := base("message", id, parent)
	l["message"] = map[string]any{"role": "user", "content": textContent(text), "timestamp": 1}
	return l
}

// toolCall is a tool call block: name and path.
type toolCall struct{ name, path string }

func asst(id, parent, text string, calls ...toolCall) line {
	l := base("message", id, parent)
	content := []any{}
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for i, c := range calls {
		content = append(content, map[string]any{"type": "toolCall", "id": id + "-" + string(rune('a'+i)), "name": c.name, "arguments": map[string]any{"path": c.path}})
	}
	l["message"] = map[string]any{
		"role": "assistant", "content": content, "api": "openai-completions", "provider": "fake", "model": "fake-model",
		"usage":      map[string]any{"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
		"stopReason": "stop", "timestamp": 2,
	}
	return l
}

func toolResult(id, parent, text string) line {
	l := base("message", id, parent)
	l["message"] = map[string]any{"role": "toolResult", "toolCallId": "x", "toolName": "read", "content": textContent(text), "isError": false, "timestamp": 3}
	return l
}

func details(read, modified []string) map[string]any {
	if read == nil {
		read = []string{}
	}
	if modified == nil {
		modified = []string{}
	}
	return map[string]any{"readFiles": read, "modifiedFiles": modified}
}

func compactionLine(id, parent, summary, firstKept string, d map[string]any, fromHook bool) line {
	l := base("compaction", id, parent)
	l["summary"], l["firstKeptEntryId"], l["tokensBefore"], l["fromHook"] = summary, firstKept, 1000, fromHook
	if d != nil {
		l["details"] = d
	}
	return l
}

func branchSummaryLine(id, parent, summary string, d map[string]any, fromHook bool) line {
	l := base("branch_summary", id, parent)
	from := parent
	if from == "" {
		from = "root"
	}
	l["fromId"], l["summary"], l["fromHook"] = from, summary, fromHook
	if d != nil {
		l["details"] = d
	}
	return l
}

func labelLine(id, parent, target, label string) line {
	l := base("label", id, parent)
	l["targetId"], l["label"] = target, label
	return l
}

func customMessage(id, parent, text string) line {
	l := base("custom_message", id, parent)
	l["customType"], l["content"], l["display"] = "ext", text, true
	return l
}

// chars returns a text of n characters (n/4 tokens when n is a multiple of 4, rounded
// up otherwise).
func chars(tag string, n int) string {
	if len(tag) >= n {
		return tag[:n]
	}
	return tag + strings.Repeat("x", n-len(tag))
}

func encodeLines(t testing.TB, lines []line) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"0190aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/tmp/project"}` + "\n")
	for i, l := range lines {
		if _, ok := l["timestamp"]; !ok {
			l["timestamp"] = clock.Add(time.Duration(i+1) * time.Second).Format("2006-01-02T15:04:05.000Z")
		}
		data, err := json.Marshal(map[string]any(l))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// writeSession writes a session file in a fresh temp dir and returns its path.
func writeSession(t testing.TB, lines ...line) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "2026-01-02T03-04-05-000Z_0190aaaa-0000-7000-8000-000000000001.jsonl")
	if err := os.WriteFile(path, encodeLines(t, lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func ids(entries []*session.Entry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.ID)
	}
	return out
}

// roles lists the roles of messages; summaries are shown with their summary text.
func texts(messages []*session.Message) []string {
	out := []string{}
	for _, m := range messages {
		switch m.Role {
		case session.RoleBranchSummary, session.RoleCompactionSummary:
			out = append(out, m.Role+":"+m.SummaryText())
		default:
			out = append(out, m.Role+":"+m.Text(""))
		}
	}
	return out
}

// rawMessages are the JSON of messages, for structural comparison.
func rawMessages(messages []*session.Message) []any {
	out := []any{}
	for _, m := range messages {
		var v any
		if err := json.Unmarshal(m.Raw(), &v); err != nil {
			panic(err)
		}
		out = append(out, v)
	}
	return out
}

// noHang fails the test if fn does not return within d.
func noHang(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	if _, ok := watchdog.Run(d, fn); !ok {
		t.Fatalf("did not return within %s", d)
	}
}
