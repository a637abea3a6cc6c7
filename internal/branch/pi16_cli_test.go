package branch

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// The real pi 1.6.0 CLI takes every other kind of entry pi-lsp writes (a branch summary,
// a navigation without summary, a label, an undone compaction, a pin) on a genuine 1.6.0
// session as its own: it opens the file with the context pi-lsp reports (by count and
// roles), answers get_session_stats, and for the next user message sends the prompt and
// every tool without declaring the tools again.
func TestPi16CLITakesOurEntries(t *testing.T) {
	o := oracle.Start(t)
	_ = o
	src := func(name string) string {
		return filepath.Join(oracle.RepoRoot(), "testdata", "corpus", "genuine-1.6", name)
	}
	cases := []struct {
		name  string
		file  string
		write func(t *testing.T, path string, ix *session.Index)
	}{
		{"branch summary", "tree-nav.jsonl", func(t *testing.T, path string, ix *session.Index) {
			if _, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), ix.Entries()[6].ID, NavigateOptions{Summarize: true, Summarizer: compaction.Extractive{}, Label: "back"}); err != nil {
				t.Fatal(err)
			}
		}},
		{"navigation without summary", "tree-nav.jsonl", func(t *testing.T, path string, ix *session.Index) {
			if _, err := Navigate(context.Background(), sessiontest.Snapshot(t, path), ix.Entries()[6].ID, NavigateOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"label", "system-tools.jsonl", func(t *testing.T, path string, ix *session.Index) {
			if _, err := SetLabel(path, ix.LeafID(), "checkpoint"); err != nil {
				t.Fatal(err)
			}
		}},
		{"pin", "system-tools.jsonl", func(t *testing.T, path string, ix *session.Index) {
			if _, err := SetPin(path, ix.Entries()[4].ID, true); err != nil {
				t.Fatal(err)
			}
		}},
		{"undo compaction", "compact-twice.jsonl", func(t *testing.T, path string, ix *session.Index) {
			if _, err := UndoCompaction(context.Background(), sessiontest.Snapshot(t, path), ""); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := copyTo(t, src(tc.file))
			tc.write(t, path, sessiontest.Index(t, path))
			c := sessiontest.Index(t, path).BuildContext("")
			r := oracle.InspectPrompt(t, path, "SCRIPT:chat CHARS=40 next")
			var roles []string
			for _, m := range c.Messages {
				roles = append(roles, m.Role)
			}
			if len(r.Roles) != len(roles) {
				t.Errorf("Pi's context roles %v, pi-lsp's %v", r.Roles, roles)
			} else {
				for i := range roles {
					if roles[i] != r.Roles[i] {
						t.Errorf("Pi's context roles %v, pi-lsp's %v", r.Roles, roles)
						break
					}
				}
			}
			if r.Stats == nil || r.Stats["tokens"] == nil {
				t.Errorf("get_session_stats: %v", r.Stats)
			}
			sys := session.CurrentSystemMessage(c.Messages)
			if sys == nil || r.Request == nil || len(r.Request.Tools) == 0 || r.Request.System == "" {
				t.Fatalf("no prompt or tools in the next request: %+v", r.Request)
			}
			for _, a := range r.Request.RedeclaredTools() {
				t.Errorf("Pi declared tools again: %.200s", a)
			}
		})
	}
}
