package compaction_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/modelapi"
)

type summaryModel struct {
	ContextWindow int  `json:"contextWindow"`
	MaxTokens     int  `json:"maxTokens"`
	Reasoning     bool `json:"reasoning"`
}

type piSummaryAnswer struct {
	Requests []struct {
		Path string `json:"path"`
		Body any    `json:"body"`
	} `json:"requests"`
	Result *struct {
		Summary          string         `json:"summary"`
		FirstKeptEntryID string         `json:"firstKeptEntryId"`
		TokensBefore     float64        `json:"tokensBefore"`
		Usage            map[string]any `json:"usage"`
	} `json:"result"`
	Error *string `json:"error"`
}

// withModelDefaults fills what Pi's custom models default to.
func withModelDefaults(m summaryModel) summaryModel {
	if m.ContextWindow == 0 {
		m.ContextWindow = 128000
	}
	if m.MaxTokens == 0 {
		m.MaxTokens = 16384
	}
	return m
}

// summaryConfig is pi-lsp's OpenAI summarizer aimed at srv, for the model Pi was given.
func summaryConfig(srv *modelapi.Server, m summaryModel) fakemodel.OpenAIConfig {
	cfg := fastConfig(srv.URL + "/v1")
	cfg.Model, cfg.ContextWindow, cfg.MaxTokens, cfg.Reasoning, cfg.MaxRetries = "summary-model", m.ContextWindow, m.MaxTokens, m.Reasoning, -1
	return cfg
}

// sameRequests fails unless pi-lsp sent the request bodies Pi sent, in order.
func sameRequests(t *testing.T, ours []any, pi piSummaryAnswer) {
	t.Helper()
	if len(ours) != len(pi.Requests) {
		t.Fatalf("pi-lsp sent %d requests, Pi %d", len(ours), len(pi.Requests))
	}
	for i := range ours {
		if !reflect.DeepEqual(ours[i], pi.Requests[i].Body) {
			gb, _ := json.MarshalIndent(ours[i], "", " ")
			wb, _ := json.MarshalIndent(pi.Requests[i].Body, "", " ")
			t.Errorf("request %d differs from Pi's\npi-lsp: %.3000s\n    Pi: %.3000s", i+1, gb, wb)
		}
	}
}

// sameFailure checks a failure against Pi's; it reports whether both succeeded.
func sameFailure(t *testing.T, err error, pi piSummaryAnswer) bool {
	t.Helper()
	switch {
	case pi.Error != nil:
		if err == nil || err.Error() != *pi.Error {
			t.Errorf("pi-lsp: %v, Pi fails with %q", err, *pi.Error)
		}
		return false
	case err != nil:
		t.Fatalf("pi-lsp fails (%v), Pi succeeds", err)
	}
	return true
}

// summaryRequest is the oracle request shared by both kinds.
func summaryRequest(op, file, finish string, model summaryModel, level, instructions string) map[string]any {
	req := map[string]any{"op": op, "file": filepath.Join("..", "..", "testdata", "corpus", file),
		"model": model, "answer": "SUMMARY", "finish": finish}
	if level != "" {
		req["thinkingLevel"] = level
	}
	if instructions != "" {
		req["instructions"] = instructions
	}
	return req
}

// What pi-lsp's OpenAI summarizer sends for a preparation is what real Pi 1.6.0 sends for
// it (compact() after prepareCompaction, against the same kind of local server): the
// same request bodies (system prompt, prompt text with its frame and focus, output limit
// clamped to the window, reasoning effort, stream options, store), one after the other
// for a split turn; and the same summary, usage and failure texts.
func TestSummaryRequestsMatchPi16(t *testing.T) {
	o := oracle.Start(t)
	cases := []struct {
		file, level, instructions, finish string
		keep                              int
		model                             summaryModel
	}{
		{file: "genuine-1.6/compact-split.jsonl", keep: 60, instructions: "focus on the split"},
		{file: "genuine-1.6/compact-twice.jsonl", keep: 200},
		{file: "genuine-1.6/context-edits.jsonl", keep: 20, instructions: "keep file names"},
		{file: "genuine-1.6/system-tools.jsonl", keep: 60},
		{file: "genuine-1.6/reasoning.jsonl", keep: 1, level: "high", model: summaryModel{ContextWindow: 40000, MaxTokens: 64000, Reasoning: true}},
		{file: "genuine-1.6/reasoning.jsonl", keep: 1, level: "max", model: summaryModel{ContextWindow: 200000, MaxTokens: 32000, Reasoning: true}},
		{file: "genuine-1.6/reasoning.jsonl", keep: 1, level: "off", model: summaryModel{ContextWindow: 9000, MaxTokens: 8000, Reasoning: true}},
		{file: "genuine-1.6/full-main.jsonl", keep: 100, level: "minimal", model: summaryModel{Reasoning: false}},
		{file: "genuine/full-main.jsonl", keep: 250},
		{file: "genuine/compact-twice.jsonl", keep: 20, instructions: "what changed"},
		{file: "genuine-1.6/compact-split.jsonl", keep: 60, finish: "length"},
		{file: "genuine-1.6/compact-split.jsonl", keep: 60, finish: "tool_calls"},
		{file: "genuine-1.6/full-main.jsonl", keep: 100, finish: "length"},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s/keep=%d/level=%s/finish=%s/window=%d", tc.file, tc.keep, tc.level, tc.finish, tc.model.ContextWindow)
		t.Run(name, func(t *testing.T) {
			finish := cmp.Or(tc.finish, "stop")
			model := withModelDefaults(tc.model)
			req := summaryRequest("summarize", tc.file, finish, model, tc.level, tc.instructions)
			req["keep"] = tc.keep
			var pi piSummaryAnswer
			o.Query(t, req, &pi)

			srv := modelapi.New(t) // the twin of the server test/pi/oracle.mjs gives Pi
			srv.Finish = finish
			prep := prepareFile(t, corpusCopy(t, tc.file), settings(tc.keep, 16384))
			out, err := compaction.Generate(context.Background(), prep, fakemodel.NewOpenAI(summaryConfig(srv, model)),
				compaction.Options{CustomInstructions: tc.instructions, ThinkingLevel: tc.level})
			sameRequests(t, srv.Bodies(), pi)
			if sameFailure(t, err, pi) {
				want := pi.Result.Summary
				if len(prep.MessagesToSummarize) == 0 && prep.HasPrevious {
					// Design divergence 1: Pi keeps the previous summary verbatim with its
					// old file blocks; pi-lsp drops them (fresh, accumulated ones follow).
					want = strings.Replace(want, prep.PreviousSummary, modelapi.WithoutFileBlocks(prep.PreviousSummary), 1)
				}
				if out.Summary != want {
					t.Errorf("summary %q, Pi's %q", out.Summary, want)
				}
				if out.FirstKeptEntryID != pi.Result.FirstKeptEntryID || out.TokensBefore != pi.Result.TokensBefore {
					t.Errorf("firstKept %s tokensBefore %v, Pi's %s %v", out.FirstKeptEntryID, out.TokensBefore, pi.Result.FirstKeptEntryID, pi.Result.TokensBefore)
				}
				if got := oracle.JSONValue(t, out.Usage); !reflect.DeepEqual(got, oracle.JSONValue(t, pi.Result.Usage)) {
					t.Errorf("usage %v, Pi's %v", got, pi.Result.Usage)
				}
			}
		})
	}
}

