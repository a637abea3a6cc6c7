package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// `compact --dry-run --json` is Pi 1.6.0's prepareCompaction at every sampled leaf of
// every corpus file, at keepRecentTokens 20000, 4000, 1000, 200 and 60: the cut, the
// split, tokensBefore, what would be summarized, the previous summary and the file lists,
// and "nothing to compact" wherever Pi prepares nothing.
func TestCLICompactDryRunMatchesPi16(t *testing.T) {
	o := oracle.Start(t)
	eachCorpusSession(t, func(t *testing.T, cf oracle.CorpusFile, f *session.File, entries []*session.Entry) {
		if f.MigratedFrom == 1 {
			t.Skip("v1 ids are invented anew at each load: no leaf can be named")
		}
		for _, li := range oracle.SampleLeaves(len(entries)) {
			if !cf.Safe(li) {
				continue
			}
			for _, keep := range []int{20000, 4000, 1000, 200, 60} {
				var pi oracle.Prepared
				o.Query(t, map[string]any{"op": "prepare", "file": cf.Path, "leafIndex": li, "keep": keep}, &pi)
				var got map[string]any
				cli(t, &got, "compact", cf.Path, "--dry-run", "--json", "--leaf", entries[li].ID, "--keep-recent", fmt.Sprint(keep))
				where := fmt.Sprintf("leaf #%d keep %d", li, keep)
				if pi.Undefined {
					// Pi's manual compaction says why, in these words.
					reason := "Nothing to compact (session too small)"
					if entries[li].Type == session.TypeCompaction {
						reason = "Already compacted"
					}
					if got["nothingToCompact"] != true || got["reason"] != reason {
						t.Errorf("%s: Pi prepares nothing (%s), pi-lsp: %v", where, reason, got)
					}
					continue
				}
				want := map[string]any{
					"firstKeptEntryId": pi.FirstKeptEntryID, "isSplitTurn": pi.IsSplitTurn, "tokensBefore": pi.TokensBefore,
					"messagesToSummarize": float64(len(pi.MessagesToSummarize)), "turnPrefixMessages": float64(len(pi.TurnPrefixMessages)),
					"previousSummary": pi.PreviousSummary != nil, "readFiles": toAnyList(pi.ReadFiles), "modifiedFiles": toAnyList(pi.ModifiedFiles),
				}
				delete(got, "tokensAfterEstimate") // pi-lsp's own addition
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s:\npi-lsp %v\n    Pi %v", where, got, want)
				}
			}
		}
	})
}

// `navigate --dry-run --json` at budgets 0 (no limit) and 800 is Pi 1.6.0's
// collectEntriesForBranchSummary + prepareBranchEntries: the common ancestor, the
// entries of the branch being left, the messages prepared within the budget, their
// tokens and the file lists.
func TestCLINavigateDryRunMatchesPi16(t *testing.T) {
	o := oracle.Start(t)
	eachCorpusSession(t, func(t *testing.T, cf oracle.CorpusFile, f *session.File, entries []*session.Entry) {
		if f.MigratedFrom == 1 {
			t.Skip("v1 ids are invented anew at each load: no entry can be named")
		}
		n := len(entries)
		if n < 2 {
			t.Skip("nothing to navigate")
		}
		leaves := []int{n - 1, n / 2}
		targets := []int{0, n / 3, 2 * n / 3, n - 2}
		for _, li := range leaves {
			for _, ti := range targets {
				if li == ti || !cf.Safe(li) || !cf.Safe(ti) {
					continue
				}
				for _, budget := range []int{0, 800} {
					var pi oracle.Collected
					where := fmt.Sprintf("leaf #%d target #%d budget %d", li, ti, budget)
					err := o.QueryErr(t, map[string]any{"op": "collect", "file": cf.Path, "leafIndex": li, "targetIndex": ti, "budget": budget}, &pi)
					if err != nil {
						if strings.Contains(err.Error(), "is not iterable") {
							continue // design divergence: Pi throws on a null-content assistant message
						}
						t.Fatalf("%s: oracle: %v", where, err)
					}
					var got map[string]any
					cli(t, &got, "navigate", cf.Path, entries[ti].ID, "--leaf", entries[li].ID, "--dry-run", "--json", "--budget", fmt.Sprint(budget))
					var ca any
					if pi.CommonAncestorID != nil {
						ca = *pi.CommonAncestorID
					}
					want := map[string]any{
						"commonAncestorId": ca, "entries": toAnyList(pi.EntryIDs), "messages": float64(len(pi.Messages)),
						"totalTokens": float64(pi.TotalTokens), "readFiles": toAnyList(pi.ReadFiles), "modifiedFiles": toAnyList(pi.ModifiedFiles),
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s:\npi-lsp %v\n    Pi %v", where, got, want)
					}
				}
			}
		}
	})
}

func toAnyList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
