package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// keys lists the keys of a JSON object, sorted.
func keys(m map[string]json.RawMessage) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}

func TestNavigateCLIDryRunJSON(t *testing.T) {
	path := isolatedCopy(t, "genuine/tree-nav.jsonl")
	before, _ := os.ReadFile(path)
	var m map[string]json.RawMessage
	cli(t, &m, "navigate", path, "3a43cb87", "--dry-run", "--json", "--budget", "0")
	if got := keys(m); !reflect.DeepEqual(got, []string{"commonAncestorId", "entries", "messages", "modifiedFiles", "readFiles", "totalTokens"}) {
		t.Errorf("keys %v", got)
	}
	if string(m["commonAncestorId"]) != `"5b9d65c4"` || string(m["entries"]) != `["49e8fc56","d8f5490c","9e8d20a8"]` || string(m["messages"]) != "2" {
		t.Errorf("output %s", m)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a dry run wrote to the file")
	}
	// Human-readable form.
	code, out, _ := runCLI(t, "navigate", path, "3a43cb87", "--dry-run")
	if code != 0 || !strings.Contains(out, "common ancestor 5b9d65c4") {
		t.Errorf("exit %d: %s", code, out)
	}
}

func TestNavigateCLISummarizeJSON(t *testing.T) {
	path := isolatedCopy(t, "genuine/tree-nav.jsonl")
	var m map[string]json.RawMessage
	cli(t, &m, "navigate", path, "aef84878", "--summarize", "--json", "--instructions", "focus on notes")
	if got := keys(m); !reflect.DeepEqual(got, []string{"editorText", "leafId", "summaryEntry"}) {
		t.Errorf("keys %v", got)
	}
	last := sessiontest.Last(t, path)
	if string(m["leafId"]) != `"`+last.ID+`"` || last.Type != session.TypeBranchSummary {
		t.Errorf("leafId %s, last entry %s", m["leafId"], last.Raw())
	}
	var se, raw any
	_ = json.Unmarshal(m["summaryEntry"], &se)
	_ = json.Unmarshal(last.Raw(), &raw)
	if !reflect.DeepEqual(se, raw) {
		t.Errorf("summaryEntry %s\nfile %s", m["summaryEntry"], last.Raw())
	}
	b := last.BranchSummary()
	if b.FromID != "9e8d20a8" || last.ParentID != "5b9d65c4" || string(m["editorText"]) != `"SCRIPT:tools second question with tools"` {
		t.Errorf("entry %s editorText %s", last.Raw(), m["editorText"])
	}
}

func TestNavigateCLINoSummaryAndLabel(t *testing.T) {
	path := isolatedCopy(t, "genuine/tree-nav.jsonl")
	code, out, errOut := runCLI(t, "navigate", path, "cabe21c9", "--label", "tools done")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "cabe21c9") {
		t.Errorf("output %s", out)
	}
	last := sessiontest.Last(t, path)
	if last.Type != session.TypeLabel || last.Label().TargetID != "cabe21c9" || last.Label().Label != "tools done" {
		t.Errorf("last entry %s", last.Raw())
	}
	// Already there: the leaf is the label entry now.
	code, out, _ = runCLI(t, "navigate", path, last.ID, "--json")
	if code != 0 || !strings.Contains(out, `"alreadyThere":true`) {
		t.Errorf("exit %d: %s", code, out)
	}
}

func TestNavigateCLIErrors(t *testing.T) {
	path := isolatedCopy(t, "genuine/tree-nav.jsonl")
	before, _ := os.ReadFile(path)
	// Refusals: exit 1, one line.
	for _, args := range [][]string{
		{"navigate", path, "nope"},
		{"navigate", filepath.Join(t.TempDir(), "missing.jsonl"), "x"},
		{"label", path, "nope", "x"},
		{"undo-compaction", path},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 1 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || errOut == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args[:2], code, out, errOut)
		}
	}
	// Usage errors: exit 2, the error and the command's usage line.
	for _, args := range [][]string{{"navigate", path}, {"label", path}} {
		code, out, errOut := runCLI(t, args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || out != "" || len(lines) != 2 || !strings.Contains(lines[0], "missing") || !strings.HasPrefix(lines[1], "usage: pi-lsp "+args[0]+" FILE") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args[:2], code, out, errOut)
		}
	}
	if _, _, errOut := runCLI(t, "navigate", path, "nope"); strings.TrimSpace(errOut) != "pi-lsp navigate: entry nope not found" {
		t.Errorf("stderr %q", errOut)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a failed command wrote to the file")
	}
}

func TestLabelCLI(t *testing.T) {
	path := isolatedCopy(t, "genuine/tree-nav.jsonl")
	if code, _, errOut := runCLI(t, "label", path, "aef84878", "second question"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if l := sessiontest.Last(t, path).Label(); l.TargetID != "aef84878" || l.Label != "second question" {
		t.Errorf("label %+v", l)
	}
	if code, out, errOut := runCLI(t, "label", path, "aef84878"); code != 0 || !strings.Contains(out, "cleared") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	f, _ := session.Load(path)
	if l := session.NewIndex(f).Label("aef84878"); l != "" {
		t.Errorf("label after clearing %q", l)
	}
}

func TestUndoCompactionCLI(t *testing.T) {
	path := isolatedCopy(t, "genuine/compact-twice.jsonl")
	f, _ := session.Load(path)
	want := session.NewIndex(f).BuildContext("487b4360").Messages
	code, out, errOut := runCLI(t, "undo-compaction", path, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m["compactionId"] != "863e33c2" || m["leafId"] != sessiontest.Last(t, path).ID {
		t.Errorf("output %s", out)
	}
	f, _ = session.Load(path)
	got := session.NewIndex(f).BuildContext("").Messages
	if len(got) != len(want) {
		t.Fatalf("context %d messages, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i].Raw(), want[i].Raw()) {
			t.Errorf("message %d differs", i)
		}
	}
	// The second undo reaches the first compaction; a third has nothing left.
	if code, out, _ := runCLI(t, "undo-compaction", path); code != 0 || !strings.Contains(out, "f2258210") {
		t.Errorf("second undo: exit %d %s", code, out)
	}
	if code, _, errOut := runCLI(t, "undo-compaction", path); code == 0 || !strings.Contains(errOut, "no compaction") {
		t.Errorf("third undo: exit %d %s", code, errOut)
	}
}
