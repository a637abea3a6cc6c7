package rpc_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// breakdownOfFile is the breakdown and history of a session file's leaf, computed
// from the file, not through the server.
func breakdownOfFile(t *testing.T, path string) (*contextedit.Breakdown, []contextedit.SizePoint) {
	t.Helper()
	leafPath := sessiontest.Index(t, path).LeafPath()
	b, err := contextedit.BreakdownOf(context.Background(), leafPath)
	if err != nil {
		t.Fatal(err)
	}
	h, err := contextedit.History(context.Background(), leafPath)
	if err != nil {
		t.Fatal(err)
	}
	return b, h
}

// sameBreakdown fails unless the server's answer is the file's breakdown.
func sameBreakdown(t *testing.T, what string, got rpc.ContextBreakdownResult, path string) {
	t.Helper()
	b, h := breakdownOfFile(t, path)
	sum := 0
	for _, k := range got.Kinds {
		sum += k.Tokens
	}
	if sum != got.Total || got.Total != b.Total || lsptest.Str(got.LeafID) != b.LeafID {
		t.Errorf("%s: kinds add up to %d, total %d, leaf %s; the file's: total %d, leaf %s", what, sum, got.Total, lsptest.Str(got.LeafID), b.Total, b.LeafID)
	}
	gj, _ := json.Marshal(got.Kinds)
	wj, _ := json.Marshal(b.Kinds)
	if string(gj) != string(wj) {
		t.Errorf("%s: kinds %s, the file's %s", what, gj, wj)
	}
	gj, _ = json.Marshal(got.History)
	wj, _ = json.Marshal(h)
	if string(gj) != string(wj) {
		t.Errorf("%s: history %s, the file's %s", what, gj, wj)
	}
}

// TestContextBreakdownAndUsageAfterCompaction: pi/contextBreakdown is the breakdown of
// the session's leaf, with Pi's default window, the threshold and the history; after a
// compaction pi/contextUsage has no usage (as Pi) but carries Pi's estimate, marked as
// one, and the history ends with the compaction (its figure before and after); the next
// reply brings usage back, and the answer follows the file as it grows.
func TestContextBreakdownAndUsageAfterCompaction(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	e, path := compactEnv(t, llm, lsptest.Config{})
	got, err := e.ContextBreakdown(map[string]any{"history": true})
	if err != nil {
		t.Fatal(err)
	}
	sameBreakdown(t, "before", got, path)
	if got.ContextWindow != 128000 || got.Threshold == nil || *got.Threshold != got.ContextWindow-got.ReserveTokens || len(got.History) == 0 {
		t.Errorf("window %d, reserve %d, threshold %v, %d points", got.ContextWindow, got.ReserveTokens, got.Threshold, len(got.History))
	}

	mark := e.Mark()
	if _, err := e.Compact(nil); err != nil {
		t.Fatal(err)
	}
	after, err := e.ContextBreakdown(map[string]any{"history": true})
	if err != nil {
		t.Fatal(err)
	}
	sameBreakdown(t, "after the compaction", after, path)
	last := after.History[len(after.History)-1]
	if last.Event == nil || *last.Event != contextedit.EventCompaction || last.TokensBefore == nil || last.Source != contextedit.SourceEstimate {
		t.Errorf("the history does not end with the compaction: %+v", last)
	}
	if after.UsageTokens != nil {
		t.Errorf("usage after a compaction: %v", *after.UsageTokens)
	}
	var u rpc.ContextUsage
	e.Await(10*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/contextUsage", "an estimate after the compaction",
		func(p json.RawMessage) bool {
			var n rpc.ContextUsage
			if json.Unmarshal(p, &n) != nil || n.Tokens != nil || n.Estimate == nil {
				return false
			}
			u = n
			return true
		})))
	if *u.Estimate != float64(after.Total) || u.Source != contextedit.SourceEstimate {
		t.Errorf("pi/contextUsage after the compaction: estimate %v source %q, breakdown total %d", *u.Estimate, u.Source, after.Total)
	}

	if c, err := e.Context(nil); err != nil || c.Tokens != nil || c.Estimate == nil || *c.Estimate != float64(after.Total) || c.Source != contextedit.SourceEstimate {
		t.Errorf("pi/context after the compaction: %+v, %v", c, err)
	}

	mark = e.Mark()
	now := time.Now().UnixMilli()
	if _, err := appendTurn(e, now, "and now?", "done", 900, "stop", ""); err != nil {
		t.Fatal(err)
	}
	e.Await(10*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/contextUsage", "usage again",
		func(p json.RawMessage) bool {
			var u rpc.ContextUsage
			return json.Unmarshal(p, &u) == nil && u.Tokens != nil && *u.Tokens == 940 && u.Estimate == nil && u.Source == contextedit.SourceUsage
		})))
	grown, err := e.ContextBreakdown(map[string]any{"history": true})
	if err != nil {
		t.Fatal(err)
	}
	sameBreakdown(t, "after a reply", grown, path)
	if len(grown.History) != len(after.History)+1 || grown.History[len(grown.History)-1].Tokens != 940 || grown.UsageTokens == nil || *grown.UsageTokens != 940 {
		t.Errorf("after a reply: %d points (was %d), last %+v, usage %v", len(grown.History), len(after.History), grown.History[len(grown.History)-1], grown.UsageTokens)
	}
	if noHistory, err := e.ContextBreakdown(nil); err != nil || noHistory.History != nil {
		t.Errorf("without history: %v, %v", noHistory.History, err)
	}
}
