package convert

import (
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// A transcript in Claude Code's shape: a request, a reply split over three records (text,
// a shell call, an edit), the results in one user record, a todo call, a secret in a
// command. Written here, in the shape of the real ones.
const claudeTranscript = `{"type":"summary","summary":"Fix the importer","leafUuid":"x"}
{"type":"user","cwd":"/srv/app","timestamp":"2025-10-01T10:00:00.000Z","message":{"role":"user","content":"the nightly import drops rows, please look"}}
{"type":"assistant","timestamp":"2025-10-01T10:00:05.000Z","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Checking the importer log first."}]}}
{"type":"assistant","timestamp":"2025-10-01T10:00:06.000Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"export TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\ntail -n 50 import.log","description":"read the log"}}]}}
{"type":"assistant","timestamp":"2025-10-01T10:00:07.000Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/srv/app/importer.py","old_string":"batch=500","new_string":"batch=100"}}]}}
{"type":"user","timestamp":"2025-10-01T10:00:09.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"row 88 skipped: bad date","is_error":false},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"The file was updated."}]}]}}
{"type":"assistant","timestamp":"2025-10-01T10:00:12.000Z","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t3","name":"TodoWrite","input":{"todos":[{"content":"Rerun the import","status":"pending","activeForm":"Rerunning"}]}}]}}
{"type":"user","timestamp":"2025-10-01T10:00:13.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"Todos have been modified successfully.","is_error":true}]}}
`

func TestClaudeJSONL(t *testing.T) {
	s, err := ClaudeJSONL("t", []byte(claudeTranscript))
	if err != nil {
		t.Fatal(err)
	}
	data := s.Bytes()
	if strings.Contains(string(data), "ghp_abcdefghij") {
		t.Fatal("the token reached the converted session")
	}
	f, err := session.Parse(data)
	if err != nil {
		t.Fatalf("Pi cannot read the conversion: %v\n%s", err, data)
	}
	ix := session.NewIndex(f)
	path := ix.Path(ix.LeafID())
	var roles []string
	for _, e := range path {
		m := session.MessageOf(e)
		if m == nil {
			continue
		}
		roles = append(roles, string(m.Role))
	}
	want := "user assistant toolResult toolResult assistant toolResult"
	if got := strings.Join(roles, " "); got != want {
		t.Fatalf("roles = %s, want %s", got, want)
	}
	a := session.MessageOf(path[1])
	var names []string
	for _, b := range a.Blocks() {
		if b.Type == "toolCall" {
			names = append(names, b.Name)
		}
	}
	if strings.Join(names, ",") != "bash,edit" {
		t.Fatalf("one reply's records are one message with Pi's tools: %v", names)
	}
	if !strings.Contains(string(data), `"path":"/srv/app/importer.py"`) || !strings.Contains(string(data), `"cwd":"/srv/app"`) {
		t.Fatalf("the edit's path or the cwd is lost:\n%s", data)
	}
	last := session.MessageOf(path[len(path)-1])
	if !last.IsError || last.ToolName != "TodoWrite" {
		t.Fatalf("the todo result keeps its tool and error flag: %+v", last)
	}
}

func TestClaudeExport(t *testing.T) {
	doc := "# Claude Session Export\n\n## Session Information\n\n- **Project Path**: `/home/u/proj`\n\n---\n\n## Conversation\n\n" +
		"### User\n> 12/1/2025, 2:53:37 PM\n\nmove on to the next phase\n\n---\n\n" +
		"### Assistant\n> 12/1/2025, 2:53:41 PM\n\n[\n  {\n    \"type\": \"tool_use\",\n    \"id\": \"a1\",\n    \"name\": \"Read\",\n    \"input\": {\n      \"file_path\": \"/home/u/proj/plan.md\"\n    }\n  }\n]\n\n---\n\n" +
		"### User\n> 12/1/2025, 2:53:42 PM\n\n[\n  {\n    \"tool_use_id\": \"a1\",\n    \"type\": \"tool_result\",\n    \"content\": \"# Plan\\n---\\nphase 4\"\n  }\n]\n\n---\n\n"
	out, err := Any("e", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	f, err := session.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	ix := session.NewIndex(f)
	path := ix.Path(ix.LeafID())
	if len(path) != 3 {
		t.Fatalf("want user, assistant, tool result; got %d entries:\n%s", len(path), out)
	}
	if r := session.MessageOf(path[2]); r.ToolName != "read" || !strings.Contains(r.Text("\n"), "phase 4") {
		t.Fatalf("the read's result: %+v", r)
	}
	if !strings.Contains(string(out), `"cwd":"/home/u/proj"`) || !strings.Contains(string(out), `"timestamp":"2025-12-01T14:53:37`) {
		t.Fatalf("cwd or time lost:\n%s", out)
	}
}
