package compaction_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// Design divergence 2: nothing to summarize means no model call at all and a clear
// "nothing to compact" error; the file is untouched.
func TestNothingToCompactMakesNoRequest(t *testing.T) {
	srv := newFakeLLM(t)
	for _, tc := range []struct {
		file string
		keep int
	}{
		{"genuine/compact-split.jsonl", 1000},
		{"genuine/misc-messages.jsonl", 20000}, // Pi's default keep: the whole session fits
		{"genuine/compact-twice.jsonl", 300},   // a previous compaction, nothing new before the kept part
	} {
		path := corpusCopy(t, tc.file)
		before := sessiontest.Read(t, path)
		hookCalled := false
		_, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{
			Settings:   settings(tc.keep, 16384),
			Summarizer: fakemodel.NewOpenAI(fastConfig(srv.URL())),
			Hook: func(ctx context.Context, p *compaction.Preparation) (compaction.HookDecision, error) {
				hookCalled = true
				return compaction.HookDecision{}, nil
			},
		})
		if !errors.Is(err, compaction.ErrNothingToCompact) {
			t.Errorf("%s keep %d: error %v, want ErrNothingToCompact", tc.file, tc.keep, err)
		}
		if err != nil && !strings.Contains(err.Error(), "Nothing to compact (session too small)") {
			t.Errorf("error %q does not say nothing to compact", err)
		}
		if hookCalled {
			t.Errorf("%s: the before-compact hook was asked about an empty compaction", tc.file)
		}
		sameBytes(t, path, before)
	}
	if n := srv.count(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

func TestAlreadyCompacted(t *testing.T) {
	srv := newFakeLLM(t)
	s := fakemodel.NewOpenAI(fastConfig(srv.URL()))
	// A leaf that is a compaction entry.
	path := corpusCopy(t, "genuine/compact-split.jsonl")
	before := sessiontest.Read(t, path)
	_, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{LeafID: "fb319c52", Settings: settings(1, 16384), Summarizer: s})
	if !errors.Is(err, compaction.ErrAlreadyCompacted) {
		t.Errorf("error %v, want ErrAlreadyCompacted", err)
	}
	sameBytes(t, path, before)
	// Compacting twice in a row.
	path = corpusCopy(t, normalFile)
	if _, err := runWith(context.Background(), path, s, settings(normalKeep, 16384), compaction.Options{}); err != nil {
		t.Fatal(err)
	}
	before = sessiontest.Read(t, path)
	n := srv.count()
	_, err = runWith(context.Background(), path, s, settings(normalKeep, 16384), compaction.Options{})
	if !errors.Is(err, compaction.ErrAlreadyCompacted) {
		t.Errorf("second compaction: error %v, want ErrAlreadyCompacted", err)
	}
	if srv.count() != n {
		t.Errorf("the second compaction called the model")
	}
	sameBytes(t, path, before)
}

// The file grows while the summary is produced (Pi appended a message): nothing is
// written and the error says so.
func TestSessionChangedDuringSummary(t *testing.T) {
	srv := newFakeLLM(t)
	path := corpusCopy(t, normalFile)
	before := sessiontest.Read(t, path)
	ix, taken := sessiontest.ForAppend(t, path)
	appended := make(chan error, 1)
	srv.onRequest = func(*llmRequest) {
		_, err := session.Append(path, taken, []session.NewEntry{{Type: session.TypeMessage, ParentID: ix.LeafID(),
			Fields: []session.Field{{Key: "message", Value: json.RawMessage(userMsg("typed while compacting"))}}}})
		appended <- err
	}
	_, err := runWith(context.Background(), path, fakemodel.NewOpenAI(fastConfig(srv.URL())), settings(normalKeep, 16384), compaction.Options{})
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, compaction.ErrSessionChanged) {
		t.Fatalf("error %v, want ErrSessionChanged", err)
	}
	if !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("error %q does not say nothing was written", err)
	}
	after := sessiontest.Read(t, path)
	if !bytes.HasPrefix(after, before) {
		t.Fatal("old bytes changed")
	}
	added := string(after[len(before):])
	if strings.Count(added, "\n") != 1 || !strings.Contains(added, "typed while compacting") || strings.Contains(added, `"compaction"`) {
		t.Errorf("appended bytes: %q, want only the concurrent message", added)
	}
}

