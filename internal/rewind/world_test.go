package rewind

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// world is an agent's session and its workspace written together: each tool call
// changes the files as Pi 1.6.0's tools do and appends its call and result to the
// session, so the test knows what every file held at every entry.
type world struct {
	t        *testing.T
	cwd      string
	session  string
	lines    []string
	last     string
	n        int
	snapshot map[string]map[string]*string // entry id -> file (rel) -> content (nil: absent)
	files    []string                      // every path the world touched
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, cwd: filepath.Join(root, "project"), session: filepath.Join(root, "s.jsonl"), snapshot: map[string]map[string]*string{}}
	if err := os.MkdirAll(w.cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(map[string]any{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-12-01T10:00:00.000Z", "cwd": w.cwd})
	w.lines = append(w.lines, string(h))
	return w
}

func (w *world) entry(msg map[string]any) string {
	w.n++
	id := fmt.Sprintf("e%04d", w.n)
	var parent any
	if w.last != "" {
		parent = w.last
	}
	b, _ := json.Marshal(map[string]any{"type": "message", "id": id, "parentId": parent, "timestamp": "2026-12-01T10:00:00.000Z", "message": msg})
	w.lines = append(w.lines, string(b))
	w.last = id
	w.flush()
	snap := map[string]*string{}
	for _, f := range w.files {
		if b, err := os.ReadFile(filepath.Join(w.cwd, f)); err == nil {
			s := string(b)
			snap[f] = &s
		} else {
			snap[f] = nil
		}
	}
	w.snapshot[id] = snap
	return id
}

func (w *world) flush() {
	if err := os.WriteFile(w.session, []byte(strings.Join(w.lines, "\n")+"\n"), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) touch(rel string) {
	for _, f := range w.files {
		if f == rel {
			return
		}
	}
	w.files = append(w.files, rel)
}

func (w *world) user(text string) string {
	return w.entry(map[string]any{"role": "user", "content": text, "timestamp": 1})
}

// call appends an assistant tool call, runs do, and appends its result.
func (w *world) call(name string, args map[string]any, do func() (text string, details any, isErr bool)) string {
	id := fmt.Sprintf("call_%d", w.n)
	w.entry(map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "toolCall", "id": id, "name": name, "arguments": args}}, "timestamp": 1})
	text, details, isErr := do()
	res := map[string]any{"role": "toolResult", "toolCallId": id, "toolName": name, "content": []any{map[string]any{"type": "text", "text": text}}, "isError": isErr, "timestamp": 1}
	if details != nil {
		res["details"] = details
	}
	return w.entry(res)
}

func (w *world) disk(rel string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(w.cwd, rel))
	return string(b), err == nil
}

func (w *world) setDisk(rel, content string) {
	w.t.Helper()
	p := filepath.Join(w.cwd, rel)
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) write(rel, content string) string {
	w.touch(rel)
	return w.call("write", map[string]any{"path": rel, "content": content}, func() (string, any, bool) {
		w.setDisk(rel, content)
		return "Successfully wrote to " + rel, nil, false
	})
}

// edit applies edits as Pi does, with the patch of the change in its details (patch
// false: a result without one, as older tools wrote).
func (w *world) edit(rel string, patch bool, edits ...Edit) string {
	w.touch(rel)
	args := map[string]any{"path": rel, "edits": edits}
	return w.call("edit", args, func() (string, any, bool) {
		before, _ := w.disk(rel)
		after, err := applyEdits(before, edits)
		if err != nil {
			return err.Error(), nil, true
		}
		w.setDisk(rel, after)
		if !patch {
			return "ok", nil, false
		}
		_, b := splitBOM(before)
		_, a := splitBOM(after)
		return "ok", map[string]any{"patch": UnifiedDiff(rel, true, []byte(b), true, []byte(a))}, false
	})
}

func (w *world) read(rel string) string {
	w.touch(rel)
	return w.call("read", map[string]any{"path": rel}, func() (string, any, bool) {
		c, ok := w.disk(rel)
		return c, nil, !ok
	})
}

func (w *world) bash(cmd string, do func()) string {
	return w.call("bash", map[string]any{"command": cmd}, func() (string, any, bool) {
		do()
		return "", nil, false
	})
}

func (w *world) snap() *session.Snapshot {
	w.t.Helper()
	s, err := session.LoadSnapshot(w.session)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// state is every touched file's content on disk now (nil: absent).
func (w *world) state() map[string]*string {
	out := map[string]*string{}
	for _, f := range w.files {
		if c, ok := w.disk(f); ok {
			out[f] = &c
		} else {
			out[f] = nil
		}
	}
	return out
}

func sameState(t *testing.T, what string, got, want map[string]*string) {
	t.Helper()
	for f, w := range want {
		g := got[f]
		switch {
		case (g == nil) != (w == nil):
			t.Errorf("%s: %s exists=%v, want exists=%v", what, f, g != nil, w != nil)
		case g != nil && *g != *w:
			t.Errorf("%s: %s holds %q, want %q", what, f, *g, *w)
		}
	}
}
