package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// Every command in the table: an unknown flag, a missing argument, an extra argument
// and a bad flag value are usage errors (exit 2), printed once, followed by the
// command's own usage line; nothing goes to stdout.
func TestUsageErrorsEveryCommand(t *testing.T) {
	isolate.Setup(t)
	t.Chdir(t.TempDir())
	for _, c := range commands {
		req, opt := c.positionals()
		placeholders := func(names []string) []string {
			out := make([]string, len(names))
			for i := range names {
				out[i] = "./no-such-" + strings.ToLower(names[i]) + ".jsonl"
			}
			return out
		}
		all := append(placeholders(req), placeholders(opt)...)
		cases := []struct {
			name string
			args []string
			msg  string
		}{
			{"unknown flag", append([]string{c.name, "--no-such-flag"}, all...), "flag provided but not defined: -no-such-flag"},
			{"unknown flag after the arguments", append(append([]string{c.name}, all...), "-no-such-flag"), "flag provided but not defined: -no-such-flag"},
			{"extra argument", append(append([]string{c.name}, all...), "extra"), `unexpected argument "extra"`},
		}
		if len(req) > 0 {
			cases = append(cases, struct {
				name string
				args []string
				msg  string
			}{"missing argument", []string{c.name}, "missing " + strings.Join(req, " ")})
		}
		for _, tc := range cases {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				code, out, errOut := runCLI(t, tc.args...)
				if code != 2 || out != "" {
					t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit 2", tc.args, code, out, errOut)
				}
				if n := strings.Count(errOut, tc.msg); n != 1 {
					t.Errorf("%v: %q %d times in %q", tc.args, tc.msg, n, errOut)
				}
				want := "pi-lsp " + c.name + ": " + tc.msg + "\nusage: pi-lsp " + c.usage + "\n"
				if errOut != want {
					t.Errorf("%v: stderr %q, want %q", tc.args, errOut, want)
				}
			})
		}
	}
	// Bad flag values.
	for _, args := range [][]string{
		{"compact", "x.jsonl", "--keep-recent", "many"},
		{"navigate", "x.jsonl", "id", "--budget=lots"},
		{"context-size", "x.jsonl", "--limit", "ten"},
		{"gen", "--entries", "x"},
		{"tree", "x.jsonl", "--json=maybe"},
		{"compact", "x.jsonl", "--leaf"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 2 || out != "" || strings.Count(errOut, "pi-lsp "+args[0]+": ") != 1 || !strings.Contains(errOut, "\nusage: pi-lsp "+args[0]+" ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// The usage lines name the positional arguments the table's commands check.
func TestPositionalsFromUsage(t *testing.T) {
	want := map[string][2][]string{
		"serve": {nil, nil}, "sessions": {nil, nil}, "version": {nil, nil}, "gen": {nil, nil}, "demo": {nil, nil}, "commands": {nil, nil},
		"tree": {{"FILE"}, nil}, "context": {{"FILE"}, nil}, "files": {{"FILE"}, nil}, "compact": {{"FILE"}, nil},
		"undo-compaction": {{"FILE"}, nil}, "context-size": {{"FILE"}, nil}, "bench-file": {{"FILE"}, nil}, "clear-tool-output": {{"FILE"}, nil},
		"navigate": {{"FILE", "TARGET_ID"}, nil}, "edit-context": {{"FILE", "ENTRY_ID"}, nil},
		"label": {{"FILE", "ENTRY_ID"}, {"TEXT"}}, "rewind": {{"FILE"}, {"ENTRY_ID"}}, "condense": {{"FILE", "FROM_ID"}, {"TO_ID"}},
	}
	for _, c := range commands {
		req, opt := c.positionals()
		w, ok := want[c.name]
		if !ok {
			t.Errorf("%s: not in this test's table", c.name)
			continue
		}
		if !reflect.DeepEqual(req, w[0]) || !reflect.DeepEqual(opt, w[1]) {
			t.Errorf("%s: positionals %v %v, want %v %v", c.name, req, opt, w[0], w[1])
		}
	}
}

func TestVersionFlags(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}, {"-version"}} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 || out != "pi-lsp "+Version+"\n" || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// -h and --help print the command's usage, FILE's forms and its flags to stdout and exit
// 0, whatever the command does with the parse error.
func TestHelpEveryCommand(t *testing.T) {
	isolate.Setup(t)
	for _, c := range commands {
		if c.name == "serve" {
			continue // pi-lsp serve -h is pi-lsp -h: the whole usage
		}
		for _, h := range []string{"-h", "--help"} {
			code, out, errOut := runCLI(t, c.name, h)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: pi-lsp "+c.usage+"\n") {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q", c.name, h, code, out, errOut)
			}
			if c.takesFile() != strings.Contains(out, "-continue") {
				t.Errorf("%s %s: -c listed %v: %s", c.name, h, !c.takesFile(), out)
			}
		}
	}
}

