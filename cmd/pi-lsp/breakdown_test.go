package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// TestContextSizeByKindAndHistory runs the built binary: `context-size --by kind --json`
// and `--history --json` have the shapes and equal the server's
// pi/contextBreakdown answer on the same session (the same binary serving); the plain
// text lists every kind with its tokens and the total, and every point with its event.
func TestContextSizeByKindAndHistory(t *testing.T) {
	bin := e2eBinary(t)
	e := lsptest.NewEnv(t, lsptest.Config{Binary: bin, Corpus: []string{"compact-twice"}})
	path := e.Sessions["compact-twice"]
	served, err := e.ContextBreakdown(map[string]any{"history": true})
	if err != nil {
		t.Fatal(err)
	}
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("pi-lsp %v: exit %d, want %d: %s", args, code, want, errb.String())
		}
		return out.String(), errb.String()
	}

	out, _ := run(0, "context-size", path, "--by", "kind", "--json")
	var byKind map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &byKind); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(keys(byKind), ","); got != "contextWindow,kinds,leafId,reserveTokens,total,usageTokens" {
		t.Errorf("--by kind --json keys: %s", got)
	}
	var kinds []map[string]any
	_ = json.Unmarshal(byKind["kinds"], &kinds)
	if len(kinds) != len(served.Kinds) {
		t.Fatalf("%d kinds, the server's %d", len(kinds), len(served.Kinds))
	}
	for i, k := range kinds {
		s := served.Kinds[i]
		if len(k) != 3 || k["kind"] != s.Kind || k["tokens"] != float64(s.Tokens) || k["entries"] != float64(s.Entries) {
			t.Errorf("kind %d: %v, the server's %+v", i, k, s)
		}
	}
	if string(byKind["total"]) != fmt.Sprint(served.Total) || string(byKind["contextWindow"]) != fmt.Sprint(served.ContextWindow) {
		t.Errorf("total %s window %s, the server's %d %d", byKind["total"], byKind["contextWindow"], served.Total, served.ContextWindow)
	}

	out, _ = run(0, "context-size", path, "--history", "--json")
	var history []map[string]any
	if err := json.Unmarshal([]byte(out), &history); err != nil {
		t.Fatal(err)
	}
	if len(history) != len(served.History) {
		t.Fatalf("%d points, the server's %d", len(history), len(served.History))
	}
	events := 0
	for i, p := range history {
		s := served.History[i]
		var ev any
		if s.Event != nil {
			ev = *s.Event
			events++
		}
		if len(p) != 4 || p["entryId"] != s.EntryID || p["tokens"] != s.Tokens || p["source"] != s.Source || p["event"] != ev {
			t.Errorf("point %d: %v, the server's %+v", i, p, s)
		}
	}
	if events != 2 {
		t.Errorf("%d events in a session compacted twice", events)
	}

	text, _ := run(0, "context-size", path, "--by", "kind")
	for _, k := range served.Kinds {
		if !strings.Contains(text, "\n"+k.Kind+" ") || !strings.Contains(text, thousands(k.Tokens)) {
			t.Errorf("the table lacks %s (%d):\n%s", k.Kind, k.Tokens, text)
		}
	}
	if !strings.Contains(text, "\ntotal ") || strings.Contains(text, "\x1b[") {
		t.Errorf("no total row, or colour codes:\n%s", text)
	}
	text, _ = run(0, "context-size", path, "--history")
	if strings.Count(text, " compaction (") != 2 {
		t.Errorf("the history text lacks the compactions:\n%s", text)
	}
	run(2, "context-size", path, "--by", "tool")
	run(2, "context-size", path, "--by", "kind", "--history")
}
