package service

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/rewind"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

// cancelAt cancels its job when the job reports its n-th file.
type cancelAt struct {
	n, seen int
	cancel  func()
}

func (c *cancelAt) Report(msg string, _ int) {
	if strings.HasPrefix(msg, "rewinding ") {
		c.seen++
		if c.seen == c.n {
			c.cancel()
		}
	}
}
func (c *cancelAt) Notice(string) {}

// A rewind cancelled while it writes the files puts back every one it wrote, keeps
// nothing, and leaves the session as it was (on the recording of Pi 1.6.0 of
// testdata/rewind).
func TestRewindCancelledMidwayChangesNothing(t *testing.T) {
	isolate.Setup(t)
	dir := filepath.Join(oracle.RepoRoot(), "testdata", "rewind", "agent-edits")
	session, err := os.ReadFile(filepath.Join(dir, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var marks []struct {
		Entry string             `json:"entry"`
		Files map[string]*string `json:"files"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "marks.json"))
	if err := json.Unmarshal(data, &marks); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	ws := filepath.Join(root, "project")
	for f, c := range marks[len(marks)-1].Files {
		if c == nil {
			continue
		}
		_ = os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, f), []byte(*c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(root, "s.jsonl")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(string(session), "/tmp/pi-lsp-rewind/project", ws)), 0o644); err != nil {
		t.Fatal(err)
	}
	state := func() map[string]string {
		out := map[string]string{}
		for f := range marks[0].Files {
			b, err := os.ReadFile(filepath.Join(ws, f))
			if err == nil {
				out[f] = string(b)
			}
		}
		return out
	}
	before := state()
	for n := 2; n <= 4; n++ {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := Config{}.Rewind(ctx, RewindRequest{Session: file, EntryID: marks[0].Entry, Mode: RewindBoth}, &cancelAt{n: n, cancel: cancel})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled at file %d: %v", n, err)
		}
		after := state()
		for f, b := range before {
			if after[f] != b {
				t.Errorf("cancelled at file %d: %s holds %q, want %q", n, f, after[f], b)
			}
		}
		if len(after) != len(before) {
			t.Errorf("cancelled at file %d: files %v, want %v", n, after, before)
		}
		if s, _ := os.ReadFile(file); string(s) != strings.ReplaceAll(string(session), "/tmp/pi-lsp-rewind/project", ws) {
			t.Errorf("cancelled at file %d: the session changed", n)
		}
		if id, _ := rewind.Last("", file); id != "" {
			t.Errorf("cancelled at file %d: rewind %s left to undo", n, id)
		}
	}
}
