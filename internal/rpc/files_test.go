package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// pi/files and pi/fileOps: the files the agent read or changed, and which of them
// changed on disk since.

// TestStaleFileIsFlagged changes a file the agent read and waits for pi/fileOps to list it.
func TestStaleFileIsFlagged(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"}})
	notes := filepath.Join(e.Workspace, "notes.txt")
	if err := os.WriteFile(notes, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readAt := time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05.000Z")
	lines := []string{
		`{"type":"session","version":3,"id":"stale-test","timestamp":"2026-01-01T00:00:00.000Z","cwd":` + quote(e.Workspace) + `}`,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"read notes","timestamp":1}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"notes.txt"}}],"stopReason":"toolUse","timestamp":2}}`,
		`{"type":"message","id":"t1","parentId":"a1","timestamp":"` + readAt + `","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"alpha\n"}],"isError":false,"timestamp":3}}`,
	}
	path := filepath.Join(e.SessionDir, "2026-01-01T00-00-00-000Z_stale-test.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Call("pi/selectSession", map[string]any{"path": path}); err != nil {
		t.Fatal(err)
	}
	// Same content as what was read: not stale even though the mtime is newer.
	raw, err := e.Call("pi/files", map[string]any{})
	if err != nil || !strings.Contains(string(raw), `"stale":[]`) {
		t.Fatalf("unchanged file flagged: %s %v", raw, err)
	}
	mark := e.Mark()
	if err := os.WriteFile(notes, []byte("changed after the agent read it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Await(10*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/fileOps", "notes.txt is stale", func(p json.RawMessage) bool {
		var v struct {
			Stale []struct{ Path, Reason string }
		}
		json.Unmarshal(p, &v)
		for _, s := range v.Stale {
			if s.Path == "notes.txt" && s.Reason == "modified" {
				return true
			}
		}
		return false
	})))
	raw, err = e.Call("pi/files", map[string]any{})
	if err != nil || !strings.Contains(string(raw), `"stale":[{"path":"notes.txt"`) {
		t.Fatalf("pi/files: %s %v", raw, err)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
