package compaction_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
	"reflect"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
)

// liveOracle returns the live Pi oracle. Answers about temp files cannot come from
// goldens, so without Node and Pi the test is skipped, or fails when
// PI_LSP_REQUIRE_ORACLE=1.
func liveOracle(t *testing.T) *oracle.Oracle { t.Helper(); return oracle.NeedLive(t) }

func decodeAll(t *testing.T, raws []json.RawMessage) []any {
	t.Helper()
	out := make([]any, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A compaction written by pi-lsp, then loaded by real Pi 0.73.1 (SessionManager.open +
// buildSessionContext): Pi's context is the summary plus the kept suffix, exactly as
// pi-lsp's context reports it.
func TestPiLoadsOurCompaction(t *testing.T) {
	o := liveOracle(t)
	cases := []struct {
		file  string
		keeps []int
	}{
		{"genuine/full-main.jsonl", []int{1, 100, 250}},
		{"genuine/misc-messages.jsonl", []int{120, 200}},
		{"genuine/auto-threshold.jsonl", []int{20, 200}},
		{"genuine/compact-twice.jsonl", []int{20}},
		{"genuine/tree-nav.jsonl", []int{20}},
		{"genuine/overflow.jsonl", []int{100}},
		{"genuine/full-fork.jsonl", []int{80}},
		{"synthetic/spec-10-3-iterative.jsonl", []int{150}},
		{"synthetic/spec-10-4-dropped-summary.jsonl", []int{300}},
	}
	for _, tc := range cases {
		for _, keep := range tc.keeps {
			for _, how := range []string{"extractive", "hook"} {
				t.Run(fmt.Sprintf("%s/keep=%d/%s", tc.file, keep, how), func(t *testing.T) {
					path := corpusCopy(t, tc.file)
					opt := compaction.RunOptions{Settings: settings(keep, 16384), Summarizer: compaction.Extractive{},
						Options: compaction.Options{CustomInstructions: "focus on the files"}}
					if how == "hook" {
						opt.Hook = func(ctx context.Context, p *compaction.Preparation) (compaction.HookDecision, error) {
							return compaction.HookDecision{Outcome: &compaction.Outcome{
								Summary: "## Goal\nSummary written by the editor for " + p.FirstKeptEntryID, FirstKeptEntryID: p.FirstKeptEntryID,
								TokensBefore: p.TokensBefore}}, nil
						}
					}
					res, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), opt)
					if err != nil {
						t.Fatal(err)
					}
					pi := o.PiLoad(t, path)
					ix := sessiontest.Index(t, path)
					c := ix.BuildContext("")
					if pi.Rewritten {
						t.Errorf("Pi rewrote the file on open")
					}
					if pi.LeafID == nil || *pi.LeafID != res.Entry.ID || ix.LeafID() != res.Entry.ID {
						t.Errorf("leaf: Pi %v, pi-lsp %s, new entry %s", pi.LeafID, ix.LeafID(), res.Entry.ID)
					}
					if len(pi.IDs) != len(ix.Entries()) {
						t.Errorf("Pi sees %d entries, pi-lsp %d", len(pi.IDs), len(ix.Entries()))
					}
					ours := make([]json.RawMessage, len(c.Messages))
					for i, m := range c.Messages {
						ours[i] = m.Raw()
					}
					if got, want := decodeAll(t, ours), decodeAll(t, pi.Messages); !reflect.DeepEqual(got, want) {
						gb, _ := json.Marshal(got)
						wb, _ := json.Marshal(want)
						t.Fatalf("context differs from real Pi's\npi-lsp: %.2000s\n    Pi: %.2000s", gb, wb)
					}
					var first struct {
						Role         string  `json:"role"`
						Summary      string  `json:"summary"`
						TokensBefore float64 `json:"tokensBefore"`
					}
					if len(pi.Messages) == 0 {
						t.Fatal("Pi's context is empty")
					}
					if err := json.Unmarshal(pi.Messages[0], &first); err != nil {
						t.Fatal(err)
					}
					if first.Role != "compactionSummary" || first.Summary != res.Outcome.Summary || first.TokensBefore != res.Outcome.TokensBefore {
						t.Errorf("Pi's first message: %s", pi.Messages[0])
					}
					// The rest is the kept suffix, verbatim.
					kept := res.Preparation.KeptMessages()
					if len(pi.Messages) != 1+len(kept) {
						t.Errorf("Pi's context has %d messages, want summary + %d kept", len(pi.Messages), len(kept))
					} else if got, want := decodeAll(t, pi.Messages[1:]), decodeAll(t, raws(kept)); !reflect.DeepEqual(got, want) {
						t.Errorf("Pi's kept suffix differs from the preparation's kept messages")
					}
				})
			}
		}
	}
}
