package compaction_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

// Pi 1.6.0 takes the compactions pi-lsp writes (by the extractive summarizer, the OpenAI
// summarizer with usage, and a hook) on genuine 1.6.0 sessions as its own:
//   - the entry has Pi's fields in Pi's order, with the systemMessage checkpoint (the
//     replay of the session's system messages, at the entry's time) and a usage with cost;
//   - Pi's library builds exactly the context pi-lsp reports, the checkpoint first;
//   - the real pi 1.6.0 CLI opens it, answers get_session_stats, and for the next user
//     message sends the full system prompt and every tool, declaring no tool again (a
//     compaction without the checkpoint makes Pi declare the whole prompt anew).
func TestPi16TakesOurCompactionAsItsOwn(t *testing.T) {
	o := liveOracle(t)
	cases := []struct {
		file string
		keep int
		how  string
	}{
		{"genuine-1.6/system-tools.jsonl", 200, "extractive"},
		{"genuine-1.6/context-edits.jsonl", 150, "openai"},
		{"genuine-1.6/compact-twice.jsonl", 150, "hook"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%s", tc.file, tc.how), func(t *testing.T) {
			path := corpusCopy(t, tc.file)
			opt := compaction.RunOptions{Settings: settings(tc.keep, 16384), Summarizer: compaction.Extractive{}}
			switch tc.how {
			case "openai":
				isolate.Setup(t)
				t.Setenv("PI_LSP_TEST_KEY", "sk-test")
				srv := newFakeLLM(t, sayWith("## Goal\nModel summary.", streamOpts{}))
				s, _, err := service.SummarizerConfig{Kind: "openai", BaseURL: srv.URL(), Model: "fake-model", APIKeyEnv: "PI_LSP_TEST_KEY"}.Build(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				opt.Summarizer = s
			case "hook":
				opt.Hook = func(ctx context.Context, p *compaction.Preparation) (compaction.HookDecision, error) {
					return compaction.HookDecision{Outcome: &compaction.Outcome{Summary: "## Goal\nFrom the editor.", FirstKeptEntryID: p.FirstKeptEntryID, TokensBefore: p.TokensBefore}}, nil
				}
			}
			res, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), opt)
			if err != nil {
				t.Fatal(err)
			}

			// The entry as written.
			var keys []string
			var entry map[string]json.RawMessage
			raw := res.Entry.Raw()
			if err := json.Unmarshal(raw, &entry); err != nil {
				t.Fatal(err)
			}
			keys = topKeys(t, raw)
			want := []string{"type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook", "systemMessage"}
			if tc.how == "openai" {
				want = []string{"type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "details", "usage", "fromHook", "systemMessage"}
			}
			if !reflect.DeepEqual(keys, want) {
				t.Errorf("keys %v, want Pi's %v", keys, want)
			}
			if tc.how == "openai" && !strings.Contains(string(entry["usage"]), `"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0,"totalFromProvider":false}`) {
				t.Errorf("usage without Pi's cost: %s", entry["usage"])
			}
			var sys struct {
				Role       string            `json:"role"`
				Sections   map[string]string `json:"sections"`
				ToolsAdded []struct {
					Name string `json:"name"`
				} `json:"toolsAdded"`
				Timestamp float64 `json:"timestamp"`
			}
			if err := json.Unmarshal(entry["systemMessage"], &sys); err != nil || sys.Role != "system" || len(sys.ToolsAdded) == 0 || len(sys.Sections) == 0 {
				t.Fatalf("systemMessage %s (%v)", entry["systemMessage"], err)
			}
			if ms, _ := session.ParseJSDate(res.Entry.Timestamp); ms != sys.Timestamp {
				t.Errorf("systemMessage timestamp %v, the entry's time %v", sys.Timestamp, ms)
			}

			// Pi's library builds the context pi-lsp reports.
			pi := o.PiLoad(t, path)
			f, err := session.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			c := session.NewIndex(f).BuildContext("")
			if got, want := decodeAll(t, raws(c.Messages)), decodeAll(t, pi.Messages); !reflect.DeepEqual(got, want) {
				t.Fatalf("context differs from Pi 1.6.0's")
			}
			if len(c.Messages) < 2 || c.Messages[0].Role != session.RoleSystem || c.Messages[1].Role != session.RoleCompactionSummary {
				t.Fatalf("context does not start with the checkpoint and the summary")
			}

			// The real CLI: stats, and the next request.
			r := oracle.InspectPrompt(t, path, "SCRIPT:chat CHARS=40 after the compaction")
			if r.Stats == nil || r.Stats["tokens"] == nil {
				t.Errorf("get_session_stats: %v", r.Stats)
			}
			if r.Request == nil {
				t.Fatal("no request")
			}
			var names []string
			for _, tl := range sys.ToolsAdded {
				names = append(names, tl.Name)
			}
			if !reflect.DeepEqual(r.Request.Tools, names) {
				t.Errorf("the request's tools %v, the checkpoint's %v", r.Request.Tools, names)
			}
			for name, text := range sys.Sections {
				// cwd and docs name the session's directory and Pi's install path, which
				// differ where the CLI runs here (Pi then patches just those two).
				if name != "cwd" && name != "docs" && !strings.Contains(r.Request.System, text) {
					t.Errorf("the request's system prompt lacks section %s", name)
				}
			}
			if len(r.Request.Messages) == 0 || !strings.Contains(r.Request.Messages[0].Text, res.Outcome.Summary) {
				t.Errorf("the request does not start with the summary: %+v", r.Request.Messages)
			}
			for _, a := range r.Request.RedeclaredTools() {
				t.Errorf("Pi declared tools again after the compaction: %.300s", a)
			}
		})
	}
}

// topKeys lists the members of a JSON object in order.
func topKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// Files pi-lsp writes still load in Pi 0.73.1, for people on the old package: a
// compaction with its checkpoint and a usage with cost, on a genuine 1.6.0 session and
// on a 0.73-era one, opens with every entry, pi-lsp's leaf and the summary first.
func TestOurCompactionStillLoadsInPi073(t *testing.T) {
	o := oracle.StartLegacy(t)
	if !o.Live() {
		liveOracle(t) // skips, or fails under PI_LSP_REQUIRE_ORACLE=1, as the others do
		t.Skip("needs the live Pi 0.73.1 oracle")
	}
	for _, file := range []string{"genuine-1.6/system-tools.jsonl", "genuine/full-main.jsonl"} {
		t.Run(file, func(t *testing.T) {
			path := corpusCopy(t, file)
			res, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{Settings: settings(200, 16384), Summarizer: compaction.Extractive{}})
			if err != nil {
				t.Fatal(err)
			}
			pi := o.PiLoad(t, path)
			f := sessiontest.Load(t, path)
			if pi.NewSession || pi.Rewritten || pi.EntryCount != len(f.Entries) || pi.LeafID == nil || *pi.LeafID != res.Entry.ID {
				t.Fatalf("Pi 0.73.1: new session %v, rewritten %v, %d entries of %d, leaf %v (want %s)", pi.NewSession, pi.Rewritten, pi.EntryCount, len(f.Entries), pi.LeafID, res.Entry.ID)
			}
			var first struct {
				Role    string `json:"role"`
				Summary string `json:"summary"`
			}
			if len(pi.Messages) == 0 || json.Unmarshal(pi.Messages[0], &first) != nil || first.Role != "compactionSummary" || first.Summary != res.Outcome.Summary {
				t.Errorf("Pi 0.73.1's context does not start with the summary")
			}
		})
	}
}
