package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// Helpers shared by the package's tests: running a subcommand in process, and reading
// the context the CLI reports beside the one Pi's library builds.

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// cli runs a subcommand in process and decodes its JSON output.
func cli(t *testing.T, out any, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("pi-lsp %v: exit %d: %s", args, code, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("pi-lsp %v: %v: %.300s", args, err, stdout.String())
	}
}

type ctxMsg struct{ id, role string }

// contextOrder is the context's entries in order with their message's role.
func contextOrder(t *testing.T, path string) []ctxMsg {
	t.Helper()
	ix := sessiontest.Index(t, path)
	proj := session.ProjectPath(ix.LeafPath())
	var out []ctxMsg
	for _, u := range proj.Entries {
		if len(u.Messages) == 0 || u.Entry.Type != session.TypeMessage {
			continue
		}
		out = append(out, ctxMsg{u.Entry.ID, u.Messages[0].Role})
	}
	return out
}

// sameContextAsPi checks that the CLI's context of path (its messages and tokens) is the
// one Pi's library builds of the file after step, and returns the CLI's messages and
// Pi's projected tokens.
func sameContextAsPi(t *testing.T, o *oracle.Oracle, path, step string) ([]json.RawMessage, json.RawMessage) {
	t.Helper()
	var want struct {
		Messages  []json.RawMessage `json:"messages"`
		Projected json.RawMessage   `json:"projectedTokens"`
		IDs       []string          `json:"ids"`
	}
	o.Query(t, map[string]any{"op": "context", "file": path}, &want)
	var got struct {
		Messages []json.RawMessage `json:"messages"`
		Tokens   json.RawMessage   `json:"tokens"`
	}
	cli(t, &got, "context", path, "--json")
	oracle.SameJSON(t, "context after "+step, got.Messages, want.Messages, want.IDs, want.IDs)
	oracle.SameJSON(t, "tokens after "+step, got.Tokens, want.Projected, want.IDs, want.IDs)
	return got.Messages, want.Projected
}

// contextSizes is the CLI's context-size listing of a session (--json).
type contextSizes struct {
	Tokens   float64        `json:"tokens"`
	Messages []sizedMessage `json:"messages"`
}

type sizedMessage struct {
	EntryID     string `json:"entryId"`
	Role        string `json:"role"`
	Tokens      int    `json:"tokens"`
	Editable    bool   `json:"editable"`
	ContextEdit string `json:"contextEdit"`
}

// contextSize runs context-size on path, or fails the test.
func contextSize(t *testing.T, path string) contextSizes {
	t.Helper()
	var sizes contextSizes
	cli(t, &sizes, "context-size", path, "--json")
	return sizes
}

// first is the entry id of the first message that match accepts ("" for none).
func (c contextSizes) first(match func(sizedMessage) bool) string {
	for _, m := range c.Messages {
		if match(m) {
			return m.EntryID
		}
	}
	return ""
}

// isolatedCopy gives the test its own $HOME and Pi agent dir (package isolate) and
// returns a copy of the corpus file rel (e.g. "genuine-1.6/system-tools.jsonl").
func isolatedCopy(t *testing.T, rel string) string {
	t.Helper()
	isolate.Setup(t)
	return corpus.Copy(t, rel)
}