// here is a working directory (the test's cwd) whose Pi sessions folder holds copies of
// corpus sessions, the later names the newer (mtime); paths maps name to file.
type here struct {
	dirs  isolate.Dirs
	cwd   string
	paths map[string]string
}

func sessionsHere(t *testing.T, names ...string) here {
	t.Helper()
	d := isolate.Setup(t)
	cwd := filepath.Join(d.Root, "proj")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	h := here{dirs: d, cwd: cwd, paths: map[string]string{}}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, n := range names {
		p := corpus.InstallWithCwd(t, corpus.Genuine(n), session.SessionDir(d.AgentDir, cwd), cwd)
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		h.paths[n] = p
	}
	return h
}

const (
	twiceID = "01a22765-e758-75fd-89c8-6774c417149b" // compact-twice.jsonl
	treeID  = "01a22765-fd95-762e-add2-7cba34ec6ee3" // tree-nav.jsonl
)

// FILE is a path (absolute or relative), a full session id, the start of one, or left
// out with -c / --continue (the newest file of the working directory's sessions): the
// read-only commands print the same for each.
func TestFileFormsReadOnly(t *testing.T) {
	h := sessionsHere(t, "tree-nav", "compact-twice")
	twice := h.paths["compact-twice"]
	rel, err := filepath.Rel(h.cwd, twice)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"tree", "--json"}, {"context", "--json"}, {"files"}, {"context-size"}, {"compact", "--dry-run", "--keep-recent", "50"}, {"navigate", "cf45f48f", "--dry-run"}, {"rewind", "cf45f48f", "--dry-run", "--json"}, {"condense", "cf45f48f", "03577fa2", "--dry-run", "--summarizer", "extractive", "--json"}, {"clear-tool-output", "--dry-run", "--keep-recent-tokens", "1", "--min-tokens", "1", "--json"}} {
		_, want, _ := runCLI(t, append([]string{cmd[0], twice}, cmd[1:]...)...)
		if want == "" {
			t.Fatalf("%v: no output", cmd)
		}
		for _, form := range [][]string{{rel}, {twiceID}, {"01a22765-e7"}, {"-c"}, {"--continue"}} {
			args := append(append([]string{cmd[0]}, form...), cmd[1:]...)
			code, out, errOut := runCLI(t, args...)
			if code != 0 || out != want || errOut != "" {
				t.Errorf("%v: exit %d, stderr %q, stdout differs: %v", args, code, errOut, out != want)
			}
		}
	}
	// bench-file's figures are timings: it takes the forms too.
	if code, out, errOut := runCLI(t, "bench-file", "-c"); code != 0 || !strings.Contains(out, `"file":"`+twice+`"`) {
		t.Errorf("bench-file -c: exit %d %s %s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "tree", "01a22765-fd", "--json"); code != 0 || !strings.Contains(out, "9e8d20a8") {
		t.Errorf("tree of tree-nav by prefix: exit %d %s", code, out)
	}
}

// The commands that write take the same forms and write to the session they name.
func TestFileFormsWrite(t *testing.T) {
	for _, tc := range []struct {
		args []string
		last string // the type of the entry written
	}{
		{[]string{"label", "-c", "cf45f48f", "kept"}, session.TypeLabel},
		{[]string{"label", "01a22765-e7", "cf45f48f"}, session.TypeLabel},
		{[]string{"edit-context", "--continue", "cf45f48f", "--omit"}, session.TypeContextEdit},
		{[]string{"edit-context", twiceID, "cf45f48f", "--replace", "x"}, session.TypeContextEdit},
		{[]string{"navigate", "-c", "487b4360"}, ""},
		{[]string{"undo-compaction", "01a22765-e758"}, session.TypeCustom},
		// The session's model (fake) is in no catalog: the extractive summary, chosen here
		// so that the line saying the model cannot be used is not printed.
		{[]string{"compact", "-c", "--keep-recent", "15", "--summarizer", "extractive"}, session.TypeCompaction},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			h := sessionsHere(t, "tree-nav", "compact-twice")
			other := sessiontest.Read(t, h.paths["tree-nav"])
			before := sessiontest.Read(t, h.paths["compact-twice"])
			code, _, errOut := runCLI(t, tc.args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			after := sessiontest.Read(t, h.paths["compact-twice"])
			if len(after) <= len(before) || !bytes.Equal(after[:len(before)], before) {
				t.Fatal("the session named was not appended to")
			}
			if last := sessiontest.Last(t, h.paths["compact-twice"]); tc.last != "" && last.Type != tc.last {
				t.Errorf("last entry %s", last.Raw())
			}
			if !bytes.Equal(sessiontest.Read(t, h.paths["tree-nav"]), other) {
				t.Error("another session changed")
			}
		})
	}
}