// A hook that cancels: ErrCancelled, no model call, no write.
func TestHookCancel(t *testing.T) {
	srv := newFakeLLM(t)
	path := corpusCopy(t, normalFile)
	before := sessiontest.Read(t, path)
	var seen *compaction.Preparation
	_, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{
		Settings: settings(normalKeep, 16384), Summarizer: fakemodel.NewOpenAI(fastConfig(srv.URL())),
		Hook: func(ctx context.Context, p *compaction.Preparation) (compaction.HookDecision, error) {
			seen = p
			return compaction.HookDecision{Cancel: true}, nil
		},
	})
	if !errors.Is(err, compaction.ErrCancelled) {
		t.Fatalf("error %v, want ErrCancelled", err)
	}
	if seen == nil || seen.FirstKeptEntryID == "" || len(seen.MessagesToSummarize) == 0 {
		t.Errorf("hook got preparation %+v", seen)
	}
	if srv.count() != 0 {
		t.Errorf("the model was called")
	}
	sameBytes(t, path, before)

	// A hook error aborts too, and says where it came from.
	_, err = compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{
		Settings: settings(normalKeep, 16384), Summarizer: fakemodel.NewOpenAI(fastConfig(srv.URL())),
		Hook: func(ctx context.Context, p *compaction.Preparation) (compaction.HookDecision, error) {
			return compaction.HookDecision{}, errors.New("editor went away")
		},
	})
	if err == nil || !strings.Contains(err.Error(), "before-compact hook: editor went away") {
		t.Errorf("error %v", err)
	}
	sameBytes(t, path, before)
}

