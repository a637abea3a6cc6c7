package fileops

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

func msg(t *testing.T, js string) *session.Message {
	t.Helper()
	m, err := session.DecodeMessage(json.RawMessage(js))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOpsAsPi(t *testing.T) {
	o := New()
	o.AddDetails(session.FileDetails{ReadFiles: []string{"prev-read.ts", "both.ts"}, ModifiedFiles: []string{"prev-mod.ts"}, Present: true})
	o.AddMessage(msg(t, `{"role":"assistant","content":[
		{"type":"toolCall","id":"1","name":"read","arguments":{"path":"old-read.ts"}},
		{"type":"toolCall","id":"2","name":"write","arguments":{"path":"both.ts","content":"x"}},
		{"type":"toolCall","id":"3","name":"Read","arguments":{"path":"ignored-case.ts"}},
		{"type":"toolCall","id":"4","name":"grep","arguments":{"path":"ignored-tool.ts"}},
		{"type":"toolCall","id":"5","name":"edit","arguments":{"file_path":"ignored-arg.ts"}},
		{"type":"toolCall","id":"6","name":"edit","arguments":{"path":""}}]}`))
	o.AddMessage(msg(t, `{"role":"user","content":[{"type":"toolCall","name":"read","arguments":{"path":"not-assistant.ts"}}]}`))
	read, mod := o.Lists()
	if strings.Join(read, ",") != "old-read.ts,prev-read.ts" || strings.Join(mod, ",") != "both.ts,prev-mod.ts" {
		t.Fatalf("read %v modified %v", read, mod)
	}
	if got := Format([]string{"a.ts"}, []string{"b.ts", "c.ts"}); got != "\n\n<read-files>\na.ts\n</read-files>\n\n<modified-files>\nb.ts\nc.ts\n</modified-files>" {
		t.Fatalf("Format = %q", got)
	}
	if Format(nil, nil) != "" {
		t.Fatal("empty lists must format to nothing")
	}
}

func TestSortIsUTF16Order(t *testing.T) {
	s := []string{"\U0001F600.ts", "\uFF21.ts", "b.ts", "A.ts"}
	SortJS(s)
	// JS compares UTF-16 code units: the surrogate pair (0xD83D) sorts before U+FF21.
	if strings.Join(s, " ") != "A.ts b.ts \U0001F600.ts \uFF21.ts" {
		t.Fatalf("sorted %q", s)
	}
	ascii := []string{"b", "_x", "B", "a/c", "a", "A.go", "a.go"}
	SortJS(ascii) // ASCII only: code units are bytes
	if strings.Join(ascii, " ") != "A.go B _x a a.go a/c b" {
		t.Fatalf("sorted %q", ascii)
	}
}

func TestFormatBoundedKeepsMostRecent(t *testing.T) {
	var mod, recent []string
	for i := 0; i < 60; i++ {
		f := "f" + string(rune('A'+i%26)) + string(rune('a'+i/26)) + ".go"
		mod = append(mod, f)
		recent = append(recent, f)
	}
	SortJS(mod)
	out := FormatBounded(nil, mod, recent, 50)
	if !strings.Contains(out, "(+10 more)") || !strings.Contains(out, recent[59]) || strings.Contains(out, "\n"+recent[0]+"\n") {
		t.Fatalf("bounded list wrong:\n%s", out)
	}
	if FormatBounded(nil, mod[:3], nil, 50) != Format(nil, mod[:3]) {
		t.Fatal("short lists must not change")
	}
}

func TestStaleFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("same.txt", "alpha\n")
	write("changed.txt", "beta\n")
	write("touched.txt", "gamma\n")
	read := time.Now().Add(-time.Hour)
	recs := []ReadRecord{
		{Path: "same.txt", ReadAt: time.Now().Add(time.Hour)},
		{Path: "changed.txt", ReadAt: read, Hash: "nope", Size: 5},
		{Path: "touched.txt", ReadAt: read, Hash: "e6a04eebf76a7e327d41d7e8ca1b7dc3d4a1e5d5b5f5c1f8c0c6f37b9b3c9f4a", Size: 6},
		{Path: "gone.txt", ReadAt: read},
	}
	// touched.txt: same content as what was read, so a newer mtime alone is not stale.
	data, _ := os.ReadFile(filepath.Join(dir, "touched.txt"))
	recs[2].Hash = hashOf(data)
	got := Stale(dir, recs)
	reasons := map[string]string{}
	for _, s := range got {
		reasons[s.Path] = s.Reason
	}
	if len(got) != 2 || reasons["changed.txt"] != "modified" || reasons["gone.txt"] != "deleted" {
		t.Fatalf("stale = %+v", got)
	}
}

