package contextedit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"regexp"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
)

func corpusCopy(t *testing.T, rel string) string { return corpus.Copy(t, rel) }

func load(t *testing.T, path string) *session.Index {
	t.Helper()
	f, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return session.NewIndex(f)
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// find returns the first entry on (or, with onPath false, off) Pi's leaf path that
// satisfies keep.
func find(t *testing.T, ix *session.Index, onPath bool, keep func(*session.Entry) bool) *session.Entry {
	t.Helper()
	path := map[string]bool{}
	for _, e := range ix.LeafPath() {
		path[e.ID] = true
	}
	for _, e := range ix.Entries() {
		if path[e.ID] == onPath && keep(e) {
			return e
		}
	}
	t.Fatal("no such entry")
	return nil
}

func role(r string) func(*session.Entry) bool {
	return func(e *session.Entry) bool { return e.Type == session.TypeMessage && e.Role() == r }
}

// Every refusal names the reason Pi (or pi-lsp's compaction rule) gives and leaves the
// file byte-identical.
func TestRefusalsLeaveTheFileByteIdentical(t *testing.T) {
	type tc struct {
		name string
		file string
		pick func(t *testing.T, ix *session.Index) string
		act  Action
		want error
	}
	cases := []tc{
		{"not found", "genuine-1.6/context-edits.jsonl", func(*testing.T, *session.Index) string { return "deadbeef" }, Omit, ErrNotFound},
		{"empty id", "genuine-1.6/context-edits.jsonl", func(*testing.T, *session.Index) string { return "" }, Replace, ErrNotFound},
		{"off the active branch", "genuine-1.6/tree-nav.jsonl", func(t *testing.T, ix *session.Index) string {
			return find(t, ix, false, role(session.RoleUser)).ID
		}, Omit, ErrNotOnBranch},
		{"system message", "genuine-1.6/system-tools.jsonl", func(t *testing.T, ix *session.Index) string {
			return find(t, ix, true, role(session.RoleSystem)).ID
		}, Replace, ErrNotEditable},
		{"model_change", "genuine-1.6/system-tools.jsonl", func(t *testing.T, ix *session.Index) string {
			return find(t, ix, true, func(e *session.Entry) bool { return e.Type == session.TypeModelChange }).ID
		}, Omit, ErrNotEditable},
		{"compaction", "genuine-1.6/compact-twice.jsonl", func(t *testing.T, ix *session.Index) string {
			return find(t, ix, true, func(e *session.Entry) bool { return e.Type == session.TypeCompaction }).ID
		}, Omit, ErrNotEditable},
		{"summarized away", "genuine-1.6/compact-twice.jsonl", func(t *testing.T, ix *session.Index) string {
			return find(t, ix, true, role(session.RoleUser)).ID // the first prompt, long compacted
		}, Omit, ErrSummarized},
		{"restore of an unedited message", "genuine-1.6/context-edits.jsonl", func(t *testing.T, ix *session.Index) string {
			return ix.LeafID()
		}, Restore, ErrNotEdited},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := corpusCopy(t, c.file)
			before := read(t, path)
			ix := load(t, path)
			id := c.pick(t, ix)
			_, err := Apply(context.Background(), path, Edit{TargetID: id, Action: c.act, Text: "x"})
			if !errors.Is(err, c.want) {
				t.Fatalf("edit of %s: error %v, want %v", id, err, c.want)
			}
			if id != "" && !bytes.Contains([]byte(err.Error()), []byte(id)) {
				t.Errorf("error %q does not name the entry", err)
			}
			if !bytes.Equal(read(t, path), before) {
				t.Fatal("a refused edit changed the file")
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		path := corpusCopy(t, "genuine-1.6/context-edits.jsonl")
		before := read(t, path)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Apply(ctx, path, Edit{TargetID: load(t, path).LeafID(), Action: Omit}); !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v", err)
		}
		if !bytes.Equal(read(t, path), before) {
			t.Fatal("a cancelled edit changed the file")
		}
	})
}

var entryLine = regexp.MustCompile(`^\{"type":"context_edit","id":"[0-9a-f]{8}","parentId":"([0-9a-f]{8})","timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","targetId":"([0-9a-f]{8})","replacement":(.*)\}\n$`)

