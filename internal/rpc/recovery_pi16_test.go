package rpc_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// The recoveries real pi 1.6.0 ran when it wrote the genuine corpus (an overflow error,
// and an answer cut off by the output limit) run again through pi/append: the session up
// to the failed turn is hosted by pi-lsp, the same user message and failed answer are
// appended, and pi-lsp writes what pi wrote after them: one context_edit omission of the
// failed answer, chained on it, then a compaction chained on the omission that keeps
// from the same entry, and the editor is told to retry (willRetry).
func TestRecoveryWritesWhatPi16Wrote(t *testing.T) {
	for _, name := range []string{"overflow-recovery", "length-recovery"} {
		t.Run(name, func(t *testing.T) {
			lines := bytes.SplitAfter(bytes.TrimRight(corpus.Read(t, "genuine-1.6/"+name+".jsonl"), "\n"), []byte("\n"))
			type entry struct {
				Type             string          `json:"type"`
				ID               string          `json:"id"`
				ParentID         *string         `json:"parentId"`
				TargetID         string          `json:"targetId"`
				Replacement      json.RawMessage `json:"replacement"`
				FirstKeptEntryID string          `json:"firstKeptEntryId"`
				Message          json.RawMessage `json:"message"`
			}
			var es []entry
			for _, l := range lines {
				var e entry
				if err := json.Unmarshal(l, &e); err != nil {
					t.Fatal(err)
				}
				es = append(es, e)
			}
			// Pi's recovery: ..., user, failed assistant, context_edit, compaction, ...
			edit := -1
			for i, e := range es {
				if e.Type == "context_edit" {
					edit = i
					break
				}
			}
			if edit < 2 || es[edit+1].Type != "compaction" || es[edit].TargetID != es[edit-1].ID {
				t.Fatalf("corpus changed: no omission of the failed answer followed by a compaction")
			}
			userIdx, failIdx := edit-2, edit-1
			piCompaction := es[edit+1]

			e := lsptest.NewEnv(t, lsptest.Config{InitOptions: map[string]any{"contextWindow": 128000, "maxTokens": 4096},
				// Pi's settings when it wrote the file (test/pi/rpc-scenarios-1.6.mjs).
				AgentFiles: map[string]string{"settings.json": `{"compaction":{"enabled":true,"reserveTokens":16384,"keepRecentTokens":30}}`}})
			llm := fakemodel.NewSummarizer(t)
			cfg := llm.Config()
			cfg["contextWindow"], cfg["maxTokens"] = 128000, 4096
			e.Notify("workspace/didChangeConfiguration", map[string]any{"settings": cfg})
			if err := os.MkdirAll(e.SessionDir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(e.SessionDir, name+".jsonl")
			if err := os.WriteFile(path, bytes.Join(lines[:userIdx], nil), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PI_LSP_TEST_KEY", "test-key")
			before := sessiontest.Read(t, path)
			res, err := e.Append(map[string]any{"session": path, "messages": []json.RawMessage{es[userIdx].Message, es[failIdx].Message}})
			if err != nil {
				t.Fatal(err)
			}
			if res.AutoCompaction != "overflow" {
				t.Fatalf("answer %+v, want an overflow recovery", res)
			}
			e.Await(15*time.Second, lsptest.NotificationMatching("pi/compactionEnd", "recovery", func(p json.RawMessage) bool {
				return lsptest.Has(map[string]any{"reason": "overflow", "aborted": false, "willRetry": true})(p) && lsptest.Fields(p)["result"] != nil
			}))
			got := appended(t, before, path)
			types := make([]string, len(got))
			for i, g := range got {
				types[i], _ = g["type"].(string)
			}
			if strings.Join(types, ",") != "message,message,context_edit,compaction" {
				t.Fatalf("pi-lsp wrote %v, Pi wrote message,message,context_edit,compaction", types)
			}
			failed, omission, comp := got[1], got[2], got[3]
			if omission["targetId"] != failed["id"] || omission["parentId"] != failed["id"] || omission["replacement"] != nil {
				t.Errorf("omission %v, want Pi's: target and parent the failed answer %v, replacement null", omission, failed["id"])
			}
			if comp["parentId"] != omission["id"] {
				t.Errorf("compaction parent %v, want the omission %v", comp["parentId"], omission["id"])
			}
			if comp["firstKeptEntryId"] != piCompaction.FirstKeptEntryID {
				t.Errorf("compaction keeps from %v, Pi's from %s", comp["firstKeptEntryId"], piCompaction.FirstKeptEntryID)
			}
			for _, m := range sessiontest.Index(t, path).BuildContext("").Messages {
				if m.Role == session.RoleAssistant && (m.StopReason == "error" || m.StopReason == "length") {
					t.Errorf("the failed answer is still in the context")
				}
			}
		})
	}
}
