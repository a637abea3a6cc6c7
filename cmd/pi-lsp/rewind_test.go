package main

// The acceptance test of `pi-lsp rewind`: a session recorded by real Pi 1.6.0 whose
// scripted model asked for reads, writes, edits (one and several replacements) and a
// bash command, so the tools really changed a workspace; the workspace was kept after
// each turn. Rewinding a copy of the final workspace to each of those entries gives
// those files byte for byte. The recording is committed (testdata/rewind/agent-edits)
// so the test runs without Node; TestRewindRecordedByPi records a new one under real Pi
// and runs the same checks on it (PI_LSP_UPDATE_GOLDEN=1 writes it as the golden).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/pirpc"
)

// goldenCwd stands for the recording's workspace in the committed session.
const goldenCwd = "/tmp/pi-lsp-rewind/project"

// agentCall is one tool call the scripted model asks for.
type agentCall struct {
	Name string
	Args map[string]any
}

// rewindTurns are the prompts of the recording and the calls the model makes for
// each, one call per answer (Pi runs the calls of one answer in parallel).
var rewindTurns = []struct {
	Prompt string
	Calls  []agentCall
}{
	{"TURN1 read the notes and start the app", []agentCall{
		{"read", map[string]any{"path": "notes.txt"}},
		{"write", map[string]any{"path": "src/app.go", "content": "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"}},
	}},
	{"TURN2 tidy the notes, fix legacy, add a helper", []agentCall{
		{"edit", map[string]any{"path": "notes.txt", "edits": []any{
			map[string]any{"oldText": "beta", "newText": "BETA"},
			map[string]any{"oldText": "gamma\n", "newText": "GAMMA\ndelta\n"},
		}}},
		{"edit", map[string]any{"path": "legacy.txt", "edits": []any{map[string]any{"oldText": "two\n", "newText": ""}}}},
		{"write", map[string]any{"path": "src/util.go", "content": "package main\n\nfunc helper() int { return 1 }\n"}},
	}},
	{"TURN3 greet the world, rewrite the notes, generate", []agentCall{
		{"edit", map[string]any{"path": "src/app.go", "oldText": "hello", "newText": "hello, world"}},
		{"write", map[string]any{"path": "notes.txt", "content": "rewritten notes\n"}},
		{"bash", map[string]any{"command": "echo generated > gen.txt"}},
		{"read", map[string]any{"path": "gen.txt"}},
	}},
	{"TURN4 finish legacy, grow the helper, document", []agentCall{
		{"edit", map[string]any{"path": "legacy.txt", "edits": []any{map[string]any{"oldText": "three", "newText": "3"}, map[string]any{"oldText": "one", "newText": "1"}}}},
		{"edit", map[string]any{"path": "src/util.go", "edits": []any{map[string]any{"oldText": "return 1", "newText": "return 2"}}}},
		{"write", map[string]any{"path": "docs/new.md", "content": "# New\n"}},
	}},
}

// rewindInitial is the workspace before the first turn: notes.txt is read whole,
// legacy.txt only ever edited.
var rewindInitial = map[string]string{
	"notes.txt":  "alpha\nbeta\ngamma\n",
	"legacy.txt": "one\ntwo\nthree\nfour\n",
}

// rewindFiles are every path the recording touches.
var rewindFiles = []string{"notes.txt", "legacy.txt", "src/app.go", "src/util.go", "gen.txt", "docs/new.md"}

// rewindMark is an entry of the recording and the workspace when it was the last one
// (nil: the file did not exist).
type rewindMark struct {
	Entry string             `json:"entry"`
	What  string             `json:"what"`
	Files map[string]*string `json:"files"`
}

func workspaceState(t *testing.T, dir string) map[string]*string {
	t.Helper()
	out := map[string]*string{}
	for _, f := range rewindFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err == nil {
			s := string(b)
			out[f] = &s
		} else {
			out[f] = nil
		}
	}
	return out
}

