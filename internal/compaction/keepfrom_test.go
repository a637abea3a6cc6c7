package compaction

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// The cut a user chooses: kept from exactly that entry, a split turn inside a turn,
// and refusals that say why and name the nearest valid cuts.
func TestPrepareFrom(t *testing.T) {
	ix := sessiontest.Index(t, filepath.Join("..", "..", "testdata", "corpus", "genuine-1.6", "compact-twice.jsonl"))
	path := ix.LeafPath()
	s := session.DefaultCompactionSettings
	p, err := PrepareFrom(path, s, "823caedf") // the user message after the last compaction
	if err != nil || p.FirstKeptEntryID != "823caedf" || p.IsSplitTurn || !p.HasPrevious {
		t.Fatalf("%v %+v", err, p)
	}
	p, err = PrepareFrom(path, s, "3067e566") // the assistant answering it: a split turn
	if err != nil || p.FirstKeptEntryID != "3067e566" || !p.IsSplitTurn || len(p.TurnPrefixMessages) != 1 {
		t.Fatalf("%v %+v", err, p)
	}
	// Summarized already: not in the context.
	var ce *CutError
	if _, err = PrepareFrom(path, s, "8a55990c"); !errors.As(err, &ce) || ce.Reason == "" {
		t.Errorf("summarized entry: %v", err)
	}
	// A tool result, between its call and the next answer.
	tools := sessiontest.Index(t, filepath.Join("..", "..", "testdata", "corpus", "genuine-1.6", "system-tools.jsonl")).LeafPath()
	_, err = PrepareFrom(tools, s, "3fdef8ea")
	if !errors.As(err, &ce) || ce.Before != "c8de8e1a" || ce.After != "c3cfdd52" {
		t.Errorf("tool result: %v", err)
	}
	if _, err := PrepareFrom(path, s, "nope"); !errors.Is(err, ErrNotOnPath) {
		t.Errorf("unknown entry: %v", err)
	}
}
