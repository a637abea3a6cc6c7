package rpc_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

const (
	g16Tools   = "../genuine-1.6/system-tools"
	g16Tree    = "../genuine-1.6/tree-nav"
	g16Compact = "../genuine-1.6/compact-twice"
)

// bothTrees is pi/tree of a session in its two forms: the flat nodes, and the nested
// tree's nodes by id (so that a test can check that the forms agree).
func bothTrees(t *testing.T, e *lsptest.Env, session string) ([]rpc.FlatNode, map[string]*rpc.TreeNode) {
	t.Helper()
	flat, err := e.FlatTree(map[string]any{"session": session, "flat": true})
	if err != nil {
		t.Fatal(err)
	}
	nested, err := e.Tree(map[string]any{"session": session})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*rpc.TreeNode{}
	for stack := nested.Roots; len(stack) > 0; {
		n := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], n.Children...)
		byID[n.ID] = n
	}
	return flat.Nodes, byID
}

// treeEdit is the contextEdit of an entry in pi/tree (nested and flat forms agree).
func treeEdit(t *testing.T, e *lsptest.Env, session, id string) string {
	t.Helper()
	flat, nested := bothTrees(t, e, session)
	inNested := "?"
	if n := nested[id]; n != nil {
		inNested = n.ContextEdit
	}
	for _, n := range flat {
		if n.ID == id {
			if n.ContextEdit != inNested {
				t.Errorf("%s: flat tree says %q, nested %q", id, n.ContextEdit, inNested)
			}
			return n.ContextEdit
		}
	}
	t.Fatalf("%s not in the tree", id)
	return ""
}

// pi/editContext (and the command pi.editContext) appends Pi's context_edit entry, then
// pi/sessionChanged and pi/contextUsage follow with the new figure, which pi/context,
// pi/contextBySize and the answer's tokensAfter agree on; pi/tree marks the entry
// omitted, then replaced, then (restored) not at all.
func TestEditContextWritesAndNotifies(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{g16Tools}})
	path := e.Sessions[g16Tools]
	sizes, err := e.ContextBySize(map[string]any{"session": path})
	if err != nil {
		t.Fatal(err)
	}
	target := ""
	for _, m := range sizes.Messages {
		if m.Role == session.RoleToolResult && m.Editable {
			target = m.EntryID
			break
		}
	}
	if target == "" {
		t.Fatalf("no toolResult in %+v", sizes.Messages)
	}
	steps := []struct {
		call   func() (rpc.EditContextResult, error)
		repl   string
		state  string
		action string
	}{
		{func() (rpc.EditContextResult, error) {
			raw, err := e.Command("pi.editContext", map[string]any{"session": path, "entryId": target, "action": "omit"})
			if err != nil {
				return rpc.EditContextResult{}, err
			}
			return lsptest.Decode[rpc.EditContextResult](t, raw), nil
		}, "null", "omitted", "omit"},
		{func() (rpc.EditContextResult, error) {
			return e.EditContext(map[string]any{"session": path, "entryId": target, "action": "replace", "text": "trimmed"})
		}, `{"content":[{"type":"text","text":"trimmed"}]}`, "replaced", "replace"},
		{func() (rpc.EditContextResult, error) {
			return e.EditContext(map[string]any{"session": path, "entryId": target, "action": "restore"})
		}, "", "", "restore"},
	}
	for _, st := range steps {
		before := sessiontest.Read(t, path)
		f, err := session.Parse(before)
		if err != nil {
			t.Fatal(err)
		}
		leaf := f.Entries[len(f.Entries)-1].ID
		wantBefore := session.ProjectedContextTokens(session.NewIndex(f).LeafPath()).Tokens
		mark := e.Mark()
		ans, err := st.call()
		if err != nil {
			t.Fatalf("%s: %v", st.action, err)
		}
		now := sessiontest.Read(t, path)
		if !bytes.HasPrefix(now, before) || !bytes.Equal(now[len(before):], append(append([]byte(nil), ans.Entry...), '\n')) {
			t.Fatalf("%s: appended %q, answered entry %s", st.action, now[len(before):], ans.Entry)
		}
		entry := lsptest.Fields(ans.Entry)
		if entry["type"] != "context_edit" || entry["parentId"] != leaf || entry["targetId"] != target {
			t.Errorf("%s: entry %s", st.action, ans.Entry)
		}
		if st.repl != "" {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(ans.Entry, &m)
			if string(m["replacement"]) != st.repl {
				t.Errorf("%s: replacement %s, want %s", st.action, m["replacement"], st.repl)
			}
		}
		if ans.TokensBefore != wantBefore {
			t.Errorf("%s: tokensBefore %v, want %v", st.action, ans.TokensBefore, wantBefore)
		}
		e.Await(5*time.Second,
			lsptest.Since(mark, lsptest.NotificationMatching("pi/sessionChanged", "the edit is the leaf", lsptest.Has(map[string]any{"leafId": entry["id"], "entries": float64(len(f.Entries) + 1)}))),
			lsptest.Since(mark, lsptest.NotificationMatching("pi/contextUsage", "the new figure", lsptest.Has(map[string]any{"tokens": ans.TokensAfter}))))
		cur, err := e.Context(map[string]any{"session": path})
		if err != nil {
			t.Fatal(err)
		}
		if cur.Tokens == nil || *cur.Tokens != ans.TokensAfter {
			t.Errorf("%s: pi/context tokens %v, tokensAfter %v", st.action, cur.Tokens, ans.TokensAfter)
		}
		now2, err := e.ContextBySize(map[string]any{"session": path})
		if err != nil {
			t.Fatal(err)
		}
		if now2.ProjectedTokens != ans.TokensAfter {
			t.Errorf("%s: pi/contextBySize figure %v, tokensAfter %v", st.action, now2.ProjectedTokens, ans.TokensAfter)
		}
		for _, m := range now2.Messages {
			if m.EntryID == target && string(m.ContextEdit) != st.state {
				t.Errorf("%s: pi/contextBySize says %q", st.action, m.ContextEdit)
			}
		}
		if got := treeEdit(t, e, path, target); got != st.state {
			t.Errorf("%s: pi/tree contextEdit %q, want %q", st.action, got, st.state)
		}
	}
}

