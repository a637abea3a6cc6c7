package rpc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/shape"
)

// pi/clearToolOutput (and pi.clearToolOutput) previews, clears and restores old tool
// output as the CLI does: a dry run writes nothing and names what a clear then replaces,
// one context_edit line each; real Pi 1.6.0 builds a context of the figure the server
// reports, with the placeholders in it; a restore brings every result back; nothing to
// clear is an empty answer that writes nothing.
func TestClearToolOutputPreviewsClearsRestores(t *testing.T) {
	o := oracle.NeedLive(t)
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{g16Tools}})
	path := e.Sessions[g16Tools]
	corpus.EnlargeToolResults(t, path)
	original := sessiontest.Read(t, path)
	params := map[string]any{"session": path, "keepRecentTokens": 3000}

	preview, err := e.ClearToolOutput(map[string]any{"session": path, "keepRecentTokens": 3000, "dryRun": true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sessiontest.Read(t, path), original) {
		t.Fatal("a dry run wrote")
	}
	if !preview.DryRun || len(preview.Cleared) == 0 || preview.Saved <= 0 {
		t.Fatalf("preview %+v", preview)
	}

	mark := e.Mark()
	raw, err := e.Command("pi.clearToolOutput", params)
	if err != nil {
		t.Fatal(err)
	}
	res := lsptest.Decode[rpc.ClearToolOutputResult](t, raw)
	if len(res.Cleared) != len(preview.Cleared) || res.Saved != preview.Saved || res.DryRun {
		t.Fatalf("cleared %d (saved %d), the preview said %d (%d)", len(res.Cleared), res.Saved, len(preview.Cleared), preview.Saved)
	}
	lines := appended(t, original, path)
	if len(lines) != len(res.Cleared) {
		t.Fatalf("%d lines appended for %d cleared results", len(lines), len(res.Cleared))
	}
	for i, l := range lines {
		repl, _ := json.Marshal(l["replacement"])
		if l["type"] != "context_edit" || l["targetId"] != res.Cleared[i].EntryID || !strings.Contains(string(repl), contextedit.ClearedMarker) {
			t.Errorf("line %d: %v", i, l)
		}
	}
	e.Await(5*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/contextUsage", "the cleared figure", lsptest.Has(map[string]any{"tokens": res.TokensAfter}))))
	var want struct {
		Messages  []json.RawMessage `json:"messages"`
		Projected struct {
			Tokens float64 `json:"tokens"`
		} `json:"projectedTokens"`
	}
	o.Query(t, map[string]any{"op": "context", "file": path}, &want)
	if want.Projected.Tokens != res.TokensAfter {
		t.Errorf("real Pi's context figure %v, the server's %v", want.Projected.Tokens, res.TokensAfter)
	}
	placeholders := 0
	for _, m := range want.Messages {
		if strings.Contains(string(m), contextedit.ClearedMarker) {
			placeholders++
		}
	}
	if placeholders != len(res.Cleared) {
		t.Errorf("real Pi's context has %d placeholders, %d results were cleared", placeholders, len(res.Cleared))
	}

	// Cleared already: nothing more to clear, and nothing is written.
	cleared := sessiontest.Read(t, path)
	again, err := e.ClearToolOutput(params)
	if err != nil || len(again.Cleared) != 0 || again.Saved != 0 {
		t.Fatalf("second clear: %+v %v", again, err)
	}
	if !bytes.Equal(sessiontest.Read(t, path), cleared) {
		t.Fatal("a clear with nothing to clear wrote")
	}

	back, err := e.ClearToolOutput(map[string]any{"session": path, "restore": true})
	if err != nil || !back.Restored || len(back.Cleared) != len(res.Cleared) {
		t.Fatalf("restore: %+v %v", back, err)
	}
	o.Query(t, map[string]any{"op": "context", "file": path}, &want)
	for _, m := range want.Messages {
		if strings.Contains(string(m), contextedit.ClearedMarker) {
			t.Fatalf("a placeholder is still in real Pi's context after the restore: %s", m)
		}
	}
	if _, err := e.ClearToolOutput(map[string]any{"session": path, "restore": true, "dryRun": true}); err == nil {
		t.Error("restore with dryRun accepted")
	}
}

// With clearToolOutput: true, a hosted session over the threshold first has its old tool
// output cleared; when that brings it below the threshold, no summary is made, and
// pi/toolOutputCleared says so. Without the setting the same append compacts.
func TestClearToolOutputFirstTier(t *testing.T) {
	for _, first := range []bool{true, false} {
		t.Run(fmt.Sprint("clearToolOutput=", first), func(t *testing.T) {
			opts := map[string]any{"contextWindow": 40000, "reserveTokens": 8000, "keepRecentTokens": 2000}
			if first {
				opts["clearToolOutput"] = true
			}
			e, path := compactEnv(t, fakemodel.NewSummarizer(t), lsptest.Config{InitOptions: opts})
			now := time.Now().UnixMilli()
			big := strings.Repeat("a long line of build output\n", 1500) // ~10k tokens
			var msgs []any
			for i := 0; i < 3; i++ {
				id := fmt.Sprintf("call%d", i)
				msgs = append(msgs,
					userMsg(fmt.Sprintf("step %d", i), now+int64(4*i)),
					toolCallMsg(id, "bash", map[string]any{"command": fmt.Sprintf("make step%d", i)}, now+int64(4*i+1)),
					toolResultMsg(id, "bash", big, now+int64(4*i+2)))
			}
			msgs = append(msgs, assistantMsg("All three steps built.", 33000, "stop", "", now+20))
			before := sessiontest.Read(t, path)
			mark := e.Mark()
			res, err := e.Append(map[string]any{"messages": msgs})
			if err != nil {
				t.Fatal(err)
			}
			if !first {
				if res.AutoCompaction != "threshold" {
					t.Fatalf("without the first tier: %+v", res)
				}
				return
			}
			if res.AutoCompaction != "" {
				t.Fatalf("compacted although clearing brought the context below the threshold: %+v", res)
			}
			e.Await(5*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/toolOutputCleared", "the first tier", func(p json.RawMessage) bool {
				f := lsptest.Fields(p)
				cl, _ := f["cleared"].([]any)
				return f["reason"] == "threshold" && f["compacting"] == false && len(cl) == 2
			})))
			for _, n := range e.Notifications("pi/toolOutputCleared") {
				if err := shape.Match(n.Params, reflect.TypeFor[rpc.ToolOutputCleared]()); err != nil {
					t.Errorf("pi/toolOutputCleared %s: %v", n.Params, err)
				}
			}
			lines := appended(t, before, path)
			edits := 0
			for _, l := range lines {
				switch l["type"] {
				case "context_edit":
					edits++
				case "compaction":
					t.Fatal("a compaction was written")
				}
			}
			if edits != 2 {
				t.Errorf("%d context edits, want the two old results", edits)
			}
		})
	}
}

func toolCallMsg(id, tool string, args map[string]any, ts int64) map[string]any {
	m := assistantMsg("", 0, "toolUse", "", ts)
	m["content"] = []any{map[string]any{"type": "toolCall", "id": id, "name": tool, "arguments": args}}
	return m
}

func toolResultMsg(id, tool, text string, ts int64) map[string]any {
	return map[string]any{"role": "toolResult", "toolCallId": id, "toolName": tool, "isError": false,
		"content": []any{map[string]any{"type": "text", "text": text}}, "timestamp": ts}
}
