// Package benchgen generates large Pi sessions of realistic shape for benchmarks and load
// tests: user text, assistant thinking + text + tool calls with usage, tool results of
// about 2.5 KB, with optional branches, compactions and images. Output is deterministic
// for a seed and is a valid Pi session (1.6.0 and 0.73.1 open it).
package benchgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"time"
)

// Options shape a generated session.
type Options struct {
	Entries      int   // approximate number of entries
	Seed         int64 // deterministic output per seed
	BranchEvery  int   // start a new branch from an earlier entry every N turns (0: linear)
	CompactEvery int   // append a compaction every N turns (0: none)
	ImageEvery   int   // attach an image to a tool result every N turns (0: none)
	ResultBytes  int   // tool result size (default 2500)
}

var words = strings.Fields(`the quick brown fox jumps over a lazy dog while the compiler checks every
function call argument against its declared type and the test runner reports each failing case with
the file name line number and expected value so the agent can read edit and write files until the
build passes`)

type writer struct {
	w    *bufio.Writer
	r    *rand.Rand
	t    time.Time
	ids  map[string]bool
	err  error
	n    int
	call int
}

func (g *writer) id() string {
	for {
		id := fmt.Sprintf("%08x", g.r.Uint32())
		if !g.ids[id] {
			g.ids[id] = true
			return id
		}
	}
}

func (g *writer) text(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[g.r.Intn(len(words))])
	}
	return b.String()
}

func (g *writer) emit(v map[string]any) {
	if g.err != nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		g.err = err
		return
	}
	g.w.Write(data)
	g.err = g.w.WriteByte('\n')
	g.n++
}

func (g *writer) entry(typ, parent string, fields map[string]any) string {
	g.t = g.t.Add(time.Duration(200+g.r.Intn(3000)) * time.Millisecond)
	id := g.id()
	e := map[string]any{"type": typ, "id": id, "timestamp": g.t.UTC().Format("2006-01-02T15:04:05.000Z")}
	if parent == "" {
		e["parentId"] = nil
	} else {
		e["parentId"] = parent
	}
	for k, v := range fields {
		e[k] = v
	}
	g.emit(e)
	return id
}

// Write generates a session to w.
func Write(w io.Writer, opt Options) error {
	if opt.ResultBytes == 0 {
		opt.ResultBytes = 2500
	}
	g := &writer{w: bufio.NewWriterSize(w, 1<<20), r: rand.New(rand.NewSource(opt.Seed)), t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), ids: map[string]bool{}}
	g.emit(map[string]any{"type": "session", "version": 3, "id": fmt.Sprintf("0190a000-0000-7000-8000-%012x", opt.Seed), "timestamp": g.t.Format("2006-01-02T15:04:05.000Z"), "cwd": "/home/dev/project"})
	leaf := g.entry("model_change", "", map[string]any{"provider": "openai", "modelId": "gpt-4.1"})
	leaf = g.entry("thinking_level_change", leaf, map[string]any{"thinkingLevel": "medium"})
	var turnStarts []string
	input := 2000
	for turn := 1; g.n < opt.Entries && g.err == nil; turn++ {
		if opt.BranchEvery > 0 && turn%opt.BranchEvery == 0 && len(turnStarts) > 2 {
			leaf = turnStarts[g.r.Intn(len(turnStarts)-1)] // continue from an earlier turn
		}
		ms := g.t.UnixMilli()
		leaf = g.entry("message", leaf, map[string]any{"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": g.text(80 + g.r.Intn(400))}}, "timestamp": ms}})
		turnStarts = append(turnStarts, leaf)
		steps := 1 + g.r.Intn(4)
		for s := 0; s < steps && g.n < opt.Entries; s++ {
			g.call++
			tool := []string{"read", "edit", "write", "bash"}[g.r.Intn(4)]
			var args map[string]any
			path := fmt.Sprintf("src/pkg%d/file%d.go", g.r.Intn(40), g.r.Intn(200))
			switch tool {
			case "read":
				args = map[string]any{"path": path}
			case "edit":
				args = map[string]any{"path": path, "edits": []any{map[string]any{"oldText": g.text(60), "newText": g.text(60)}}}
			case "write":
				args = map[string]any{"path": path, "content": g.text(400)}
			case "bash":
				args = map[string]any{"command": "go test ./..."}
			}
			input += 300 + g.r.Intn(900)
			out := 50 + g.r.Intn(400)
			callID := fmt.Sprintf("call_%d", g.call)
			leaf = g.entry("message", leaf, map[string]any{"message": map[string]any{
				"role": "assistant",
				"content": []any{
					map[string]any{"type": "thinking", "thinking": g.text(200 + g.r.Intn(400)), "thinkingSignature": "sig"},
					map[string]any{"type": "text", "text": g.text(60 + g.r.Intn(200))},
					map[string]any{"type": "toolCall", "id": callID, "name": tool, "arguments": args},
				},
				"api": "openai-completions", "provider": "openai", "model": "gpt-4.1",
				"usage":      map[string]any{"input": input, "output": out, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + out, "cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
				"stopReason": "toolUse", "timestamp": g.t.UnixMilli(),
			}})
			content := []any{map[string]any{"type": "text", "text": g.text(opt.ResultBytes)}}
			if opt.ImageEvery > 0 && turn%opt.ImageEvery == 0 && s == 0 {
				content = append(content, map[string]any{"type": "image", "data": strings.Repeat("iVBORw0KGgo", 200), "mimeType": "image/png"})
			}
			leaf = g.entry("message", leaf, map[string]any{"message": map[string]any{"role": "toolResult", "toolCallId": callID, "toolName": tool, "content": content, "isError": g.r.Intn(20) == 0, "timestamp": g.t.UnixMilli()}})
		}
		input += 200
		leaf = g.entry("message", leaf, map[string]any{"message": map[string]any{
			"role": "assistant", "content": []any{map[string]any{"type": "text", "text": g.text(100 + g.r.Intn(300))}},
			"api": "openai-completions", "provider": "openai", "model": "gpt-4.1",
			"usage":      map[string]any{"input": input, "output": 120, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + 120, "cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
			"stopReason": "stop", "timestamp": g.t.UnixMilli(),
		}})
		if opt.CompactEvery > 0 && turn%opt.CompactEvery == 0 && len(turnStarts) > 1 {
			kept := turnStarts[len(turnStarts)-1]
			leaf = g.entry("compaction", leaf, map[string]any{"summary": "## Goal\n" + g.text(600), "firstKeptEntryId": kept, "tokensBefore": input,
				"details": map[string]any{"readFiles": []string{"src/a.go"}, "modifiedFiles": []string{"src/b.go"}}, "fromHook": false})
			input = 4000
		}
	}
	if g.err != nil {
		return g.err
	}
	return g.w.Flush()
}
