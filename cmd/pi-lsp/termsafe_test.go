package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// evil is what a hostile tool output, label or name carries: an OSC 52 clipboard write,
// an OSC 8 hyperlink, a screen clear (CSI 2J), BEL, a bare CR, a backspace, DEL, a C1 CSI
// (U+009B), a bidi override (U+202E) and an isolate (U+2066). No '/': it also names a
// directory.
const evil = "\x1b]52;c;ZXZpbA==\x07\x1b]8;;https:evil\x07link\x1b]8;;\x07\x1b[2J\a\rover\bX\x7f\u009b31m\u202egnp.exe\u2066x\u2069"

// rawControl is the first character of out a terminal would act on, or "".
func rawControl(out []byte) string {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRune(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return fmt.Sprintf("invalid byte %#x at %d", out[i], i)
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || isUnsafeRune(r):
			return fmt.Sprintf("%U at %d in %q", r, i, out[max(0, i-40):min(len(out), i+40)])
		}
		i += size
	}
	return ""
}

func TestTermSafeEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\nnext":               "plain\ttext\nnext",
		"é ü 日本 😀":                        "é ü 日本 😀",
		"\x1b[2J\a\r\b\x00\x7f":           `\x1b[2J\x07\x0d\x08\x00\u007f`,
		"a\u009bb\u0085":                  `a\u009bb\u0085`,
		"\u202eexe.txt\u2066\u200f\u061c": `\u202eexe.txt\u2066\u200f\u061c`,
		"bad\xff\xc3(":                    `bad\xff\xc3(`,
	} {
		if got := terminalSafeString(in); got != want {
			t.Errorf("terminalSafeString(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTermSafeSplitWrites: a rune split across writes comes out whole, a sequence left
// open at the end comes out escaped at Flush.
func TestTermSafeSplitWrites(t *testing.T) {
	var out bytes.Buffer
	w := newTermSafe(&out)
	in := []byte("日\u202e😀")
	for i := range in {
		if _, err := w.Write(in[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write([]byte("\xe2\x80")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := `日\u202e😀\xe2\x80`; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

// FuzzTermSafe: whatever the input and however it is split into writes, the output has
// no raw control, is the one-write output, and text without controls passes unchanged.
func FuzzTermSafe(f *testing.F) {
	for _, s := range []string{"", "plain\n", evil, "日本\u202e", "\xe2\x80", "\xff\xfe", "\r\n", "\u009b\u0080\u009f", "a\xf0\x9f\x98"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		whole := appendTermSafe(nil, in)
		if c := rawControl(whole); c != "" {
			t.Fatalf("raw control in output of %q: %s", in, c)
		}
		var out bytes.Buffer
		w := newTermSafe(&out)
		n := int(step%7) + 1
		for i := 0; i < len(in); i += n {
			if _, err := w.Write(in[i:min(len(in), i+n)]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), whole) {
			t.Fatalf("split by %d: %q, in one write: %q", n, out.Bytes(), whole)
		}
		if rawControl(in) == "" && !bytes.Equal(whole, in) {
			t.Fatalf("clean input %q changed to %q", in, whole)
		}
	})
}

// evilSession installs a genuine session with evil in its tool outputs, tool paths,
// replies, label, a session name and its header's cwd (a directory whose name has evil
// in it), and returns the child's environment, that directory and the session path.
func evilSession(t *testing.T) (env []string, work, path string) {
	root := t.TempDir()
	d := isolate.Child(t, root, filepath.Join(root, "agent"))
	work = filepath.Join(root, "work"+evil)
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(evil)
	e := strings.Trim(string(js), `"`) // evil as Pi's JSON.stringify writes it
	text := string(sessiontest.Read(t, corpus.Genuine("tree-nav")))
	for _, r := range [][2]string{
		{"notes.txt", "notes" + e + ".txt"},
		{"alpha", "alpha" + e},
		{"chat reply:", "chat reply" + e + ":"},
		{`"label":"checkpoint"`, `"label":"checkpoint` + e + `"`},
	} {
		if !strings.Contains(text, r[0]) {
			t.Fatalf("tree-nav has no %q", r[0])
		}
		text = strings.ReplaceAll(text, r[0], r[1])
	}
	text += `{"type":"session_info","id":"5e551011","parentId":"9e8d20a8","timestamp":"2026-11-29T13:02:09.000Z","name":"name` + e + `"}` + "\n"
	src := filepath.Join(root, "src.jsonl")
	isolate.WriteFile(t, src, text, 0o644)
	path = corpus.InstallWithCwd(t, src, session.SessionDir(d.AgentDir, work), work)
	env = append([]string{"PATH=" + os.Getenv("PATH")}, d.Env()...)
	return env, work, path
}

// TestTerminalSafeEveryCommand runs every command of the built binary on a session full
// of terminal escapes, in human and JSON form, and for the error messages that echo an
// argument or a path: no raw control character reaches stdout or stderr, and the
// escaped form shows that the content did reach the output.
func TestTerminalSafeEveryCommand(t *testing.T) {
	env, work, path := evilSession(t)
	id := sessiontest.Load(t, path).Header.ID
	type step struct {
		args []string
		code int
	}
	ev := "arg" + evil
	var steps []step
	for _, json := range [][]string{nil, {"--json"}} {
		for _, a := range [][]string{
			{"sessions", "--cwd", work},
			{"tree", id, "--progress"},
			{"context", id, "--progress"},
			{"context-size", path, "--leaf", "6411358f"},
			{"files", path, "--leaf", "6411358f"},
			{"compact", path, "--dry-run", "--coverage", "--summarizer", "extractive", "--keep-recent", "200"},
			{"navigate", path, "aef84878", "--dry-run", "--summarize", "--summarizer", "extractive"},
			{"clear-tool-output", path, "--dry-run", "--min-tokens", "0", "--keep-recent-tokens", "0"},
		} {
			steps = append(steps, step{append(a, json...), 0})
		}
	}
	steps = append(steps,
		step{[]string{"compact", path, "--summarizer", "extractive", "--keep-recent", "200", "--instructions", ev}, 0},
		step{[]string{"undo-compaction", path, "--json"}, 0},
		step{[]string{"undo-compaction", path}, 1},
		step{[]string{"navigate", path, "d18786ce", "--summarize", "--summarizer", "extractive", "--label", ev}, 0},
		step{[]string{"label", path, "83b2a5d7", ev}, 0},
		step{[]string{"tree", path}, 0},
		step{[]string{"edit-context", path, "d18786ce", "--replace", ev}, 0},
		step{[]string{"edit-context", path, "d18786ce", "--restore", "--json"}, 0},
		step{[]string{"clear-tool-output", path, "--min-tokens", "0", "--keep-recent-tokens", "0"}, 0},
		step{[]string{"clear-tool-output", path, "--restore", "--json"}, 0},
		step{[]string{"context", path}, 0},
		// Errors that echo an argument or a path.
		step{[]string{"tree", filepath.Join(work, "no"+evil+".jsonl")}, 1},
		step{[]string{"navigate", path, ev}, 1},
		step{[]string{"label", path, ev, "x"}, 1},
		step{[]string{"edit-context", path, ev, "--omit"}, 1},
		step{[]string{"context", path, "--leaf", ev}, 1},
		step{[]string{"tree", path, "--no-such" + evil}, 2},
		step{[]string{"no-such" + evil}, 2},
	)
	var all bytes.Buffer
	for _, s := range steps {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := isolate.GroupCmd(ctx, e2eBinary(t), s.args...)
		cmd.Env, cmd.Dir = env, work
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := isolate.ExitCode(cmd.Run())
		_ = isolate.KillGroup(cmd)
		cancel()
		name := fmt.Sprintf("%q", s.args)
		if code != s.code {
			t.Errorf("%s: exit %d, want %d; stderr:\n%s", name, code, s.code, terminalSafeString(stderr.String()))
		}
		for what, out := range map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()} {
			if c := rawControl(out); c != "" {
				t.Errorf("%s: raw control on %s: %s", name, what, c)
			}
		}
		if s.code == 0 && strings.Contains(strings.Join(s.args, " "), "--json") {
			dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
			for dec.More() {
				var v any
				if err := dec.Decode(&v); err != nil {
					t.Errorf("%s: stdout is not JSON: %v", name, err)
					break
				}
			}
		}
		all.Write(stdout.Bytes())
		all.Write(stderr.Bytes())
	}
	// The session file holds what was given, as Pi writes it: the printer escapes only
	// what reaches the terminal.
	var label, replaced bool
	for _, line := range strings.Split(string(sessiontest.Read(t, path)), "\n") {
		var e struct {
			Type, Label string
			Replacement struct{ Content any }
		}
		_ = json.Unmarshal([]byte(line), &e)
		label = label || (e.Type == "label" && e.Label == ev)
		replaced = replaced || (e.Type == "context_edit" && strings.Contains(fmt.Sprint(e.Replacement.Content), ev))
		if strings.Contains(line, `\\x1b`) || strings.Contains(line, `\\u009b`) {
			t.Errorf("the session file holds the printer's escaped form: %.200s", line)
		}
	}
	if !label || !replaced {
		t.Errorf("the session file lacks the label (%v) or the replacement (%v) exactly as given", label, replaced)
	}
	// The content reached the output, escaped: in JSON as the same characters escaped,
	// in human output in the printer's form.
	for _, want := range []string{`\x1b]52;c;ZXZpbA==\x07`, `\u001b]52;c;ZXZpbA==\u0007`, `\u009b31m\u202egnp.exe`, `\x0dover\x08X\u007f`} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no %s in any output: the session's escapes did not reach it", want)
		}
	}
}

// BenchmarkTermSafe: the writer's throughput on what a command prints, mostly ASCII with
// some non-ASCII text (a tree or a context of a real session).
func BenchmarkTermSafe(b *testing.B) {
	line := []byte("  │  │  3a43cb87 assistant: I'll create notes.txt — naïve café 日本語 [write]\n")
	out := bytes.Repeat(line, 1<<14)
	w := newTermSafe(io.Discard)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Write(out); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEveryCommandPrintsThroughTermSafe: run hands every command of the table (a new one
// too) a terminal-safe stdout and stderr; only rawOutput's commands get the raw stdout.
func TestEveryCommandPrintsThroughTermSafe(t *testing.T) {
	saved := commands
	t.Cleanup(func() { commands = saved })
	commands = append([]command(nil), saved...)
	seen := map[string]bool{}
	for i := range commands {
		name := commands[i].name
		commands[i].run = func(_ context.Context, _ *flag.FlagSet, _ []string, stdout, stderr io.Writer) error {
			seen[name] = true
			_, safeOut := stdout.(*termSafe)
			if safeOut == rawOutput[name] {
				t.Errorf("%s: stdout is %T (raw output: %v)", name, stdout, rawOutput[name])
			}
			if s, ok := stderr.(*cliStderr); !ok {
				t.Errorf("%s: stderr is %T", name, stderr)
			} else if _, ok := s.Writer.(*termSafe); !ok {
				t.Errorf("%s: stderr writes to %T", name, s.Writer)
			}
			fmt.Fprintf(stdout, "%s\x1b[2J\n", name)
			fmt.Fprintf(stderr, "%s\u202e\n", name)
			return nil
		}
	}
	for _, c := range commands {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{c.name}, &out, &errb); code != 0 {
			t.Errorf("%s: exit %d", c.name, code)
		}
		if c := rawControl(errb.Bytes()); c != "" {
			t.Errorf("stderr: %s", c)
		}
		if c2 := rawControl(out.Bytes()); (c2 == "") == rawOutput[c.name] {
			t.Errorf("%s: stdout %q (raw output: %v)", c.name, out.String(), rawOutput[c.name])
		}
	}
	if len(seen) != len(commands) || len(commands) < 15 {
		t.Errorf("ran %d of %d commands", len(seen), len(commands))
	}
}
