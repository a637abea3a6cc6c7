package secrets

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Planted is a session file that holds one secret in every place a session carries text,
// and the ids of its entries.
type Planted struct {
	Path string
	// Answer is the assistant's first answer: navigating there leaves a branch whose
	// tool call, result, error line and user command hold the secret.
	Answer string
	// IDs are the entries, in file order.
	IDs []string
}

// WriteSession writes, into dir, a Pi session with s planted in the user's text, the
// assistant's text, a bash tool call's arguments, that call's (large) result, a tool's
// error line and a command the user ran, then a recent turn that a compaction keeping
// about 100 tokens keeps. name makes the file name (and the session id) unique.
func WriteSession(t testing.TB, dir string, n int, s Secret) Planted {
	t.Helper()
	id := fmt.Sprintf("0190aaaa-0000-7000-8000-%012d", n)
	path := filepath.Join(dir, "2026-01-02T03-04-05-000Z_"+id+".jsonl")
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/tmp/project"}` + "\n")
	var ids []string
	parent := any(nil)
	ts := 1760000000000
	add := func(m map[string]any) {
		eid := fmt.Sprintf("%08x", 0x1000+len(ids))
		ts++
		m["timestamp"] = ts
		line, err := json.Marshal(map[string]any{"type": "message", "id": eid, "parentId": parent,
			"timestamp": fmt.Sprintf("2026-01-02T03:04:%02d.000Z", 6+len(ids)), "message": m})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
		ids = append(ids, eid)
		parent = eid
	}
	text := func(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }
	assistant := func(content []any, stop string) map[string]any {
		return map[string]any{"role": "assistant", "content": content, "api": "openai-completions", "provider": "fake", "model": "fake-model",
			"usage": map[string]any{"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}, "stopReason": stop}
	}
	filler := strings.Repeat("compiling package files and running their tests\n", 60)
	add(map[string]any{"role": "user", "content": text("Deploy the service. Use this, you must keep it: " + s.Use)})
	add(assistant(text("I will use "+s.OneLine()+" for the deploy."), "stop"))
	add(map[string]any{"role": "user", "content": text("run the deploy script")})
	add(assistant([]any{map[string]any{"type": "text", "text": "Running it."},
		map[string]any{"type": "toolCall", "id": "call_1", "name": "bash", "arguments": map[string]any{"command": s.Use}}}, "toolUse"))
	add(map[string]any{"role": "toolResult", "toolCallId": "call_1", "toolName": "bash", "content": text("$ " + s.Use + "\n" + filler), "isError": false})
	add(assistant([]any{map[string]any{"type": "toolCall", "id": "call_2", "name": "bash", "arguments": map[string]any{"command": "make deploy"}}}, "toolUse"))
	add(map[string]any{"role": "toolResult", "toolCallId": "call_2", "toolName": "bash",
		"content": text("error: " + s.OneLine() + "\nmake: *** [deploy] Error 1"), "isError": true})
	add(map[string]any{"role": "bashExecution", "command": s.Use, "output": "ok\n", "exitCode": 0, "cancelled": false, "truncated": false})
	add(map[string]any{"role": "user", "content": text("now check the build: " + strings.Repeat("it must compile cleanly. ", 30))})
	add(assistant(text("The build is fine."), "stop"))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return Planted{Path: path, Answer: ids[1], IDs: ids}
}
