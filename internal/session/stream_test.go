package session_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// A streamed, parallel Load must see exactly what Parse sees in memory: same entries,
// lines, skipped lines and message metadata, whatever falls on a range or buffer
// boundary (blank lines, CRLF, junk, lines longer than the read buffer, a torn tail).
func TestLoadMatchesParse(t *testing.T) {
	var b strings.Builder
	if err := benchgen.Write(&b, benchgen.Options{Entries: 1500, Seed: 7, BranchEvery: 40, CompactEvery: 300, ImageEvery: 50}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	r := rand.New(rand.NewSource(1))
	var out strings.Builder
	for i, l := range lines {
		out.WriteString(l)
		switch {
		case i == 0:
		case r.Intn(50) == 0:
			out.WriteString("\r\n\n   \t\n") // CRLF, a blank line, a whitespace line
			continue
		case r.Intn(80) == 0:
			out.WriteString("\nnot json\n{\"broken\":\n")
			continue
		case r.Intn(300) == 0:
			// A line longer than the read buffer.
			big := strings.Repeat("x", 3<<20)
			fmt.Fprintf(&out, "\n"+`{"type":"custom","id":"big%d","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","customType":"t","data":"%s"}`, i, big)
		}
		out.WriteString("\n")
	}
	out.WriteString(`{"type":"message","id":"torn","parentId":null,"message":{"role":"us`)
	data := []byte(out.String())
	p := writeFile(t, out.String())

	loaded, parsed := sessiontest.Load(t, p), sessiontest.Parse(t, data)
	if len(loaded.Entries) != len(parsed.Entries) || len(loaded.Entries) < 1500 {
		t.Fatalf("entries: loaded %d, parsed %d", len(loaded.Entries), len(parsed.Entries))
	}
	if fmt.Sprint(loaded.Skipped) != fmt.Sprint(parsed.Skipped) || !loaded.Torn || !parsed.Torn {
		t.Fatalf("skipped: loaded %v torn %v, parsed %v torn %v", loaded.Skipped, loaded.Torn, parsed.Skipped, parsed.Torn)
	}
	if loaded.CompleteSize != parsed.CompleteSize || loaded.EndsWithNewline != parsed.EndsWithNewline {
		t.Fatalf("sizes differ: %d/%v vs %d/%v", loaded.CompleteSize, loaded.EndsWithNewline, parsed.CompleteSize, parsed.EndsWithNewline)
	}
	for i, le := range loaded.Entries {
		pe := parsed.Entries[i]
		if le.ID != pe.ID || le.ParentID != pe.ParentID || le.Type != pe.Type || le.Timestamp != pe.Timestamp || le.Line != pe.Line {
			t.Fatalf("entry %d: loaded %s/%s/%s line %d, parsed %s/%s/%s line %d", i, le.Type, le.ID, le.ParentID, le.Line, pe.Type, pe.ID, pe.ParentID, pe.Line)
		}
		if !bytes.Equal(le.Raw(), pe.Raw()) {
			t.Fatalf("entry %d (%s): bytes differ", i, le.ID)
		}
		if le.Type != session.TypeMessage {
			continue
		}
		lm, _ := le.Message()
		pm, _ := pe.Message()
		if lm.Role != pm.Role || lm.StopReason != pm.StopReason || lm.ToolCallID != pm.ToolCallID ||
			fmt.Sprint(lm.Usage) != fmt.Sprint(pm.Usage) || fmt.Sprint(lm.ToolCalls()) != fmt.Sprint(pm.ToolCalls()) ||
			!bytes.Equal(lm.Raw(), pm.Raw()) || session.EstimateTokens(lm) != session.EstimateTokens(pm) ||
			lm.Text("|") != pm.Text("|") || string(lm.ModelJSON()) != string(pm.ModelJSON()) || string(lm.ProviderJSON()) != string(pm.ProviderJSON()) {
			t.Fatalf("entry %d (%s): message metadata differs", i, le.ID)
		}
	}
	if err := loaded.ReadErr(); err != nil {
		t.Fatal(err)
	}
}

// Entries are read again from the file: appends leave them readable, a rewrite is
// detected and reported instead of returning other bytes.
func TestLoadedEntriesRereadSafely(t *testing.T) {
	p := writeFile(t, header+"\n"+userLine("a", "", "hello")+"\n"+userLine("b", "a", "world")+"\n")
	f, err := session.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(userLine("c", "b", "more") + "\n")
	fh.Close()
	m, _ := f.Entries[1].Message()
	if got := m.Text(""); got != "world" {
		t.Fatalf("after an append: %q", got)
	}
	// Rewritten in place with lines of the same lengths at the same places: the id tells.
	g, err := session.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	rewrittenUnder(t, g, p, header+"\n"+userLine("x", "", "hello")+"\n"+userLine("y", "x", "world")+"\n", "a line with another id was returned")
	// Rewritten in place with other content of the same shape: shifted by one byte.
	rewrittenUnder(t, f, p, header+"\n "+userLine("a", "", "hello")+"\n"+userLine("b", "a", "world")+"\n", "a rewritten file gave bytes")
}

// rewrittenUnder rewrites the file at p, which f was loaded from, with text: f's second
// entry must then give no bytes (what names the failure if it does) and f must report
// ErrRewritten.
func rewrittenUnder(t *testing.T, f *session.File, p, text, what string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if raw := f.Entries[1].Raw(); raw != nil {
		t.Fatalf("%s: %s", what, raw)
	}
	if err := f.ReadErr(); !errors.Is(err, session.ErrRewritten) {
		t.Fatalf("ReadErr = %v, want ErrRewritten", err)
	}
}

// ContextTokensOfPath is the figure Pi 1.6.0 reports (diffed against Pi on the corpus
// in diff_test.go). On generated files with branches, compactions (two sharing an id)
// and images, at every leaf: it is estimateContextTokens of the built context when the
// usage it rests on comes after the newest compaction and context edit, and the sum of
// the estimates, nothing taken from usage, otherwise.
func TestContextTokensOfPathFollowsTheProjectedRule(t *testing.T) {
	var files [][]byte
	for _, o := range []benchgen.Options{
		{Entries: 1200, Seed: 11, BranchEvery: 25, CompactEvery: 150},
		{Entries: 600, Seed: 12, CompactEvery: 40, ImageEvery: 7},
	} {
		var b strings.Builder
		if err := benchgen.Write(&b, o); err != nil {
			t.Fatal(err)
		}
		files = append(files, []byte(b.String()))
	}
	for _, dir := range []string{"genuine", "synthetic"} {
		ms, _ := filepathGlob(dir)
		for _, m := range ms {
			if data, err := os.ReadFile(m); err == nil {
				files = append(files, data)
			}
		}
	}
	// Two compactions sharing an id, taken as a path in file order: Pi finds the
	// compaction by id (the first), and the context follows from there.
	files = append(files, []byte(header+"\n"+strings.Join([]string{
		`{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"one","timestamp":1}}`,
		`{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"text","text":"reply"}],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":100},"stopReason":"stop","timestamp":2}}`,
		`{"type":"compaction","id":"cc","parentId":"a1","summary":"first","firstKeptEntryId":"a1","tokensBefore":100}`,
		`{"type":"message","id":"u2","parentId":"cc","message":{"role":"user","content":"between the two","timestamp":3}}`,
		`{"type":"compaction","id":"cc","parentId":"u2","summary":"second","firstKeptEntryId":"u2","tokensBefore":100}`,
		`{"type":"message","id":"u3","parentId":"cc","message":{"role":"user","content":"after","timestamp":4}}`,
	}, "\n")+"\n"))
	checked := 0
	for _, data := range files {
		f, err := session.Parse(data)
		if err != nil {
			continue
		}
		ix := session.NewIndex(f)
		for i, e := range f.Entries {
			for _, path := range [][]*session.Entry{ix.Path(e.ID), f.Entries[:i+1]} {
				c := session.ContextOfPath(path)
				est := session.EstimateContextTokens(c.Messages)
				want := est.Tokens
				if est.LastUsageIndex == nil || !usageAfterInvalidation(c, path, *est.LastUsageIndex) {
					want = float64(session.EstimateTokens(session.CurrentSystemMessage(c.Messages)))
					for _, m := range c.Messages {
						if m.Role != session.RoleSystem {
							want += float64(session.EstimateTokens(m))
						}
					}
				}
				if got := session.ContextTokensOfPath(path); got != want {
					t.Fatalf("leaf %s (line %d): %v tokens, want %v", e.ID, e.Line, got, want)
				}
			}
			checked++
		}
	}
	if checked < 1800 {
		t.Fatalf("only %d leaves checked", checked)
	}
}

// usageAfterInvalidation: the message at index i of the context comes from an entry
// placed after the last compaction and context edit of the path.
func usageAfterInvalidation(c *session.Context, path []*session.Entry, i int) bool {
	var src *session.Entry
	for _, pe := range c.Entries {
		if i < len(pe.Messages) {
			src = pe.Entry
			break
		}
		i -= len(pe.Messages)
	}
	at, last := -1, -1
	for k, e := range path {
		if src != nil && at < 0 && e.ID == src.ID {
			at = k
		}
		if e.Type == session.TypeCompaction || e.Type == session.TypeContextEdit {
			last = k
		}
	}
	return at > last
}

func filepathGlob(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join("..", "..", "testdata", "corpus", dir, "*.jsonl"))
}

// A line another writer is still appending (Pi appends without a lock, a large line in
// steps) is not a torn tail: an append waits for it rather than starting a fresh line
// after it, which would leave a blank line once the other writer's newline lands.
func TestAppendWaitsForALineBeingWritten(t *testing.T) {
	p := writeFile(t, header+"\n"+userLine("a", "", "hello")+"\n")
	line := userLine("b", "a", strings.Repeat("long ", 2000))
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(line[:len(line)/2]); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(2 * time.Millisecond)
		fh.WriteString(line[len(line)/2:] + "\n")
	}()
	if _, err := session.Append(p, nil, []session.NewEntry{{Type: session.TypeMessage, ParentID: "b",
		Fields: []session.Field{{Key: "message", Value: json.RawMessage(`{"role":"user","content":"after","timestamp":3}`)}}}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if !json.Valid([]byte(l)) {
			t.Fatalf("line %d is not a whole entry: %.80q", i+1, l)
		}
	}
}
