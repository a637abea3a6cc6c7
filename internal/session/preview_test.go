package session_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// referencePreview is the preview computed the slow way, from the fully decoded entry
// and message; the load-time preview must equal it.
func referencePreview(e *session.Entry) string {
	clip := func(s string) string {
		if len(s) > session.PreviewRunes*4 {
			return s[:session.PreviewRunes*4]
		}
		return s
	}
	firstText := func(m *session.Message) string {
		if str, ok := m.StringContent(); ok {
			return clip(str)
		}
		var b strings.Builder
		for _, bl := range m.Blocks() {
			if bl.Type != "text" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(clip(bl.Text))
			if b.Len() >= session.PreviewRunes*4 {
				break
			}
		}
		return b.String()
	}
	var s string
	switch e.Type {
	case session.TypeMessage:
		m, err := e.Message()
		if err != nil {
			return ""
		}
		switch m.Role {
		case session.RoleBashExecution:
			s = "$ " + clip(m.Bash().Command)
		case session.RoleAssistant:
			s = firstText(m)
			var calls []string
			for _, b := range m.Blocks() {
				if b.Type == "toolCall" {
					calls = append(calls, b.Name)
				}
			}
			if len(calls) > 0 {
				s = strings.TrimSpace(s + " [" + strings.Join(calls, ", ") + "]")
			}
			if m.StopReason == "error" {
				s = "error: " + clip(m.ErrorMessage())
			}
		case session.RoleToolResult:
			s = m.ToolName + ": " + firstText(m)
		default:
			s = firstText(m)
		}
	case session.TypeCompaction:
		s = clip(e.Compaction().Summary)
	case session.TypeBranchSummary:
		s = clip(e.BranchSummary().Summary)
	case session.TypeLabel:
		l := e.Label()
		s = l.Label + " → " + l.TargetID
	case session.TypeModelChange:
		s = e.StringField("provider") + "/" + e.StringField("modelId")
	case session.TypeThinkingLevelChange:
		s = e.StringField("thinkingLevel")
	case session.TypeSessionInfo:
		s = e.StringField("name")
	case session.TypeCustom, session.TypeCustomMessage:
		s = e.StringField("customType")
		if s == session.PinCustomType {
			var d struct {
				TargetID string `json:"targetId"`
				Pinned   bool   `json:"pinned"`
			}
			_ = json.Unmarshal(e.RawField("data"), &d)
			s = "unpin → " + d.TargetID
			if d.Pinned {
				s = "pin → " + d.TargetID
			}
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > session.PreviewRunes {
		s = string(r[:session.PreviewRunes-1]) + "…"
	}
	return s
}

func TestPreviewMatchesReference(t *testing.T) {
	var files []string
	for _, dir := range []string{"genuine", "synthetic"} {
		m, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "corpus", dir, "*.jsonl"))
		files = append(files, m...)
	}
	var b strings.Builder
	if err := benchgen.Write(&b, benchgen.Options{Entries: 3000, Seed: 3, BranchEvery: 30, CompactEvery: 400, ImageEvery: 20}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("word \t\n", 200)
	extra := header + "\n" + strings.Join([]string{
		`{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":` + quote(long+"é\u00a0end") + `}}`,
		`{"type":"message","id":"u2","parentId":"u1","message":{"role":"user","content":[{"type":"image"},{"type":"text","text":"  a\\nb  "},{"type":"text"},{"type":"text","text":` + quote(strings.Repeat("é", 300)) + `}]}}`,
		`{"type":"message","id":"a1","parentId":"u2","message":{"role":"assistant","content":[{"type":"toolCall","name":"read","arguments":{"path":"x"}},{"type":"text","text":"t"}],"content":[{"type":"toolCall"},{"type":"text","text":"second wins"}]}}`,
		`{"type":"message","id":"a2","parentId":"a1","message":{"role":"assistant","stopReason":"error","errorMessage":"boom\\n\\tx","content":[]}}`,
		`{"type":"message","id":"b1","parentId":"a2","message":{"role":"bashExecution","command":"ls  -la\\n","output":"x"}}`,
		`{"type":"message","id":"r1","parentId":"b1","message":{"role":"toolResult","toolName":"bash","content":"\u0000 \\ud83d\\ude00 done"}}`,
		`{"type":"custom","id":"p1","parentId":"r1","customType":"pi-lsp/pin","data":{"targetId":"u1","pinned":true}}`,
		`{"type":"label","id":"l1","parentId":"p1","targetId":"u1","label":"  mark  "}`,
		`{"type":"compaction","id":"c1","parentId":"l1","summary":` + quote(strings.Repeat("🙂 ", 400)) + `,"firstKeptEntryId":"u1","tokensBefore":1}`,
		`{"type":"message","id":"m1","parentId":"c1","message":"not an object"}`,
		`{"type":"model_change","id":"mc","parentId":"m1","provider":"p","modelId":1}`,
		`{"type":"message","id":"x1","parentId":"mc","message":{"role":"user","content":"` + strings.Repeat("a", 479) + `é and more"}}`,
		`{"type":"message","id":"x2","parentId":"x1","message":{"role":"user","content":"` + strings.Repeat(" ", 478) + `\u00e9\u00e9 words"}}`,
		`{"type":"message","id":"x3","parentId":"x2","message":{"role":"user","content":"lone \ud800 and \udc00 x\u0085y\u00a0z \/ \\ \" \b\f"}}`,
		"{\"type\":\"message\",\"id\":\"x4\",\"parentId\":\"x3\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff\xfe bytes \xe2\x82\"}}",
		`{"type":"message","id":"x5","parentId":"x4","message":{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("ab ", 200) + `"},{"type":"text","text":"after"}]}}`,
	}, "\n") + "\n"
	dir := t.TempDir()
	for i, content := range []string{b.String(), extra} {
		p := filepath.Join(dir, fmt.Sprintf("extra%d.jsonl", i))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	checked := 0
	for _, p := range files {
		f, err := session.Load(p)
		if err != nil {
			continue
		}
		data, _ := os.ReadFile(p)
		pf, _ := session.Parse(data)
		for i, e := range f.Entries {
			want := referencePreview(e)
			if got := e.Preview(); got != want {
				t.Errorf("%s line %d: preview %q, want %q", filepath.Base(p), e.Line, got, want)
			}
			if got := pf.Entries[i].Preview(); got != want {
				t.Errorf("%s line %d (parsed in memory): preview %q, want %q", filepath.Base(p), e.Line, got, want)
			}
			checked++
		}
	}
	if checked < 3000 {
		t.Fatalf("only %d entries checked", checked)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
