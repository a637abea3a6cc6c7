package service

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// TestContextBreakdown: the kinds add up to the total, the window is the path's model's
// from Pi's catalog (models.json here) else Pi's default, the reserve the path's
// settings', and the history has a point per reply and event.
func TestContextBreakdown(t *testing.T) {
	t.Setenv("PI_LSP_PI", "-")
	file := filepath.Join(oracle.RepoRoot(), "testdata", "corpus", "genuine-1.6", "compact-twice.jsonl")
	ix := sessiontest.Index(t, file)
	path := ix.LeafPath()
	agent := t.TempDir()
	c := Config{AgentDir: agent}
	b, err := c.ContextBreakdown(context.Background(), BreakdownRequest{Cwd: t.TempDir(), Path: path, History: true}, NoReporter{})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, k := range b.Kinds {
		sum += k.Tokens
	}
	if sum != b.Total || b.Total == 0 {
		t.Errorf("kinds add up to %d, total %d", sum, b.Total)
	}
	if b.ContextWindow != DefaultContextWindow || b.ReserveTokens != 16384 {
		t.Errorf("window %d reserve %d, want Pi's defaults", b.ContextWindow, b.ReserveTokens)
	}
	compactions, replies := 0, 0
	for _, p := range b.History {
		if p.Event == nil {
			replies++
		} else if *p.Event == "compaction" {
			compactions++
		}
	}
	if compactions != 2 || replies == 0 {
		t.Errorf("history: %d compactions, %d replies: %+v", compactions, replies, b.History)
	}

	models := `{"providers":{"fake":{"baseUrl":"http://127.0.0.1:9","api":"openai-completions","apiKey":"x","models":[{"id":"fake-model","contextWindow":32000}]}}}`
	if err := os.WriteFile(filepath.Join(agent, "models.json"), []byte(models), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agent, "settings.json"), []byte(`{"compaction":{"reserveTokens":4000}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err = c.ContextBreakdown(context.Background(), BreakdownRequest{Cwd: t.TempDir(), Path: path}, NoReporter{})
	if err != nil {
		t.Fatal(err)
	}
	if b.ContextWindow != 32000 || b.ReserveTokens != 4000 || b.History != nil {
		t.Errorf("window %d reserve %d history %v, want the catalog's 32000, the settings' 4000, none", b.ContextWindow, b.ReserveTokens, b.History)
	}
	c.SummarizerConfig.ContextWindow = 50000
	if w := c.WindowOfPath(path); w != 50000 {
		t.Errorf("the front end's window: %d", w)
	}
}