// A hook-supplied summary is stored verbatim with fromHook: true, and no model is asked.
func TestHookSuppliedSummary(t *testing.T) {
	srv := newFakeLLM(t)
	path := corpusCopy(t, splitFile)
	st := settings(splitKeep, 16384)
	prep := prepareFile(t, path, st)
	res, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{
		Settings: st, Summarizer: fakemodel.NewOpenAI(fastConfig(srv.URL())),
		Hook: func(ctx context.Context, p *compaction.Preparation) (compaction.HookDecision, error) {
			return compaction.HookDecision{Outcome: &compaction.Outcome{
				Summary: "SUMMARY FROM THE EDITOR", FirstKeptEntryID: p.FirstKeptEntryID, TokensBefore: 999,
				Details: compaction.Details{ReadFiles: []string{"r.ts"}, ModifiedFiles: []string{"m.ts"}},
			}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if srv.count() != 0 {
		t.Errorf("the model was called")
	}
	m := entryJSON(t, sessiontest.Last(t, path))
	if m["summary"] != "SUMMARY FROM THE EDITOR" || m["fromHook"] != true || m["tokensBefore"] != float64(999) || m["firstKeptEntryId"] != prep.FirstKeptEntryID {
		t.Errorf("entry %v", m)
	}
	if d, _ := json.Marshal(m["details"]); string(d) != `{"modifiedFiles":["m.ts"],"readFiles":["r.ts"]}` {
		t.Errorf("details %s", d)
	}
	if _, ok := m["usage"]; ok {
		t.Errorf("a hook summary has no usage")
	}
	if !res.Outcome.FromHook {
		t.Errorf("outcome not marked fromHook")
	}
	// notes.txt is modified in the span and the editor's summary does not mention it.
	if got := res.Outcome.Audit.MissingModifiedFiles; len(got) != 1 || got[0] != "notes.txt" {
		t.Errorf("audit missing = %v, want [notes.txt]", got)
	}
	if res.Outcome.TokensAfter <= 0 {
		t.Errorf("tokensAfter not computed for a hook summary")
	}

	// A hook outcome without a first kept entry gets the preparation's (Pi would write an
	// entry its own loader cannot place).
	path = corpusCopy(t, splitFile)
	_, err = compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{
		Settings: st,
		Hook: func(ctx context.Context, p *compaction.Preparation) (compaction.HookDecision, error) {
			return compaction.HookDecision{Outcome: &compaction.Outcome{Summary: "ONLY TEXT"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m := entryJSON(t, sessiontest.Last(t, path)); m["firstKeptEntryId"] != prep.FirstKeptEntryID || m["summary"] != "ONLY TEXT" {
		t.Errorf("entry %v", m)
	}
}

// Design divergence 7: more than 50 files → the summary text lists the 50 most recent and
// a "(+N more)" line; the entry's details keep every file.
func TestBoundedFileListsInSummary(t *testing.T) {
	path := corpusCopy(t, normalFile)
	var calls []map[string]any
	var results []string
	for i := range 60 {
		id := fmt.Sprintf("call_w%02d", i)
		calls = append(calls, toolCall(id, "write", map[string]any{"path": fmt.Sprintf("src/gen/file%02d.go", i), "content": "package gen\n"}))
		results = append(results, toolResult(id, "write", "Successfully wrote 12 bytes"))
	}
	for i := range 3 {
		id := fmt.Sprintf("call_r%02d", i)
		calls = append(calls, toolCall(id, "read", map[string]any{"path": fmt.Sprintf("docs/read%d.md", i)}))
		results = append(results, toolResult(id, "read", "text"))
	}
	msgs := append([]string{userMsg("generate sixty files"), assistantMsg("Writing them all.", calls...)}, results...)
	msgs = append(msgs, assistantMsg("All sixty files are written."),
		userMsg("now check the build: "+strings.Repeat("it must compile cleanly. ", 30)), assistantMsg("The build is fine."))
	appendMessages(t, path, msgs...)

	st := settings(100, 16384)
	prep := prepareFile(t, path, st)
	if prep.IsSplitTurn {
		t.Fatalf("want a plain cut")
	}
	srv := newFakeLLM(t, say("MODEL TEXT"))
	res, err := runWith(context.Background(), path, fakemodel.NewOpenAI(fastConfig(srv.URL())), st, compaction.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Outcome.Summary
	i := strings.Index(sum, "<modified-files>\n")
	j := strings.Index(sum, "\n</modified-files>")
	if i < 0 || j < i {
		t.Fatalf("no modified-files block:\n%s", sum)
	}
	lines := strings.Split(sum[i+len("<modified-files>\n"):j], "\n")
	if len(lines) != 51 || lines[50] != "(+10 more)" {
		t.Fatalf("modified-files block has %d lines, last %q", len(lines), lines[len(lines)-1])
	}
	if lines[0] != "src/gen/file59.go" || lines[49] != "src/gen/file10.go" {
		t.Errorf("not most recent first: %q ... %q", lines[0], lines[49])
	}
	if !strings.Contains(sum, "<read-files>\ndocs/read0.md\ndocs/read1.md\ndocs/read2.md\n</read-files>") {
		t.Errorf("read-files block: %s", sum)
	}
	m := entryJSON(t, sessiontest.Last(t, path))
	var d compaction.Details
	b, _ := json.Marshal(m["details"])
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.ModifiedFiles) != 60 || len(d.ReadFiles) != 3 || d.ModifiedFiles[0] != "src/gen/file00.go" {
		t.Errorf("details keep %d modified / %d read files (first %q), want all 60 / 3, sorted", len(d.ModifiedFiles), len(d.ReadFiles), d.ModifiedFiles[0])
	}
	// The audit names the files the text leaves out.
	if got := res.Outcome.Audit.MissingModifiedFiles; len(got) != 10 || got[0] != "src/gen/file00.go" {
		t.Errorf("audit missing = %v", got)
	}
	// MaxListedFiles < 0 lists everything (Pi's behaviour).
	path2 := corpusCopy(t, normalFile)
	appendMessages(t, path2, msgs...)
	res, err = compaction.Run(context.Background(), sessiontest.Snapshot(t, path2), compaction.RunOptions{Options: compaction.Options{MaxListedFiles: -1},
		Settings: st, Summarizer: fakemodel.NewOpenAI(fastConfig(srv.URL()))})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Outcome.Summary, "more)") || !res.Outcome.Audit.OK() {
		t.Errorf("unbounded lists: audit %+v", res.Outcome.Audit)
	}
}

// The audit reports a modified file that the summary text omits, broken file blocks and
// missing pinned texts.
func TestAuditSummary(t *testing.T) {
	a := compaction.AuditSummary("## Goal\nEdited src/a.go.\n\n<modified-files>\nsrc/a.go\n</modified-files>", []string{"src/a.go", "src/b.go"}, nil)
	if a.OK() || len(a.MissingModifiedFiles) != 1 || a.MissingModifiedFiles[0] != "src/b.go" || !a.FileBlocksIntact {
		t.Errorf("audit %+v", a)
	}
	a = compaction.AuditSummary("text <read-files>\nx\n", nil, []string{"keep the API stable"})
	if a.FileBlocksIntact || len(a.MissingPinned) != 1 || a.OK() {
		t.Errorf("audit %+v", a)
	}
	a = compaction.AuditSummary("Pinned: \"keep the API stable\" and src/b.go", []string{"src/b.go"}, []string{"keep the API\nstable"})
	if !a.OK() {
		t.Errorf("audit %+v", a)
	}
}