func TestLastReadsPairsCallsWithResults(t *testing.T) {
	content := `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"x.txt"}},{"type":"toolCall","id":"c2","name":"read","arguments":{"path":"y.txt"}}],"stopReason":"toolUse"}}
{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"hello"}],"isError":false}}
{"type":"message","id":"t2","parentId":"t1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c2","toolName":"read","content":[{"type":"text","text":"ENOENT"}],"isError":true}}
`
	f, err := session.Parse([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	ix := session.NewIndex(f)
	recs := LastReads(ix.Path(ix.LeafID()))
	if len(recs) != 1 || recs[0].Path != "x.txt" || recs[0].Size != 5 || recs[0].Hash != hashOf([]byte("hello")) || recs[0].ReadAt.Unix() != time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC).Unix() {
		t.Fatalf("records %+v", recs)
	}
}

func TestAgentsOwnEditIsNotStale(t *testing.T) {
	dir := t.TempDir()
	content := `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"x.txt"}}],"stopReason":"toolUse"}}
{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"old"}],"isError":false}}
{"type":"message","id":"a2","parentId":"t1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c2","name":"edit","arguments":{"path":"x.txt","edits":[]}}],"stopReason":"toolUse"}}
{"type":"message","id":"t2","parentId":"a2","timestamp":"2099-01-01T00:00:04.000Z","message":{"role":"toolResult","toolCallId":"c2","toolName":"edit","content":[{"type":"text","text":"ok"}],"isError":false}}
`
	f, err := session.Parse([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "x.txt"), []byte("new content written by the agent"), 0o644)
	ix := session.NewIndex(f)
	recs := LastReads(ix.Path(ix.LeafID()))
	if len(recs) != 1 || recs[0].Hash != "" {
		t.Fatalf("records %+v", recs)
	}
	if got := Stale(dir, recs); len(got) != 0 {
		t.Fatalf("the agent's own edit is flagged stale: %+v", got)
	}
}

// AddMessages finds, on a loaded file whose paths repeat (one copy per loading core) and
// outgrow the sets' first sizes, the sets a map of the calls written finds.
func TestAddMessagesFindsEveryPathOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	tools := []string{"read", "write", "edit", "bash"}
	want := map[string]map[string]bool{"read": {}, "write": {}, "edit": {}}
	for i := range 40000 {
		tool, file := tools[i%len(tools)], fmt.Sprintf("src/f%d.go", (i*7)%1500)
		fmt.Fprintf(&b, `{"type":"message","id":"m%d","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c%d","name":%q,"arguments":{"path":%q,"pad":%q}}],"timestamp":1}}`+"\n",
			i, i, tool, file, strings.Repeat("x", 40))
		if want[tool] != nil {
			want[tool][file] = true
		}
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := session.Load(path) // large enough for several ranges, so two copies of a path
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*session.Message
	for _, e := range f.Entries {
		m, err := e.Message()
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	o := New()
	o.AddMessages(msgs)
	for _, c := range []struct {
		name string
		set  *pathSet
	}{{"read", &o.Read}, {"write", &o.Written}, {"edit", &o.Edited}} {
		if c.set.Len() != len(want[c.name]) || c.set.Len() < 300 {
			t.Fatalf("%s: %d paths, want %d", c.name, c.set.Len(), len(want[c.name]))
		}
		for p := range want[c.name] {
			if !c.set.has(p, hashPath(p)) {
				t.Fatalf("%s: %s is missing", c.name, p)
			}
		}
	}
	read, modified := o.Lists()
	for _, p := range read {
		if want["write"][p] || want["edit"][p] || !want["read"][p] {
			t.Fatalf("%s is listed as only read", p)
		}
	}
	if len(modified) != len(union(want["write"], want["edit"])) {
		t.Fatalf("%d modified, want %d", len(modified), len(union(want["write"], want["edit"])))
	}
}

func union(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