// The bytes appended are one whole line, Pi's entry in Pi's key order, parented on the
// leaf; a string replacement of an assistant or toolResult becomes one text block, of a
// user or custom message stays a string; a restore stores the original content; the
// projection follows each edit.
func TestEntryBytes(t *testing.T) {
	text := "line one\n\"quoted\" <b>&amp; \u2028 ✓"
	jsText := `"line one\n\"quoted\" <b>&amp; ` + "\u2028" + ` ✓"` // JSON.stringify escapes neither < > & nor U+2028
	cases := []struct {
		file string
		pick func(*session.Entry) bool
		repl string // the stored replacement of the text
	}{
		{"genuine-1.6/context-edits.jsonl", role(session.RoleUser), `{"content":` + jsText + `}`},
		{"genuine-1.6/context-edits.jsonl", role(session.RoleAssistant), `{"content":[{"type":"text","text":` + jsText + `}]}`},
		{"genuine-1.6/system-tools.jsonl", role(session.RoleToolResult), `{"content":[{"type":"text","text":` + jsText + `}]}`},
		{"genuine-1.6/full-main.jsonl", func(e *session.Entry) bool { return e.Type == session.TypeCustomMessage }, `{"content":` + jsText + `}`},
	}
	for _, c := range cases {
		path := corpusCopy(t, c.file)
		ix := load(t, path)
		target := find(t, ix, true, func(e *session.Entry) bool {
			if !c.pick(e) {
				return false
			}
			_, err := Validate(ix, Edit{TargetID: e.ID, Action: Omit})
			return err == nil
		})
		t.Run(c.file+"/"+target.Type+"/"+target.Role(), func(t *testing.T) {
			orig := session.EntryMessages(target)
			origContent, err := originalContent(target)
			if err != nil {
				t.Fatal(err)
			}
			steps := []struct {
				e    Edit
				repl string
			}{
				{Edit{TargetID: target.ID, Action: Omit}, "null"},
				{Edit{TargetID: target.ID, Action: Replace, Text: text}, c.repl},
				{Edit{TargetID: target.ID, Action: Restore}, `{"content":` + string(origContent) + `}`},
			}
			for _, st := range steps {
				before := read(t, path)
				leaf := load(t, path).LeafID()
				res, err := Apply(context.Background(), path, st.e)
				if err != nil {
					t.Fatalf("%v: %v", st.e.Action, err)
				}
				after := read(t, path)
				if !bytes.HasPrefix(after, before) {
					t.Fatalf("%v rewrote the file", st.e.Action)
				}
				line := after[len(before):]
				m := entryLine.FindSubmatch(line)
				if m == nil {
					t.Fatalf("%v appended %q, not Pi's entry", st.e.Action, line)
				}
				if string(m[1]) != leaf || string(m[2]) != target.ID || string(m[3]) != st.repl {
					t.Errorf("%v: parent %s target %s replacement %s; want %s %s %s", st.e.Action, m[1], m[2], m[3], leaf, target.ID, st.repl)
				}
				if !bytes.Equal(res.Entry.Raw(), bytes.TrimSuffix(line, []byte("\n"))) {
					t.Errorf("result entry %s is not the line written", res.Entry.Raw())
				}
				ix := load(t, path)
				var got []*session.Message
				for _, pe := range session.Project(ix.LeafPath()) {
					if pe.Entry.ID == target.ID {
						got = pe.Messages
					}
				}
				state := States(ix.LeafPath())[target.ID]
				if res.TokensAfter != session.ProjectedContextTokens(ix.LeafPath()).Tokens {
					t.Errorf("tokensAfter %v, context now %v", res.TokensAfter, session.ProjectedContextTokens(ix.LeafPath()).Tokens)
				}
				switch st.e.Action {
				case Omit:
					if len(got) != 0 || state != Omitted {
						t.Errorf("after omit: %d messages, state %q", len(got), state)
					}
				case Replace:
					if len(got) != 1 || got[0].Text("") != text || state != Replaced {
						t.Errorf("after replace: %v, state %q", got, state)
					}
				case Restore:
					if len(got) != len(orig) || state != Unedited {
						t.Fatalf("after restore: %d messages, state %q", len(got), state)
					}
					for i := range orig {
						if !reflect.DeepEqual(decode(t, got[i].Raw()), decode(t, orig[i].Raw())) {
							t.Errorf("restored %s\n   != original %s", got[i].Raw(), orig[i].Raw())
						}
					}
				}
			}
		})
	}
}

func decode(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The listing is the projected context, largest first, with the edit states, and its
// figure is the projected context figure.
func TestBySize(t *testing.T) {
	path := corpusCopy(t, "genuine-1.6/context-edits.jsonl")
	ix := load(t, path)
	s, err := BySize(context.Background(), ix.LeafPath(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Tokens != session.ProjectedContextTokens(ix.LeafPath()).Tokens || s.LeafID != ix.LeafID() {
		t.Errorf("figure %v leaf %s", s.Tokens, s.LeafID)
	}
	states := States(ix.LeafPath())
	if len(states) == 0 {
		t.Fatal("the corpus file has edits; no state found")
	}
	seen := map[string]bool{}
	for i, it := range s.Items {
		if i > 0 && it.Tokens > s.Items[i-1].Tokens {
			t.Errorf("not largest first at %d", i)
		}
		seen[it.EntryID] = true
		if it.ContextEdit != states[it.EntryID] {
			t.Errorf("%s: state %q, want %q", it.EntryID, it.ContextEdit, states[it.EntryID])
		}
		if it.ContextEdit == Omitted && (it.Tokens != 0 || it.OriginalTokens == nil || *it.OriginalTokens == 0) {
			t.Errorf("omitted %s: tokens %d original %v", it.EntryID, it.Tokens, it.OriginalTokens)
		}
		e := ix.Entry(it.EntryID)
		want := 0
		for _, pe := range session.Project(ix.LeafPath()) {
			if pe.Entry == e {
				for _, m := range pe.Messages {
					want += session.EstimateTokens(m)
				}
			}
		}
		if it.Tokens != want {
			t.Errorf("%s: tokens %d, want %d", it.EntryID, it.Tokens, want)
		}
	}
	for id := range states {
		if !seen[id] {
			t.Errorf("edited %s missing from the listing", id)
		}
	}
	if two, _ := BySize(context.Background(), ix.LeafPath(), 2); len(two.Items) != 2 || two.Items[0] != s.Items[0] {
		t.Errorf("limit 2: %v", two.Items)
	}
}
