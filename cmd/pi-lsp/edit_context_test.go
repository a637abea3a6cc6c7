package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// An omission, a replacement and a restore made with `pi-lsp edit-context` on copies of
// genuine Pi 1.6.0 sessions are taken by Pi 1.6.0 as its own:
//   - Pi's library (buildSessionProjection / buildSessionContext) builds exactly the
//     context `pi-lsp context --json` reports after each edit, and Pi's
//     estimateProjectedContextTokens equals tokensBefore and tokensAfter;
//   - the real pi 1.6.0 CLI's next request to the model lacks the omitted message,
//     carries the replacement text, and after the restore the original again.
func TestEditContextMatchesPi16(t *testing.T) {
	o := oracle.NeedLive(t) // answers about edited temp files have no goldens
	cases := []struct {
		file, role, wireRole string
	}{
		{"system-tools.jsonl", session.RoleToolResult, "tool"},
		{"compact-twice.jsonl", session.RoleAssistant, "assistant"}, // in the context after two compactions
		{"context-edits.jsonl", session.RoleUser, "user"},           // a file Pi already edited
	}
	for _, tc := range cases {
		t.Run(tc.file+"/"+tc.role, func(t *testing.T) {
			path := corpus.Copy(t, "genuine-1.6/"+tc.file)
			// The largest unedited message of the role, from the listing.
			sizes := contextSize(t, path)
			target := sizes.first(func(m sizedMessage) bool { return m.Role == tc.role && m.Editable && m.ContextEdit == "" })
			if target == "" {
				t.Fatalf("no %s message in the context", tc.role)
			}
			f, err := session.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			tm, err := session.NewIndex(f).Entry(target).Message()
			if err != nil {
				t.Fatal(err)
			}
			original := tm.Text("")
			replacement := "REPLACED-" + target + ": the long output, cut by the user"

			piTokens := func() float64 {
				var want struct {
					Projected struct {
						Tokens float64 `json:"tokens"`
					} `json:"projectedTokens"`
				}
				o.Query(t, map[string]any{"op": "context", "file": path}, &want)
				return want.Projected.Tokens
			}
			if got := piTokens(); got != sizes.Tokens {
				t.Errorf("context-size figure %v, Pi's %v", sizes.Tokens, got)
			}
			steps := []struct {
				args []string
				// want: the text the target's wire message must have, "" for none.
				want string
			}{
				{[]string{"--omit"}, ""},
				{[]string{"--replace", replacement}, replacement},
				{[]string{"--restore"}, original},
			}
			for _, st := range steps {
				before := piTokens()
				var res struct {
					Entry struct {
						Type     string `json:"type"`
						TargetID string `json:"targetId"`
					} `json:"entry"`
					TokensBefore float64 `json:"tokensBefore"`
					TokensAfter  float64 `json:"tokensAfter"`
				}
				cli(t, &res, append([]string{"edit-context", path, target, "--json"}, st.args...)...)
				if res.Entry.Type != "context_edit" || res.Entry.TargetID != target {
					t.Fatalf("%v: entry %+v", st.args, res.Entry)
				}
				if res.TokensBefore != before {
					t.Errorf("%v: tokensBefore %v, Pi's estimate %v", st.args, res.TokensBefore, before)
				}

				// Pi's library on the edited file.
				_, projected := sameContextAsPi(t, o, path, st.args[0])
				var pt struct {
					Tokens float64 `json:"tokens"`
				}
				_ = json.Unmarshal(projected, &pt)
				if res.TokensAfter != pt.Tokens {
					t.Errorf("%v: tokensAfter %v, Pi's estimate %v", st.args, res.TokensAfter, pt.Tokens)
				}

				// The real pi CLI's next request to the model.
				r := oracle.InspectPrompt(t, path, "SCRIPT:chat CHARS=40 after the edit")
				if r.Request == nil {
					t.Fatalf("%v: no request", st.args)
				}
				var withOriginal, withReplacement int
				for _, m := range r.Request.Messages {
					if m.Role != tc.wireRole {
						continue
					}
					if m.Text == original {
						withOriginal++
					}
					if strings.Contains(m.Text, replacement) {
						withReplacement++
					}
				}
				switch st.want {
				case "":
					if withOriginal != 0 || withReplacement != 0 {
						t.Errorf("after --omit Pi still sent the message (%d original, %d replaced)", withOriginal, withReplacement)
					}
				case replacement:
					if withOriginal != 0 || withReplacement != 1 {
						t.Errorf("after --replace Pi sent %d original, %d replaced", withOriginal, withReplacement)
					}
				default:
					if withOriginal != 1 || withReplacement != 0 {
						t.Errorf("after --restore Pi sent %d original, %d replaced", withOriginal, withReplacement)
					}
				}
			}
		})
	}
}

// Usage errors exit 2; refusals exit 1 with one clear line and leave the file alone.
func TestEditContextRefusals(t *testing.T) {
	path := corpus.Copy(t, "genuine-1.6/system-tools.jsonl")
	data := sessiontest.Read(t, path)
	f := sessiontest.Load(t, path)
	var system, model string
	for _, e := range f.Entries {
		if e.Role() == session.RoleSystem && system == "" {
			system = e.ID
		}
		if e.Type == session.TypeModelChange && model == "" {
			model = e.ID
		}
	}
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"edit-context", path}, 2, "usage:"},
		{[]string{"edit-context", path, system}, 2, "usage:"},
		{[]string{"edit-context", path, system, "--omit", "--restore"}, 2, "usage:"},
		{[]string{"edit-context", path, system, "--bogus"}, 2, ""},
		{[]string{"edit-context", path, "deadbeef", "--omit"}, 1, "entry deadbeef not found"},
		{[]string{"edit-context", path, system, "--replace", "x"}, 1, "does not contribute editable model content"},
		{[]string{"edit-context", path, model, "--omit"}, 1, "does not contribute editable model content"},
		{[]string{"edit-context", path, f.Entries[len(f.Entries)-1].ID, "--restore"}, 1, "is not edited"},
		{[]string{"context-size"}, 2, "usage:"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", c.args[2:], code, stderr, c.code, c.msg)
		}
		if code != 0 && strings.Count(strings.TrimSpace(stderr), "\n") > 0 && c.code == 1 {
			t.Errorf("%v: more than one line: %q", c.args, stderr)
		}
	}
	if after := sessiontest.Read(t, path); !bytes.Equal(after, data) {
		t.Fatal("a refused edit changed the file")
	}
}
