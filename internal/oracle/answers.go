package oracle

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The shapes of the oracle's answers that several packages' tests decode (see
// test/pi/oracle.mjs for all of them).

// Prepared is the answer of op "prepare": Pi's prepareCompaction at a leaf for a
// keepRecentTokens, with the serialized conversation it would summarize. Undefined is
// set where Pi prepares nothing.
type Prepared struct {
	Undefined           bool              `json:"undefined"`
	FirstKeptEntryID    string            `json:"firstKeptEntryId"`
	IsSplitTurn         bool              `json:"isSplitTurn"`
	TokensBefore        float64           `json:"tokensBefore"`
	MessagesToSummarize []json.RawMessage `json:"messagesToSummarize"`
	TurnPrefixMessages  []json.RawMessage `json:"turnPrefixMessages"`
	PreviousSummary     *string           `json:"previousSummary"`
	ReadFiles           []string          `json:"readFiles"`
	ModifiedFiles       []string          `json:"modifiedFiles"`
	Serialized          string            `json:"serialized"`
	SerializedPrefix    string            `json:"serializedPrefix"`
	FormattedFiles      string            `json:"formattedFiles"`
	IDs                 []string          `json:"ids"`
}

// Collected is the answer of op "collect": Pi's collectEntriesForBranchSummary and
// prepareBranchEntries for a (leaf, target) pair and a token budget.
type Collected struct {
	EntryIDs         []string          `json:"entryIds"`
	CommonAncestorID *string           `json:"commonAncestorId"`
	Messages         []json.RawMessage `json:"messages"`
	TotalTokens      int               `json:"totalTokens"`
	ReadFiles        []string          `json:"readFiles"`
	ModifiedFiles    []string          `json:"modifiedFiles"`
	Serialized       string            `json:"serialized"`
	IDs              []string          `json:"ids"`
}

// SameJSON fails the test (without stopping it) unless got and want are the same JSON
// value once the entry ids of each side (gotIDs, wantIDs) are replaced by their index,
// so files whose ids were invented by a migration compare by position.
func SameJSON(t testing.TB, what string, got, want any, gotIDs, wantIDs []string) {
	t.Helper()
	g := NormalizeIDs(JSONValue(t, got), gotIDs)
	w := NormalizeIDs(JSONValue(t, want), wantIDs)
	if !reflect.DeepEqual(g, w) {
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		t.Errorf("%s differs from Pi\n got: %.1500s\nwant: %.1500s", what, gb, wb)
	}
}

// PiLoad is the answer of op "piload": what Pi's SessionManager made of a file it
// opened (a copy): the entries, the leaf and the context it builds.
type PiLoad struct {
	LeafID     *string           `json:"leafId"`
	Messages   []json.RawMessage `json:"messages"`
	EntryCount int               `json:"entryCount"`
	// NewSession: Pi did not recognise the header and started a new session.
	NewSession bool `json:"newSession"`
	// Rewritten: Pi rewrote the file on open.
	Rewritten bool     `json:"rewritten"`
	IDs       []string `json:"ids"`
}

// PiLoad asks Pi to open the session file at path (op "piload").
func (o *Oracle) PiLoad(t testing.TB, path string) PiLoad {
	t.Helper()
	var out PiLoad
	o.Query(t, map[string]any{"op": "piload", "file": path}, &out)
	return out
}