// The same for branch summaries: generateBranchSummary after
// collectEntriesForBranchSummary, with and without a focus, replacing the prompt, with a
// reasoning model, and its failure texts.
func TestBranchSummaryRequestsMatchPi16(t *testing.T) {
	o := oracle.Start(t)
	cases := []struct {
		file, level, instructions, finish string
		replace                           bool
		targets                           []int
		model                             summaryModel
	}{
		{file: "genuine-1.6/tree-nav.jsonl", targets: []int{1, 4, 9}},
		{file: "genuine-1.6/tree-nav.jsonl", targets: []int{2}, instructions: "what was tried"},
		{file: "genuine-1.6/tree-nav.jsonl", targets: []int{2}, instructions: "ONLY THIS", replace: true},
		{file: "genuine-1.6/context-edits.jsonl", targets: []int{1}},
		{file: "genuine-1.6/system-tools.jsonl", targets: []int{1}},
		{file: "genuine-1.6/reasoning.jsonl", targets: []int{1}, level: "medium", model: summaryModel{ContextWindow: 30000, MaxTokens: 64000, Reasoning: true}},
		{file: "genuine/tree-nav.jsonl", targets: []int{3}},
		{file: "genuine-1.6/tree-nav.jsonl", targets: []int{1}, finish: "length"},
		{file: "genuine-1.6/tree-nav.jsonl", targets: []int{1}, finish: "tool_calls"},
	}
	for _, tc := range cases {
		for _, target := range tc.targets {
			name := fmt.Sprintf("%s/target=%d/level=%s/focus=%q/replace=%v/finish=%s", tc.file, target, tc.level, tc.instructions, tc.replace, tc.finish)
			t.Run(name, func(t *testing.T) {
				finish := cmp.Or(tc.finish, "stop")
				model := withModelDefaults(tc.model)
				req := summaryRequest("branchsummarize", tc.file, finish, model, tc.level, tc.instructions)
				req["targetIndex"], req["replaceInstructions"] = target, tc.replace
				var pi piSummaryAnswer
				o.Query(t, req, &pi)

				f, err := session.Load(corpusCopy(t, tc.file))
				if err != nil {
					t.Fatal(err)
				}
				ix := session.NewIndex(f)
				targetID := ix.Entries()[target].ID
				col := branch.Collect(ix, ix.LeafID(), targetID)
				srv := modelapi.New(t)
				srv.Finish = finish
				sum, err := branch.Generate(context.Background(), col.Entries, fakemodel.NewOpenAI(summaryConfig(srv, model)), branch.SummaryOptions{
					CustomInstructions: tc.instructions, ReplaceInstructions: tc.replace, ContextWindow: model.ContextWindow,
					ThinkingLevel: tc.level,
				})
				sameRequests(t, srv.Bodies(), pi)
				if sameFailure(t, err, pi) {
					if sum.Text != pi.Result.Summary {
						t.Errorf("summary %q, Pi's %q", sum.Text, pi.Result.Summary)
					}
					if got := oracle.JSONValue(t, sum.Usage); len(pi.Requests) > 0 && !reflect.DeepEqual(got, oracle.JSONValue(t, pi.Result.Usage)) {
						t.Errorf("usage %v, Pi's %v", got, pi.Result.Usage)
					}
				}
			})
		}
	}
}
