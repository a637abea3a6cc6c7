package rpc_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// TestAnswersHaveTheirDocumentedShape drives every pi/* request over one session and
// holds each answer, notification and hook request to the Go type the docs and the
// editors' types are generated from: no key that is not documented, no documented
// member missing.
func TestAnswersHaveTheirDocumentedShape(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	e, path := compactEnv(t, llm, lsptest.Config{ClientHooks: true})
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
		if err := rpc.MatchShape(raw, results[method]...); err != nil {
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
	}](t, call("pi/append", map[string]any{"messages": []any{userMsg("one more", time.Now().UnixMilli())}}))
	call("pi/editContext", map[string]any{"entryId": appended.EntryIDs[0], "action": "omit"})
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
		if err := rpc.MatchShape(m.Params, want); err != nil {
			t.Errorf("%s params %s do not have their documented shape: %v", m.Method, lsptest.Trunc(m.Params), err)
		}
	}
	for _, m := range []string{"pi/sessionChanged", "pi/compactionStart", "pi/compactionEnd", "pi/fileOps", "pi/contextUsage", "pi/beforeCompact", "pi/beforeTree"} {
		if !got[m] {
			t.Errorf("no %s was sent to check", m)
		}
	}
}

// TestMatchShapeNotices keeps the shape check itself honest: an undocumented key, a
// missing member and a wrong nested member each fail it.
func TestMatchShapeNotices(t *testing.T) {
	pin := reflect.TypeFor[rpc.PinResult]()
	files := reflect.TypeFor[rpc.FilesResult]()
	for _, bad := range []struct {
		raw string
		typ reflect.Type
	}{
		{`{"entryId":"a","pinned":true,"extra":1}`, pin},
		{`{"entryId":"a"}`, pin},
		{`{"session":"s","readFiles":[],"modifiedFiles":[],"stale":[{"path":"p","readAt":"t","why":"x"}]}`, files},
	} {
		if rpc.MatchShape(json.RawMessage(bad.raw), bad.typ) == nil {
			t.Errorf("%s passed as %s", bad.raw, bad.typ)
		}
	}
	if err := rpc.MatchShape(json.RawMessage(`{"entryId":"a","pinned":false}`), pin); err != nil {
		t.Error(err)
	}
}
