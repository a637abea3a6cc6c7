package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// undo-compaction names the entries written after the compaction, which stay on a side
// branch, and how to get back to them; --json lists them.
func TestUndoCompactionSideBranch(t *testing.T) {
	path := isolatedCopy(t, "genuine/compact-twice.jsonl")
	code, out, errOut := runCLI(t, "undo-compaction", path, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m struct {
		CompactionID string          `json:"compactionId"`
		LeafID       string          `json:"leafId"`
		Position     string          `json:"position"`
		MarkerEntry  any             `json:"markerEntry"`
		SideBranch   []rpc.SideEntry `json:"sideBranch"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	want := []rpc.SideEntry{
		{EntryHead: rpc.EntryHead{ID: "cf45f48f", Type: "message", Role: "user"}, Description: "user: SCRIPT:chat one more after two compactions"},
		{EntryHead: rpc.EntryHead{ID: "03577fa2", Type: "message", Role: "assistant"}},
	}
	if m.CompactionID != "863e33c2" || m.Position != "487b4360" || m.MarkerEntry == nil || len(m.SideBranch) != 2 {
		t.Fatalf("output %s", out)
	}
	for i, w := range want {
		g := m.SideBranch[i]
		if g.ID != w.ID || g.Type != w.Type || g.Role != w.Role || (w.Description != "" && g.Description != w.Description) || g.Description == "" {
			t.Errorf("sideBranch[%d] %+v, want %+v", i, g, w)
		}
	}

	// The text form, and the way back it names.
	path = corpus.Copy(t, "genuine/compact-twice.jsonl")
	wantCtx := sessiontest.Index(t, path).BuildContext("").Messages
	code, out, errOut = runCLI(t, "undo-compaction", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	line := "2 entries written after the compaction (cf45f48f user: SCRIPT:chat one more after two co…, 03577fa2 assistant: chat reply: "
	back := "stay on a side branch; pi-lsp navigate " + path + " 03577fa2 returns to them\n"
	if !strings.Contains(out, line) || !strings.HasSuffix(out, back) {
		t.Fatalf("output %q", out)
	}
	if code, _, errOut := runCLI(t, "navigate", path, "03577fa2"); code != 0 {
		t.Fatalf("navigate back: exit %d %s", code, errOut)
	}
	got := sessiontest.Index(t, path).BuildContext("").Messages
	if len(got) != len(wantCtx) {
		t.Fatalf("after navigating back: %d messages, want %d", len(got), len(wantCtx))
	}
	for i := range got {
		if !bytes.Equal(got[i].Raw(), wantCtx[i].Raw()) {
			t.Errorf("message %d differs after navigating back", i)
		}
	}
}

func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b-c_d.jsonl": "/a/b-c_d.jsonl",
		"/a b/c":         "'/a b/c'",
		"it's":           `'it'\''s'`,
		"":               "''",
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %q, want %q", in, got, want)
		}
	}
}
