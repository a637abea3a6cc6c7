package rpc_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/shape"
)

// TestAnswersHaveTheirDocumentedShape drives every pi/* request over one session and
// holds each answer, notification and hook request to the Go type the docs and the
// editors' types are generated from: no key that is not documented, no documented
// member missing.
func TestAnswersHaveTheirDocumentedShape(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	e, path := compactEnv(t, llm, lsptest.Config{ClientHooks: true})
	before := len(sessionLines(t, path))
	results := map[string][]reflect.Type{}
	for _, c := range append(rpc.Commands(), rpc.Requests()...) {
		results[c.Method] = c.Result
	}
	seen := map[string]bool{}
	call := func(method string, params any) json.RawMessage {
		t.Helper()
		raw, err := e.Call(method, params)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if err := shape.Match(raw, results[method]...); err != nil {
			t.Errorf("%s answer %s does not have its documented shape: %v", method, lsptest.Trunc(raw), err)
		}
		seen[method] = true
		return raw
	}

	call("pi/sessions", nil)
	call("pi/selectSession", map[string]any{"path": path})
	call("pi/context", nil)
	call("pi/files", nil)
	call("pi/contextBySize", map[string]any{"limit": 3})
	call("pi/contextBreakdown", map[string]any{"history": true})
	call("pi/tree", map[string]any{"flat": true, "limit": 5})
	tree := lsptest.Decode[struct {
		LeafID string `json:"leafId"`
		Roots  []struct {
			ID string `json:"id"`
		} `json:"roots"`
	}](t, call("pi/tree", nil))
	root := tree.Roots[0].ID
	call("pi/label", map[string]any{"entryId": root, "label": "start"})
	call("pi/pin", map[string]any{"entryId": root})
	call("pi/previewBranchSummary", map[string]any{"targetId": root})
	preview := lsptest.Decode[struct {
		SpanKey string `json:"spanKey"`
		Summary string `json:"summary"`
	}](t, call("pi/previewCompaction", nil))
	call("pi/commitCompaction", map[string]any{"spanKey": preview.SpanKey, "summary": preview.Summary, "acceptDroppedPins": true})
	call("pi/undoCompaction", nil)
	call("pi/compact", nil)
	call("pi/navigate", map[string]any{"targetId": root, "summarize": true})
	call("pi/navigate", map[string]any{"targetId": tree.LeafID})
	appended := lsptest.Decode[struct {
		EntryIDs []string `json:"entryIds"`
	}](t, call("pi/append", map[string]any{"messages": []any{userMsg("one more", time.Now().UnixMilli()), userMsg("and another", time.Now().UnixMilli())}}))
	call("pi/condense", map[string]any{"fromId": appended.EntryIDs[0], "toId": appended.EntryIDs[1], "dryRun": true})
	call("pi/rewind", map[string]any{"entryId": root, "dryRun": true})
	call("pi/editContext", map[string]any{"entryId": appended.EntryIDs[0], "action": "omit"})
	call("pi/clearToolOutput", map[string]any{"dryRun": true, "keepRecentTokens": 1, "minTokens": 1})
	call("pi/clearToolOutput", map[string]any{"restore": true})
	for _, c := range append(rpc.Commands(), rpc.Requests()...) {
		if !seen[c.Method] {
			t.Errorf("%s was not checked", c.Method)
		}
	}

	// The notifications of all that, and the hooks the server asked.
	e.Await(5*time.Second, lsptest.NotificationMatching("pi/contextUsage", "after the edit", nil))
	notes := map[string]reflect.Type{}
	for _, n := range rpc.Notifications() {
		notes[n.Method] = n.Params
	}
	hooks := map[string]reflect.Type{}
	for _, h := range rpc.Hooks() {
		hooks[h.Method] = h.Params
	}
	got := map[string]bool{}
	for _, m := range e.Messages() {
		var want reflect.Type
		switch {
		case m.Kind == lsptest.KindNotification && notes[m.Method] != nil:
			want = notes[m.Method]
		case m.Kind == lsptest.KindCall && hooks[m.Method] != nil:
			want = hooks[m.Method]
		default:
			continue
		}
		got[m.Method] = true
		if err := shape.Match(m.Params, want); err != nil {
			t.Errorf("%s params %s do not have their documented shape: %v", m.Method, lsptest.Trunc(m.Params), err)
		}
	}
	for _, m := range []string{"pi/sessionChanged", "pi/compactionStart", "pi/compactionEnd", "pi/fileOps", "pi/contextUsage", "pi/beforeCompact", "pi/beforeTree"} {
		if !got[m] {
			t.Errorf("no %s was sent to check", m)
		}
	}

	// Every entry all that wrote to the file has the shape of its documented entry type
	// (the answers above carried some of them; these are the file's own bytes).
	types := entryTypes(t)
	written := map[string]int{}
	for _, line := range sessionLines(t, path)[before:] {
		var env struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &env); err != nil {
			t.Fatalf("written line %s: %v", lsptest.Trunc(line), err)
		}
		written[env.Type]++
		typ, ok := types[env.Type]
		if !ok {
			t.Errorf("pi-lsp wrote a %s entry, which no documented entry type describes: %s", env.Type, lsptest.Trunc(line))
			continue
		}
		if err := shape.Match(line, typ); err != nil {
			t.Errorf("written %s entry %s does not have its documented shape: %v", env.Type, lsptest.Trunc(line), err)
		}
	}
	for _, typ := range []string{"message", "compaction", "branch_summary", "context_edit", "label", "custom"} {
		if written[typ] == 0 {
			t.Errorf("no %s entry was written to check (wrote %v)", typ, written)
		}
	}
}

// sessionLines are the lines of a session file after its header.
func sessionLines(t *testing.T, path string) []json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, json.RawMessage(l))
		}
	}
	return out[1:]
}

// entryTypes maps an entry's type to its documented Go type (rpc.Entries), read off
// the literal of its type member.
func entryTypes(t *testing.T) map[string]reflect.Type {
	t.Helper()
	out := map[string]reflect.Type{}
	for _, typ := range rpc.Entries() {
		f, ok := typ.FieldByName("Type")
		lit, err := strconv.Unquote(f.Tag.Get("ts"))
		if !ok || err != nil {
			t.Fatalf("%s has no literal type member", typ)
		}
		out[lit] = typ
	}
	return out
}