// Refused edits answer with a real code and kind and leave the file byte-identical.
func TestEditContextRefusals(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{g16Tools, g16Tree, g16Compact}})
	pick := func(name string, onPath bool, keep func(*session.Entry) bool) string {
		ix := sessiontest.Index(t, e.Sessions[name])
		in := map[string]bool{}
		for _, x := range ix.LeafPath() {
			in[x.ID] = true
		}
		for _, x := range ix.Entries() {
			if in[x.ID] == onPath && keep(x) {
				return x.ID
			}
		}
		t.Fatalf("nothing to pick in %s", name)
		return ""
	}
	isRole := func(r string) func(*session.Entry) bool {
		return func(x *session.Entry) bool { return x.Type == session.TypeMessage && x.Role() == r }
	}
	lastOf := func(name string) string { return sessiontest.Last(t, e.Sessions[name]).ID }
	cases := []struct {
		name   string
		sess   string
		params map[string]any
		code   int64
		kind   string
	}{
		{"no entryId", g16Tools, map[string]any{"action": "omit"}, rpc.CodeInvalidParams, rpc.KindInvalidParams},
		{"bad action", g16Tools, map[string]any{"entryId": lastOf(g16Tools), "action": "delete"}, rpc.CodeInvalidParams, rpc.KindInvalidParams},
		{"replace without text", g16Tools, map[string]any{"entryId": lastOf(g16Tools), "action": "replace"}, rpc.CodeInvalidParams, rpc.KindInvalidParams},
		{"text with omit", g16Tools, map[string]any{"entryId": lastOf(g16Tools), "action": "omit", "text": "x"}, rpc.CodeInvalidParams, rpc.KindInvalidParams},
		{"not found", g16Tools, map[string]any{"entryId": "deadbeef", "action": "omit"}, rpc.CodeRequestFailed, rpc.KindNotFound},
		{"system message", g16Tools, map[string]any{"entryId": pick(g16Tools, true, isRole(session.RoleSystem)), "action": "omit"}, rpc.CodeInvalidParams, rpc.KindNotEditable},
		{"restore unedited", g16Tools, map[string]any{"entryId": lastOf(g16Tools), "action": "restore"}, rpc.CodeInvalidParams, rpc.KindNotEdited},
		{"off the branch", g16Tree, map[string]any{"entryId": pick(g16Tree, false, isRole(session.RoleUser)), "action": "omit"}, rpc.CodeInvalidParams, rpc.KindNotOnBranch},
		{"summarized", g16Compact, map[string]any{"entryId": pick(g16Compact, true, isRole(session.RoleUser)), "action": "replace", "text": "x"}, rpc.CodeInvalidParams, rpc.KindSummarized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := e.Sessions[c.sess]
			before := sessiontest.Read(t, path)
			c.params["session"] = path
			_, err := e.EditContext(c.params)
			ce := wantCode(t, err, c.code)
			if ce.Kind() != c.kind {
				t.Errorf("kind %s, want %s (%s)", ce.Kind(), c.kind, ce.Message)
			}
			if !bytes.Equal(sessiontest.Read(t, path), before) {
				t.Fatal("a refused edit changed the file")
			}
		})
	}
}

// pi/tree says of each node whether pi/editContext may name it (editors take the flag
// instead of restating Pi's rule): the nested and flat forms agree; an editable node is
// accepted, a message of the path a compaction summarized is refused.
func TestTreeMarksWhatEditContextAccepts(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{g16Compact}})
	path := e.Sessions[g16Compact]
	flat, nested := bothTrees(t, e, path)
	var yes, summarized string
	for _, n := range flat {
		if inNested := nested[n.ID] != nil && nested[n.ID].Editable; n.Editable != inNested {
			t.Errorf("%s: flat tree says editable %v, nested %v", n.ID, n.Editable, inNested)
		}
		if n.Editable && yes == "" {
			yes = n.ID
		}
		if !n.Editable && n.OnPath && n.Type == session.TypeMessage && n.Role == session.RoleUser && summarized == "" {
			summarized = n.ID
		}
	}
	if yes == "" || summarized == "" {
		t.Fatalf("no editable node (%q) or no summarized user message (%q) in the tree", yes, summarized)
	}
	if _, err := e.EditContext(map[string]any{"session": path, "entryId": summarized, "action": "omit"}); err == nil {
		t.Errorf("pi/editContext accepted %s, which pi/tree says is not editable", summarized)
	}
	if _, err := e.EditContext(map[string]any{"session": path, "entryId": yes, "action": "omit"}); err != nil {
		t.Errorf("pi/editContext refused %s, which pi/tree says is editable: %v", yes, err)
	}
}