// Every command that takes FILE is covered by the two tests above.
func TestFileFormsCoverEveryCommand(t *testing.T) {
	covered := []string{"tree", "context", "files", "context-size", "compact", "navigate", "bench-file", "label", "edit-context", "undo-compaction", "clear-tool-output", "rewind", "condense"}
	for _, c := range commands {
		if c.takesFile() && !slices.Contains(covered, c.name) {
			t.Errorf("%s takes FILE but no test runs it with an id or -c", c.name)
		}
	}
}

// A prefix two sessions share is refused with both listed; an id no session has, and -c
// where the directory has no session, are refusals too (exit 1); -c with a FILE is a
// usage error.
func TestFileFormsRefused(t *testing.T) {
	h := sessionsHere(t, "tree-nav", "compact-twice")
	code, out, errOut := runCLI(t, "tree", "01a22765")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, `pi-lsp tree: session "01a22765" is ambiguous: 2 sessions in this project's sessions match`) {
		t.Errorf("ambiguous: exit %d, stderr %q", code, errOut)
	}
	for _, s := range []string{twiceID, treeID, h.paths["tree-nav"], h.paths["compact-twice"]} {
		if !strings.Contains(errOut, s) {
			t.Errorf("the refusal does not list %s: %s", s, errOut)
		}
	}
	// The newest activity first (Pi's list order): the one pi --session would take.
	first, second := twiceID, treeID
	a, _ := session.Describe(h.paths["compact-twice"])
	b, _ := session.Describe(h.paths["tree-nav"])
	if b.Modified.After(a.Modified) {
		first, second = second, first
	}
	if strings.Index(errOut, first) > strings.Index(errOut, second) {
		t.Errorf("candidates out of Pi's list order: %s", errOut)
	}
	before := sessiontest.Read(t, h.paths["compact-twice"])
	if code, _, errOut := runCLI(t, "label", "01a22765", "cf45f48f", "x"); code != 1 || !strings.Contains(errOut, "ambiguous") {
		t.Errorf("label with an ambiguous prefix: exit %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "edit-context", "01a22765", "cf45f48f", "--omit"); code != 1 || !strings.Contains(errOut, "ambiguous") {
		t.Errorf("edit-context with an ambiguous prefix: exit %d %s", code, errOut)
	}
	if !bytes.Equal(before, sessiontest.Read(t, h.paths["compact-twice"])) {
		t.Error("a refused write changed the session")
	}
	if code, _, errOut := runCLI(t, "context", "zzzz"); code != 1 || errOut != "pi-lsp context: no session found matching 'zzzz' (neither in this project's sessions nor in any other project's)\n" {
		t.Errorf("unknown id: exit %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "tree", "-c", h.paths["tree-nav"]); code != 2 || !strings.Contains(errOut, "one too many") {
		t.Errorf("-c and FILE: exit %d %q", code, errOut)
	}
	empty := filepath.Join(h.cwd, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(empty)
	if code, _, errOut := runCLI(t, "context-size", "-c"); code != 1 || !strings.Contains(errOut, "no session found to continue in ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("-c without sessions: exit %d %q", code, errOut)
	}
	// From here the sessions are another project's: an id still finds them, a prefix two
	// of them share is still ambiguous.
	if code, out, errOut := runCLI(t, "tree", "01a22765-e7", "--json"); code != 0 || !strings.Contains(out, "863e33c2") {
		t.Errorf("another project's session: exit %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "tree", "01a22765"); code != 1 || !strings.Contains(errOut, "the sessions of all projects match") {
		t.Errorf("ambiguous across projects: exit %d %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "tree", "01a22765-e7", "--progress")
	if code != 0 || !strings.Contains(errOut, "pi-lsp tree: session "+twiceID+" of another project ("+h.cwd+"): "+h.paths["compact-twice"]+"\n") {
		t.Errorf("--progress: exit %d %q", code, errOut)
	}
}

// Progress lines go to a stderr that is not a terminal only with --progress, and never
// with --quiet; the note of which session an id named goes with them.
func TestProgressLinesFlags(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		shown bool
	}{{nil, false}, {[]string{"--progress"}, true}, {[]string{"--quiet"}, false}, {[]string{"--progress", "--quiet"}, false}} {
		h := sessionsHere(t, "compact-twice")
		code, _, errOut := runCLI(t, append([]string{"compact", "-c", "--keep-recent", "15"}, tc.flags...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.flags, code, errOut)
		}
		lines := strings.Count(errOut, "pi-lsp compact: ")
		if tc.shown != (lines > 0) || tc.shown != strings.Contains(errOut, "pi-lsp compact: preparing (") {
			t.Errorf("%v: stderr %q", tc.flags, errOut)
		}
		if tc.shown != strings.Contains(errOut, "pi-lsp compact: session "+h.paths["compact-twice"]+"\n") {
			t.Errorf("%v: the note of the session: %q", tc.flags, errOut)
		}
	}
}
