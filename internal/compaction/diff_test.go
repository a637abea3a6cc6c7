package compaction_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

func TestMain(m *testing.M) { os.Exit(oracle.Main(m)) }

func raws(ms []*session.Message) []json.RawMessage {
	out := make([]json.RawMessage, len(ms))
	for i, m := range ms {
		out[i] = m.Raw()
	}
	return out
}

// keepValues include tiny budgets that force split turns and large ones that keep all.
// The values issue acceptance names (20000, 4000, 1000, 200, 60) and a few edges.
var keepValues = []int{1, 60, 150, 200, 1000, 4000, 20000}

// TestPrepareMatchesPi diffs findCutPoint, prepareCompaction and serializeConversation
// with real Pi 1.6.0 on the whole corpus, for many leaves and keepRecentTokens values.
func TestPrepareMatchesPi(t *testing.T) {
	o := oracle.Start(t)
	for _, cf := range oracle.Corpus(t) {
		t.Run(cf.Name, func(t *testing.T) {
			ix := session.NewIndex(cf.Load(t))
			ids := make([]string, len(ix.Entries()))
			for i, e := range ix.Entries() {
				ids[i] = e.ID
			}
			for _, li := range oracle.SampleLeaves(len(ids)) {
				if !cf.Safe(li) {
					continue
				}
				path := ix.Path(ids[li])
				for _, keep := range keepValues {
					req := map[string]any{"file": cf.Path, "leafIndex": li, "keep": keep}
					var cut struct {
						FirstKeptEntryIndex int      `json:"firstKeptEntryIndex"`
						TurnStartIndex      int      `json:"turnStartIndex"`
						IsSplitTurn         bool     `json:"isSplitTurn"`
						IDs                 []string `json:"ids"`
					}
					req["op"] = "cut"
					o.Query(t, req, &cut)
					got := compaction.FindCutPoint(path, 0, len(path), keep)
					if got.FirstKeptIndex != cut.FirstKeptEntryIndex || got.TurnStartIndex != cut.TurnStartIndex || got.IsSplitTurn != cut.IsSplitTurn {
						t.Errorf("leaf %d keep %d: findCutPoint = %+v, Pi %+v", li, keep, got, cut)
					}

					var want oracle.Prepared
					req["op"] = "prepare"
					o.Query(t, req, &want)
					p, err := compaction.Prepare(path, session.CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: keep})
					if want.Undefined {
						if err == nil {
							t.Errorf("leaf %d keep %d: Pi prepares nothing, pi-lsp prepared %s", li, keep, p.FirstKeptEntryID)
						}
						continue
					}
					if err != nil {
						t.Errorf("leaf %d keep %d: %v (Pi prepared)", li, keep, err)
						continue
					}
					read, mod := p.FileOps.Lists()
					var prev *string
					if p.HasPrevious {
						prev = &p.PreviousSummary
					}
					oracle.SameJSON(t, "preparation", map[string]any{
						"firstKeptEntryId": p.FirstKeptEntryID, "isSplitTurn": p.IsSplitTurn, "tokensBefore": p.TokensBefore,
						"messagesToSummarize": raws(p.MessagesToSummarize), "turnPrefixMessages": raws(p.TurnPrefixMessages),
						"previousSummary": prev, "readFiles": read, "modifiedFiles": mod,
						"serialized":       compaction.SerializeAgentMessages(p.MessagesToSummarize),
						"serializedPrefix": compaction.SerializeAgentMessages(p.TurnPrefixMessages),
						"formattedFiles":   fileops.Format(read, mod),
					}, map[string]any{
						"firstKeptEntryId": want.FirstKeptEntryID, "isSplitTurn": want.IsSplitTurn, "tokensBefore": want.TokensBefore,
						"messagesToSummarize": want.MessagesToSummarize, "turnPrefixMessages": want.TurnPrefixMessages,
						"previousSummary": want.PreviousSummary, "readFiles": want.ReadFiles, "modifiedFiles": want.ModifiedFiles,
						"serialized": want.Serialized, "serializedPrefix": want.SerializedPrefix, "formattedFiles": want.FormattedFiles,
					}, ids, want.IDs)
				}
			}
		})
	}
}
