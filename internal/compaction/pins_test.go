package compaction_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

func pinnedOf(t *testing.T, path string) []string {
	t.Helper()
	f, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ix := session.NewIndex(f)
	return ix.PinnedTexts(ix.Path(ix.LeafID()))
}

func appendTurn(t *testing.T, path, text string) {
	t.Helper()
	ix, taken := sessiontest.ForAppend(t, path)
	body := strings.Repeat(text+" ", 40)
	_, err := session.Append(path, taken, []session.NewEntry{
		{Type: session.TypeMessage, ParentID: ix.LeafID(), Fields: []session.Field{{Key: "message", Value: map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": body}}, "timestamp": 1795957400000}}}},
		{Type: session.TypeMessage, ParentID: session.ChainToPrevious, Fields: []session.Field{{Key: "message", Value: map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "done: " + body}}, "provider": "fake", "model": "fake-model", "stopReason": "stop", "timestamp": 1795957400001}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPinnedConstraintSurvivesThreeCompactions pins a user message of a genuine Pi
// session and compacts three times: every summary quotes it verbatim.
func TestPinnedConstraintSurvivesThreeCompactions(t *testing.T) {
	path := copyGenuine(t, "full-main.jsonl")
	users := sessiontest.UserMessages(sessiontest.Index(t, path))
	if len(users) == 0 {
		t.Fatal("no user message")
	}
	pinID, pinText := users[0].ID, users[0].Text
	if _, err := branch.SetPin(path, pinID, true); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 3; round++ {
		appendTurn(t, path, "round")
		pins := pinnedOf(t, path)
		if len(pins) != 1 || pins[0] != pinText {
			t.Fatalf("round %d: pins %q", round, pins)
		}
		res, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{
			Options:    compaction.Options{Pinned: pins},
			Settings:   session.CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 60},
			Summarizer: compaction.Extractive{},
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !strings.Contains(res.Outcome.Summary, pinText) || len(res.Outcome.Audit.MissingPinned) != 0 {
			t.Fatalf("round %d: the pinned message is not quoted:\n%s", round, res.Outcome.Summary)
		}
	}
}

// forgetful drops everything: its summaries never quote pins.
type forgetful struct{}

func (forgetful) Name() string { return "forgetful" }
func (forgetful) Summarize(ctx context.Context, r compaction.Request) (compaction.Result, error) {
	return compaction.Result{Text: "## Goal\nsomething"}, nil
}

func TestSummaryDroppingAPinIsRefusedUnlessAccepted(t *testing.T) {
	path := copyGenuine(t, "full-main.jsonl")
	before, _ := os.ReadFile(path)
	opt := compaction.RunOptions{
		Options:    compaction.Options{Pinned: []string{"never use tabs"}},
		Settings:   session.CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 60},
		Summarizer: forgetful{},
	}
	_, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), opt)
	if !errors.Is(err, compaction.ErrPinnedDropped) {
		t.Fatalf("err = %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("a refused summary was written")
	}
	opt.AllowDroppedPins = true
	if _, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), opt); err != nil {
		t.Fatalf("accepted: %v", err)
	}
}