func setWorkspace(t *testing.T, dir string, files map[string]*string) {
	t.Helper()
	for f, c := range files {
		p := filepath.Join(dir, f)
		if c == nil {
			_ = os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(*c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sameWorkspace(t *testing.T, what string, got, want map[string]*string) {
	t.Helper()
	for _, f := range rewindFiles {
		g, w := got[f], want[f]
		switch {
		case (g == nil) != (w == nil):
			t.Errorf("%s: %s exists=%v, want exists=%v", what, f, g != nil, w != nil)
		case g != nil && *g != *w:
			t.Errorf("%s: %s holds %q, want %q", what, f, *g, *w)
		}
	}
}

// scriptedAgent answers Pi's requests: after a user message whose text holds a turn's
// prompt, that turn's calls one by one (by how many tool results follow the message),
// then a short text.
func scriptedAgent(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(fakemodel.CallSnapshot(r).Body, &body)
	var calls []agentCall
	done := 0
	for i := len(body.Messages) - 1; i >= 0; i-- {
		m := body.Messages[i]
		if m.Role == "tool" {
			done++
			continue
		}
		if m.Role == "user" {
			for _, turn := range rewindTurns {
				if strings.Contains(string(m.Content), turn.Prompt) {
					calls = turn.Calls
				}
			}
			break
		}
	}
	sse := fakemodel.StartSSE(w, r)
	sse.Role()
	if done < len(calls) {
		c := calls[done]
		args, _ := json.Marshal(c.Args)
		sse.Data(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{map[string]any{
				"index": 0, "id": fmt.Sprintf("call_%d_%d", len(body.Messages), done), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": string(args)}}}}, "finish_reason": nil}}})
		sse.Finish("tool_calls")
	} else {
		sse.Content("Done.")
		sse.Finish("stop")
	}
	sse.Usage(nil)
	sse.Done()
}

// recordRewindSession runs real Pi 1.6.0 through the turns in a fresh workspace and
// returns its session file, the workspace, and the marks.
func recordRewindSession(t *testing.T) (string, string, []rewindMark) {
	t.Helper()
	oracle.NeedPiCLI(t, "recording a session whose agent edits files")
	root := t.TempDir()
	d := isolate.Child(t, filepath.Join(root, "pi"), filepath.Join(root, "pi", "agent"))
	ws := filepath.Join(root, "project")
	sessions := filepath.Join(root, "sessions")
	for _, dir := range []string{ws, sessions} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, c := range rewindInitial {
		if err := os.WriteFile(filepath.Join(ws, f), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := fakemodel.New(t)
	srv.SetFallback(scriptedAgent)
	writeFakeAgentDir(t, d.AgentDir, srv.URL)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := isolate.GroupCmd(ctx, oracle.Node(), oracle.PiCLI(), "--mode", "rpc", "--provider", "fake", "--model", "fake-model",
		"--no-skills", "--no-prompt-templates", "--no-themes", "--no-context-files", "--no-extensions", "--session-dir", sessions)
	cmd.Dir = ws
	tmp := filepath.Join(d.Root, "tmp")
	_ = os.MkdirAll(tmp, 0o755)
	cmd.Env = append(append(pirpc.Environ("PI_"), d.Env()...), "TMPDIR="+tmp, "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0", "NO_COLOR=1")
	pi := &realPi{Proc: pirpc.Start(t, cmd), t: t}
	defer pi.stop()

	var marks []rewindMark
	start := workspaceState(t, ws)
	for i, turn := range rewindTurns {
		seen := len(pi.Lines())
		id := fmt.Sprintf("p%d", i)
		pi.send(map[string]any{"type": "prompt", "id": id, "message": turn.Prompt})
		n := 0
		pi.await("the end of "+turn.Prompt, 90*time.Second, func(l map[string]any) bool {
			n++
			if l["type"] == "response" && l["id"] == id && l["success"] == false {
				t.Fatalf("pi refused the prompt: %v", l["error"])
			}
			return n > seen && l["type"] == "agent_settled"
		})
		file := onlySession(t, sessions)
		entries := sessionEntries(t, file)
		if i == 0 {
			for _, e := range entries {
				if e.Role == "user" {
					marks = append(marks, rewindMark{Entry: e.ID, What: "the first prompt", Files: start})
					break
				}
			}
		}
		marks = append(marks, rewindMark{Entry: entries[len(entries)-1].ID, What: "the end of turn " + fmt.Sprint(i+1), Files: workspaceState(t, ws)})
	}
	file := onlySession(t, sessions)
	// Every tool call ran without error, so the workspace holds what the turns say.
	data, _ := os.ReadFile(file)
	if strings.Contains(string(data), `"isError":true`) {
		t.Fatalf("a tool call of the recording failed:\n%s", data)
	}
	return file, ws, marks
}

func onlySession(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(m) != 1 {
		t.Fatalf("sessions in %s: %v", dir, m)
	}
	return m[0]
}

type idRole struct{ ID, Role string }

func sessionEntries(t *testing.T, file string) []idRole {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []idRole
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
		var e struct {
			ID      string `json:"id"`
			Message struct {
				Role string `json:"role"`
			} `json:"message"`
		}
		_ = json.Unmarshal([]byte(l), &e)
		out = append(out, idRole{e.ID, e.Message.Role})
	}
	return out
}

// writeFakeAgentDir points Pi's agent dir at the fake model.
func writeFakeAgentDir(t *testing.T, agentDir, url string) {
	t.Helper()
	cost := map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
	models := map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": url, "api": "openai-completions", "apiKey": "fake-key",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false, "supportsStore": false},
		"models": []any{map[string]any{"id": "fake-model", "name": "Fake Model", "reasoning": false, "input": []string{"text"},
			"contextWindow": 128000, "maxTokens": 4096, "cost": cost}},
	}}}
	settings := map[string]any{"defaultProvider": "fake", "defaultModel": "fake-model", "quietStartup": true,
		"enableInstallTelemetry": false, "retry": map[string]any{"enabled": false}, "compaction": map[string]any{"enabled": false}}
	for name, v := range map[string]any{"models.json": models, "settings.json": settings} {
		b, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(filepath.Join(agentDir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rewindGolden is the committed recording.
func rewindGolden() string {
	return filepath.Join(oracle.RepoRoot(), "testdata", "rewind", "agent-edits")
}

// replayCopy lays out a copy of a recording: its session with the header's cwd (and
// every mention of the recording's workspace) set to a fresh workspace holding the
// final state.
func replayCopy(t *testing.T, session []byte, recordedCwd string, marks []rewindMark) (string, string) {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "project")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	setWorkspace(t, ws, marks[len(marks)-1].Files)
	file := filepath.Join(root, "session.jsonl")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(string(session), recordedCwd, ws)), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, ws
}

func loadRewindGolden(t *testing.T) ([]byte, []rewindMark) {
	t.Helper()
	session, err := os.ReadFile(filepath.Join(rewindGolden(), "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(rewindGolden(), "marks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var marks []rewindMark
	if err := json.Unmarshal(data, &marks); err != nil {
		t.Fatal(err)
	}
	return session, marks
}

func TestRewindRecordedByPi(t *testing.T) {
	file, ws, marks := recordRewindSession(t)
	session, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	checkRewinds(t, session, ws, marks)
	if os.Getenv("PI_LSP_UPDATE_GOLDEN") == "1" {
		dir := rewindGolden()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		neutral := strings.ReplaceAll(string(session), ws, goldenCwd)
		// Pi names its own package in the system prompt: a neutral path in its place.
		for _, dir := range []string{oracle.PiDir(), realPath(oracle.PiDir())} {
			neutral = strings.ReplaceAll(neutral, dir, "/tmp/pi-lsp-rewind/pi")
		}
		b, _ := json.MarshalIndent(marks, "", " ")
		if err := os.WriteFile(filepath.Join(dir, "session.jsonl"), []byte(neutral), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "marks.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRewindGolden(t *testing.T) {
	session, marks := loadRewindGolden(t)
	checkRewinds(t, session, goldenCwd, marks)
}

type rewindAnswer struct {
	Restored      []string `json:"restored"`
	Removed       []string `json:"removed"`
	Conflicts     []string `json:"conflicts"`
	NotRestorable []struct {
		Path, Reason string
	} `json:"notRestorable"`
	BashCommands []string `json:"bashCommands"`
	Undo         *string  `json:"undo"`
}

func rewindCLI(t *testing.T, wantCode int, args ...string) rewindAnswer {
	t.Helper()
	code, out, errb := runCLI(t, append([]string{"rewind"}, args...)...)
	if code != wantCode {
		t.Fatalf("rewind %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, wantCode, out, errb)
	}
	var a rewindAnswer
	if wantCode == 0 && strings.Contains(strings.Join(args, " "), "--json") {
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	return a
}

// checkRewinds runs every acceptance check on copies of a recording.
func checkRewinds(t *testing.T, session []byte, recordedCwd string, marks []rewindMark) {
	t.Run("each entry", func(t *testing.T) {
		for _, m := range marks[:len(marks)-1] {
			isolate.Setup(t)
			file, ws := replayCopy(t, session, recordedCwd, marks)
			before, _ := os.ReadFile(file)
			a := rewindCLI(t, 0, file, m.Entry, "--json")
			want := map[string]*string{}
			for k, v := range m.Files {
				want[k] = v
			}
			want["gen.txt"] = marks[len(marks)-1].Files["gen.txt"] // a command's file stays
			sameWorkspace(t, "rewound to "+m.What, workspaceState(t, ws), want)
			if after, _ := os.ReadFile(file); string(after) != string(before) {
				t.Errorf("--code wrote to the session")
			}
			if a.Undo == nil || len(a.Conflicts) != 0 {
				t.Errorf("%s: answer %+v", m.What, a)
			}
			// gen.txt, made by a bash command of turn 3, cannot come back or go away.
			gen := false
			for _, n := range a.NotRestorable {
				gen = gen || (n.Path == "gen.txt" && strings.Contains(n.Reason, "echo generated > gen.txt"))
			}
			bash := strings.Join(a.BashCommands, "\n") == "echo generated > gen.txt"
			if turn3 := m.Files["gen.txt"] == nil; gen != turn3 || bash != turn3 {
				t.Errorf("%s: gen.txt not restorable %v, bash commands %v", m.What, a.NotRestorable, a.BashCommands)
			}
			rewindCLI(t, 0, file, "--undo")
			sameWorkspace(t, "undone from "+m.What, workspaceState(t, ws), marks[len(marks)-1].Files)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		isolate.Setup(t)
		file, ws := replayCopy(t, session, recordedCwd, marks)
		user := "package main\n\n// the user's own line\nfunc helper() int { return 2 }\n"
		setWorkspace(t, ws, map[string]*string{"src/util.go": &user})
		m := marks[1] // the end of turn 1: src/util.go did not exist
		a := rewindCLI(t, 0, file, m.Entry, "--json")
		if strings.Join(a.Conflicts, ",") != "src/util.go" {
			t.Fatalf("conflicts %v", a.Conflicts)
		}
		want := map[string]*string{}
		for k, v := range m.Files {
			want[k] = v
		}
		want["src/util.go"] = &user
		want["gen.txt"] = marks[len(marks)-1].Files["gen.txt"]
		sameWorkspace(t, "a conflict left alone", workspaceState(t, ws), want)
		rewindCLI(t, 0, file, "--undo")
		rewindCLI(t, 0, file, m.Entry, "--file", "src/util.go")
		want["src/util.go"] = nil
		sameWorkspace(t, "a conflict picked", workspaceState(t, ws), want)
	})
	t.Run("failure mid-rewind", func(t *testing.T) {
		isolate.Setup(t)
		file, ws := replayCopy(t, session, recordedCwd, marks)
		// src/ is now a file: src/app.go cannot be written back, after notes.txt and
		// legacy.txt were.
		if err := os.RemoveAll(filepath.Join(ws, "src")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "src"), []byte("in the way\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := snapshotDir(t, ws)
		sessBefore, _ := os.ReadFile(file)
		code, out, errb := runCLI(t, "rewind", file, marks[2].Entry, "--both", "--force")
		if code != 1 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errb)
		}
		if after := snapshotDir(t, ws); !sameMaps(after, before) {
			t.Errorf("a failed rewind changed the workspace:\nbefore %v\nafter  %v", before, after)
		}
		if s, _ := os.ReadFile(file); string(s) != string(sessBefore) {
			t.Errorf("a failed rewind changed the session")
		}
		if _, _, e := runCLI(t, "rewind", file, "--undo"); !strings.Contains(e, "no rewind") {
			t.Errorf("a failed rewind left something to undo: %s", e)
		}
	})
	t.Run("dry run and both", func(t *testing.T) {
		isolate.Setup(t)
		file, ws := replayCopy(t, session, recordedCwd, marks)
		code, out, _ := runCLI(t, "rewind", file, marks[2].Entry, "--dry-run")
		if code != 0 || !strings.Contains(out, "--- a/notes.txt\n+++ b/notes.txt\n") || !strings.Contains(out, "+++ /dev/null") {
			t.Errorf("dry run: exit %d\n%s", code, out)
		}
		sameWorkspace(t, "after a dry run", workspaceState(t, ws), marks[len(marks)-1].Files)
		if code, _, _ := runCLI(t, "rewind", file, marks[2].Entry, "--code", "--both"); code != 2 {
			t.Errorf("two modes: exit %d", code)
		}
		if code, _, _ := runCLI(t, "rewind", file); code != 2 {
			t.Errorf("no entry: exit %d", code)
		}
		code, out, errb := runCLI(t, "rewind", file, marks[2].Entry, "--both", "--json")
		if code != 0 {
			t.Fatalf("--both: exit %d %s %s", code, out, errb)
		}
		var a struct {
			Position string `json:"position"`
		}
		_ = json.Unmarshal([]byte(out), &a)
		if a.Position != marks[2].Entry {
			t.Errorf("--both continues from %q, want %s", a.Position, marks[2].Entry)
		}
		want := map[string]*string{}
		for k, v := range marks[2].Files {
			want[k] = v
		}
		want["gen.txt"] = marks[len(marks)-1].Files["gen.txt"]
		sameWorkspace(t, "--both", workspaceState(t, ws), want)
	})
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if info.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func sameMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	ks := make([]string, 0, len(a))
	for k := range a {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		if bv, ok := b[k]; !ok || bv != a[k] {
			return false
		}
	}
	return true
}
