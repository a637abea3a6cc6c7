package contextedit

import (
	"context"
	"os"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

func TestMain(m *testing.M) { os.Exit(oracle.Main(m)) }

// TestBreakdownMatchesPi diffs the breakdown and the history against real Pi 1.6.0 on
// every corpus file at a spread of leaves: each kind is the sum, over the messages of
// Pi's own buildSessionContext, of Pi's estimateTokens (an assistant message's estimate
// split over its blocks by their characters, computed in JavaScript from Pi's estimate);
// the total is Pi's estimate of the context; usageTokens is Pi's
// estimateProjectedContextTokens when it rests on usage; and each point of the history
// is the usage Pi counts for the reply, or Pi's projected estimate with that entry as
// the leaf.
func TestBreakdownMatchesPi(t *testing.T) {
	o := oracle.Start(t)
	checked, withHistory := 0, 0
	for _, cf := range oracle.Corpus(t) {
		t.Run(cf.Name, func(t *testing.T) {
			ix := session.NewIndex(cf.Load(t))
			var ids []string
			for _, e := range ix.Entries() {
				ids = append(ids, e.ID)
			}
			for _, li := range oracle.SampleLeaves(len(ids)) {
				if !cf.Safe(li) {
					continue
				}
				var want struct {
					LeafID string `json:"leafId"`
					Total  int    `json:"total"`
					Kinds  map[string]struct {
						Tokens  int `json:"tokens"`
						Entries int `json:"entries"`
					} `json:"kinds"`
					UsageTokens *float64 `json:"usageTokens"`
					Projected   struct {
						Tokens float64 `json:"tokens"`
					} `json:"projected"`
					History []map[string]any `json:"history"`
					IDs     []string         `json:"ids"`
				}
				o.Query(t, map[string]any{"op": "breakdown", "file": cf.Path, "leafIndex": li}, &want)
				path := ix.Path(ids[li])
				b, err := BreakdownOf(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				kinds := map[string]any{}
				sum := 0
				for _, k := range b.Kinds {
					kinds[k.Kind] = map[string]int{"tokens": k.Tokens, "entries": k.Entries}
					sum += k.Tokens
				}
				if sum != b.Total {
					t.Errorf("leaf %d: kinds add up to %d, total %d", li, sum, b.Total)
				}
				oracle.SameJSON(t, "kinds", kinds, want.Kinds, ids, want.IDs)
				oracle.SameJSON(t, "total", b.Total, want.Total, ids, want.IDs)
				oracle.SameJSON(t, "usageTokens", b.UsageTokens, want.UsageTokens, ids, want.IDs)
				if want.UsageTokens == nil && float64(b.Total) != want.Projected.Tokens {
					t.Errorf("leaf %d: total %d, Pi's estimate without usage %v", li, b.Total, want.Projected.Tokens)
				}
				h, err := History(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]map[string]any, len(h))
				for i, p := range h {
					got[i] = map[string]any{"entryId": p.EntryID, "tokens": p.Tokens, "source": p.Source, "event": p.Event}
				}
				oracle.SameJSON(t, "history", got, want.History, ids, want.IDs)
				checked++
				if len(h) > 0 {
					withHistory++
				}
			}
		})
	}
	t.Logf("%d leaves checked, %d with a history", checked, withHistory)
}

// TestSplitAssistantAddsUp: the three parts of an assistant message add up to Pi's
// estimate of it, whatever the mix of blocks.
func TestSplitAssistantAddsUp(t *testing.T) {
	for _, raw := range []string{
		`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"thinking","thinking":"b"},{"type":"toolCall","id":"1","name":"c","arguments":{}}]}`,
		`{"role":"assistant","content":[{"type":"text","text":"hello world"},{"type":"toolCall","id":"1","name":"read","arguments":{"path":"/x/é.go"}}]}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"ponder ponder ponder"}]}`,
		`{"role":"assistant","content":[]}`,
	} {
		m, err := session.DecodeMessage([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		a, b, c := SplitAssistant(m)
		if a+b+c != session.EstimateTokens(m) {
			t.Errorf("%s: %d+%d+%d != %d", raw, a, b, c, session.EstimateTokens(m))
		}
	}
}
