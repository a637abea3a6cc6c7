package rpc_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

type rewindMark struct {
	Entry string             `json:"entry"`
	Files map[string]*string `json:"files"`
}

// rewindSession installs the recording of testdata/rewind (real Pi 1.6.0 editing a
// workspace) into the server's sessions, its workspace in the final state.
func rewindSession(t *testing.T, e *lsptest.Env) (string, string, []rewindMark) {
	t.Helper()
	dir := filepath.Join(oracle.RepoRoot(), "testdata", "rewind", "agent-edits")
	data, err := os.ReadFile(filepath.Join(dir, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var marks []rewindMark
	m, _ := os.ReadFile(filepath.Join(dir, "marks.json"))
	if err := json.Unmarshal(m, &marks); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(t.TempDir(), "project")
	for f, c := range marks[len(marks)-1].Files {
		if c != nil {
			_ = os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755)
			if err := os.WriteFile(filepath.Join(ws, f), []byte(*c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var any string
	for _, p := range e.Sessions {
		any = p
	}
	path := filepath.Join(filepath.Dir(any), "2026-12-04T00-00-00-000Z_rewind.jsonl")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(data), "/tmp/pi-lsp-rewind/project", ws)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, ws, marks
}

func workspaceHolds(t *testing.T, ws string, want map[string]*string, except ...string) {
	t.Helper()
	for f, c := range want {
		skip := false
		for _, x := range except {
			skip = skip || x == f
		}
		if skip {
			continue
		}
		b, err := os.ReadFile(filepath.Join(ws, f))
		switch {
		case c == nil && err == nil:
			t.Errorf("%s exists", f)
		case c != nil && (err != nil || string(b) != *c):
			t.Errorf("%s holds %q (%v), want %q", f, b, err, *c)
		}
	}
}

// pi/rewind previews each file (what it holds, what the rewind writes, the diff)
// without writing, brings the files back with progress (pi.rewind), and undo puts the
// replaced bytes back; the session is not written by a code rewind.
func TestRewindPreviewApplyUndo(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{g16Tools}})
	path, ws, marks := rewindSession(t, e)
	before := sessiontest.Read(t, path)
	target := marks[1] // the end of turn 1
	raw, err := e.Call("pi/rewind", map[string]any{"session": path, "entryId": target.Entry, "dryRun": true})
	if err != nil {
		t.Fatal(err)
	}
	prev := lsptest.Decode[rpc.RewindResult](t, raw)
	if !prev.DryRun || len(prev.Files) == 0 {
		t.Fatalf("preview %+v", prev)
	}
	for _, f := range prev.Files {
		want := target.Files[f.Path]
		if (want == nil) == f.TargetExists || want != nil && *want != f.Target || !strings.Contains(f.Diff, "@@") {
			t.Errorf("preview of %s: target %v %q, want %v", f.Path, f.TargetExists, f.Target, want)
		}
	}
	workspaceHolds(t, ws, marks[len(marks)-1].Files)

	mark := e.Mark()
	raw, err = e.Command("pi.rewind", map[string]any{"session": path, "entryId": target.Entry})
	if err != nil {
		t.Fatal(err)
	}
	res := lsptest.Decode[rpc.RewindResult](t, raw)
	if res.Undo == nil || len(res.Restored)+len(res.Removed) != len(prev.Files) {
		t.Fatalf("rewind %+v", res)
	}
	e.Await(5*time.Second, lsptest.Since(mark, lsptest.CompletedProgress("Rewinding files")))
	workspaceHolds(t, ws, target.Files, "gen.txt")
	if !bytes.Equal(sessiontest.Read(t, path), before) {
		t.Error("a code rewind wrote to the session")
	}
	if _, err := e.Call("pi/rewind", map[string]any{"session": path, "undo": true}); err != nil {
		t.Fatal(err)
	}
	workspaceHolds(t, ws, marks[len(marks)-1].Files)
	_, err = e.Call("pi/rewind", map[string]any{"session": path, "undo": true})
	if ce := wantCode(t, err, rpc.CodeRequestFailed); ce.Kind() != rpc.KindNotFound {
		t.Errorf("a second undo: %s", ce.Message)
	}
	_, err = e.Call("pi/rewind", map[string]any{"session": path, "entryId": target.Entry, "mode": "sideways"})
	wantCode(t, err, rpc.CodeInvalidParams)
}

// pi/condense previews and condenses a range, and restores it; pi/compact with
// keepFrom keeps from the chosen entry, and refuses a tool result with the nearest
// valid cuts.
func TestCondenseAndKeepFrom(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{g16Tools}, InitOptions: map[string]any{"summarizer": "extractive"}})
	path := e.Sessions[g16Tools]
	original := sessiontest.Read(t, path)
	// 20376f66 "all four tools are back" and its answer 6e06dec1, then the next prompt.
	raw, err := e.Call("pi/condense", map[string]any{"session": path, "fromId": "20376f66", "toId": "6e06dec1", "dryRun": true})
	if err != nil {
		t.Fatal(err)
	}
	prev := lsptest.Decode[rpc.CondenseResult](t, raw)
	if len(prev.Targets) != 2 || !strings.Contains(prev.Summary, "<summary>") || !bytes.Equal(sessiontest.Read(t, path), original) {
		t.Fatalf("preview %+v", prev)
	}
	raw, err = e.Command("pi.condense", map[string]any{"session": path, "fromId": "20376f66", "toId": "6e06dec1"})
	if err != nil {
		t.Fatal(err)
	}
	if res := lsptest.Decode[rpc.CondenseResult](t, raw); len(res.Entries) != 2 {
		t.Fatalf("condensed %+v", res)
	}
	raw, err = e.Call("pi/condense", map[string]any{"session": path, "fromId": "20376f66", "restore": true})
	if err != nil {
		t.Fatal(err)
	}
	if res := lsptest.Decode[rpc.CondenseResult](t, raw); len(res.Entries) != 2 {
		t.Fatalf("restored %+v", res)
	}
	_, err = e.Call("pi/condense", map[string]any{"session": path, "fromId": "20376f66"})
	wantCode(t, err, rpc.CodeInvalidParams)

	before := sessiontest.Read(t, path)
	_, err = e.Compact(map[string]any{"session": path, "keepFrom": "3fdef8ea"})
	if ce := wantCode(t, err, rpc.CodeInvalidParams); !strings.Contains(ce.Message, "c8de8e1a") || !strings.Contains(ce.Message, "c3cfdd52") {
		t.Errorf("keepFrom a tool result: %s", ce.Message)
	}
	if !bytes.Equal(sessiontest.Read(t, path), before) {
		t.Fatal("a refused compaction wrote")
	}
	if _, err := e.Compact(map[string]any{"session": path, "keepFrom": "20376f66"}); err != nil {
		t.Fatal(err)
	}
	if last := sessiontest.Last(t, path); last.Compaction().FirstKeptEntryID != "20376f66" {
		t.Errorf("kept from %s", last.Compaction().FirstKeptEntryID)
	}
}

// pi/condense waiting on its summarizer reports progress and is cancelled by
// $/cancelRequest: RequestCancelled, and nothing written.
func TestCondenseCancelled(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	llm.Set(func(f *fakemodel.Summarizer) { f.Hold = true })
	e, _ := compactEnv(t, llm, lsptest.Config{Corpus: []string{g16Tools}})
	path := e.Sessions[g16Tools]
	before := sessiontest.Read(t, path)
	p := e.Start("pi/condense", map[string]any{"session": path, "fromId": "20376f66", "toId": "6e06dec1"}, false)
	select {
	case <-llm.Started:
	case <-time.After(15 * time.Second):
		t.Fatal("the summarizer was not asked")
	}
	e.Await(5*time.Second, lsptest.ProgressReportMatching("Condensing context", "summarizing"))
	p.Cancel()
	if _, cerr := p.Wait(10 * time.Second); cerr == nil || cerr.Code != rpc.CodeRequestCancelled {
		t.Fatalf("answer %v", cerr)
	}
	llm.Release()
	if !bytes.Equal(before, sessiontest.Read(t, path)) {
		t.Error("a cancelled condense wrote")
	}
}
