package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// "Summarize up to here": `compact --keep-from ID` on copies of genuine Pi 1.6.0
// sessions, at a user message, at an assistant message inside a turn (a split turn)
// and at the first message after a compaction, writes a compaction whose kept part
// starts at the chosen entry, and Pi 1.6.0's library builds exactly the context
// `pi-lsp context` reports. A tool result is refused, with the nearest valid cuts.
func TestCompactKeepFromMatchesPi16(t *testing.T) {
	o := oracle.NeedLive(t)
	for _, file := range []string{"system-tools.jsonl", "compact-twice.jsonl", "auto-threshold.jsonl"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "genuine-1.6", file))
		if err != nil {
			t.Fatal(err)
		}
		ordered := contextOrder(t, writeTemp(t, file, data))
		pick := map[string]string{}
		// The latest of each kind: the earliest would leave nothing to summarize.
		for i := len(ordered) - 1; i > 0; i-- {
			m := ordered[i]
			switch {
			case m.role == session.RoleUser && pick["user"] == "":
				pick["user"] = m.id
			case m.role == session.RoleAssistant && ordered[i-1].role == session.RoleToolResult && pick["split"] == "":
				pick["split"] = m.id
			case m.role == session.RoleToolResult && pick["toolResult"] == "":
				pick["toolResult"] = m.id
			}
		}
		for _, what := range []string{"user", "split"} {
			id := pick[what]
			if id == "" {
				continue
			}
			t.Run(file+"/"+what, func(t *testing.T) {
				isolate.Setup(t)
				path := writeTemp(t, file, data)
				var dry struct {
					FirstKept string `json:"firstKeptEntryId"`
					Split     bool   `json:"isSplitTurn"`
				}
				cli(t, &dry, "compact", path, "--keep-from", id, "--dry-run", "--json")
				if dry.FirstKept != id || dry.Split != (what == "split") {
					t.Errorf("dry run: %+v", dry)
				}
				var written json.RawMessage
				cli(t, &written, "compact", path, "--keep-from", id, "--summarizer", "extractive", "--json")
				last := sessiontest.Last(t, path)
				if last.Type != session.TypeCompaction || last.Compaction().FirstKeptEntryID != id {
					t.Fatalf("last entry %s", last.Raw())
				}
				msgs, _ := sameContextAsPi(t, o, path, "compact --keep-from "+id)
				summaries := 0
				for _, m := range msgs {
					if strings.Contains(string(m), `"role":"compactionSummary"`) {
						summaries++
					}
				}
				if summaries != 1 {
					t.Errorf("%d compaction summaries in the context", summaries)
				}
			})
		}
		if id := pick["toolResult"]; id != "" {
			t.Run(file+"/toolResult", func(t *testing.T) {
				isolate.Setup(t)
				path := writeTemp(t, file, data)
				code, _, errb := runCLI(t, "compact", path, "--keep-from", id, "--summarizer", "extractive")
				if code != 1 || !strings.Contains(errb, "tool result") || !strings.Contains(errb, "nearest valid cuts are") {
					t.Errorf("exit %d: %s", code, errb)
				}
				if got, _ := os.ReadFile(path); string(got) != string(data) {
					t.Error("a refused compaction wrote")
				}
			})
		}
	}
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type ctxMsg struct{ id, role string }

// contextOrder is the context's entries in order with their message's role.
func contextOrder(t *testing.T, path string) []ctxMsg {
	t.Helper()
	ix := sessiontest.Index(t, path)
	proj := session.ProjectPath(ix.LeafPath())
	var out []ctxMsg
	for _, u := range proj.Entries {
		if len(u.Messages) == 0 || u.Entry.Type != session.TypeMessage {
			continue
		}
		out = append(out, ctxMsg{u.Entry.ID, u.Messages[0].Role})
	}
	return out
}
