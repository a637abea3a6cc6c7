package quality

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// Every directive of the format writes what the Script call it stands for writes.
func TestParseCaseWritesWhatTheScriptCallsWrite(t *testing.T) {
	text := `# a comment
case every-directive
title every directive once
kind branch
target fork
held-out

user Look at the build.
say Sure.
mark fork
do Reading and running.
  read a.go
    content
    | package a
    |
  read b.go
    offset 10
    limit 5
    content "\tx := 1 "
  read-missing c.go
    abs /home/dev/src/every-directive/c.go
  sh go build ./...
  shfail go test ./...
    exit 2
    out
    | --- FAIL: TestA
    | FAIL
  edit a.go
    old
    | package a
    new package b
  edit-miss a.go
    old nothing
    new something
  write d.go
    content
    | package d
    |
  tool todo
    args {"todos":[{"content":"x","status":"pending"}],"n":1.50}
    result Todo list updated.
  tool lint
    error
    | 2 problems
  sh sleep 60
    pending
fail overloaded_error
abort Stopping.
  sh make all
shell ls /tmp
  exit 1
  out
  | x
note todo
  content
  | - [ ] a
compaction fork
  summary
  | ## Goal
  | Build.
  read-file a.go
  modified-file b.go
  modified-file d.go
from fork
branch-summary fork
  summary Tried b.

expect
  goal build
  latest b.go
  constraint no cgo
  constraint "trailing "
  done d.go
  in-progress lint
  blocked overloaded
  next b
  stale FAIL
  entity a.go
  noise <x>
  read-file a.go
  modified-file b.go
`
	c, err := ParseCase("cases/x/every-directive.txt", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := NewScript("every-directive", "/home/dev/src/every-directive")
	want.User("Look at the build.").Say("Sure.").Mark("fork")
	want.Do("Reading and running.",
		Read("a.go", "package a\n"),
		ReadRange("b.go", 10, 5, "\tx := 1 "),
		ReadMissing("c.go", "/home/dev/src/every-directive/c.go"),
		Sh("go build ./...", ""),
		ShFail("go test ./...", "--- FAIL: TestA\nFAIL", 2),
		Edit("a.go", "package a", "package b"),
		EditMiss("a.go", "nothing", "something"),
		Write("d.go", "package d\n"),
		Tool("todo", []kv{{"todos", []any{object{{"content", "x"}, {"status", "pending"}}}}, {"n", 1.50}}, "Todo list updated.", false),
		Tool("lint", nil, "2 problems", true),
		Pending(Sh("sleep 60", "")))
	want.Fail("overloaded_error").Abort("Stopping.", Sh("make all", "")).Shell("ls /tmp", "x", 1).Note("todo", "- [ ] a")
	want.Compaction("## Goal\nBuild.", "fork", []string{"a.go"}, []string{"b.go", "d.go"})
	want.From("fork").BranchSummary("Tried b.", "fork", nil, nil)
	if got := c.Session(); string(got) != string(want.Bytes()) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want.Bytes()), "\n")
		for i := range gl {
			if i < len(wl) && gl[i] != wl[i] {
				t.Fatalf("line %d of the session:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("the sessions differ in length: %d lines, want %d", len(gl), len(wl))
	}
	head := Case{Name: c.Name, Title: c.Title, Kind: c.Kind, Target: c.Target, HeldOut: c.HeldOut}
	if wantHead := (Case{Name: "every-directive", Title: "every directive once", Kind: Branch, Target: "fork", HeldOut: true}); !reflect.DeepEqual(head, wantHead) {
		t.Errorf("header %+v, want %+v", head, wantHead)
	}
	wantExpect := Expect{Goal: []string{"build"}, Latest: "b.go", Constraints: []string{"no cgo", "trailing "}, Done: []string{"d.go"},
		InProgress: []string{"lint"}, Blocked: []string{"overloaded"}, Next: []string{"b"}, Stale: []string{"FAIL"},
		Entities: []string{"a.go"}, Noise: []string{"<x>"}, ReadFiles: []string{"a.go"}, ModifiedFiles: []string{"b.go"}}
	if !reflect.DeepEqual(c.Want, wantExpect) {
		t.Errorf("expect %+v\nwant %+v", c.Want, wantExpect)
	}
}

// A compaction case keeps a number of tokens or only the last message.
func TestParseCaseKeep(t *testing.T) {
	for keep, want := range map[string]Case{"keep 60": {Keep: 60}, "keep last": {KeepLast: true}, "": {}} {
		c, err := ParseCase("k.txt", []byte("case k\ntitle t\nkind compaction\n"+keep+"\nuser hi\nexpect\n  goal hi\n"))
		if err != nil {
			t.Fatalf("%q: %v", keep, err)
		}
		if c.Keep != want.Keep || c.KeepLast != want.KeepLast || c.Kind != History {
			t.Errorf("%q: keep %d, last %v, kind %s", keep, c.Keep, c.KeepLast, c.Kind)
		}
	}
}

// A mistake in a file is an error naming the file and the line, and what is wrong.
func TestParseCaseRejectsBadInput(t *testing.T) {
	const head = "case bad\ntitle t\nkind compaction\n" // lines 1-3
	for _, tc := range []struct{ name, text, want string }{
		{"unknown keyword", head + "user hi\nsya hello\n", "bad.txt:5: unknown keyword \"sya\""},
		{"call outside a turn", head + "user hi\nsh ls\n", "bad.txt:5: a sh call belongs to a do or abort turn"},
		{"block after a blank line", head + "user\n\n| hi\n", "bad.txt:6: a block line (|) must follow"},
		{"block after a value", head + "user hi\n| there\n", "bad.txt:5: a block line (|) must follow a keyword line that has no value"},
		{"block line without its space", head + "user\n|hi\n", "bad.txt:5: a block line is \"|\" alone or \"| \" and its text"},
		{"trailing white space", head + "user hi \n", "bad.txt:4: white space at the end of a line"},
		{"carriage return", head + "user hi\r\n", "bad.txt:4: a carriage return"},
		{"bad quoted value", head + "user \"hi\n", "bad.txt:4: a value that starts with \" is a Go string literal"},
		{"empty user", head + "user\n", "bad.txt:4: user needs a value"},
		{"shfail without its code", head + "do\n  shfail make\n", "bad.txt:5: shfail needs its exit code"},
		{"exit not a number", head + "do\n  shfail make\n    exit one\n", "bad.txt:6: exit is a whole number, not \"one\""},
		{"field twice", head + "do\n  sh ls\n    out a\n    out b\n", "bad.txt:7: out twice for the sh on line 5"},
		{"offset without limit", head + "do\n  read a.go\n    offset 3\n", "bad.txt:5: a read of part of a file has both offset and limit"},
		{"args not an object", head + "do\n  tool t\n    args [1]\n", "bad.txt:6: args: not a JSON object"},
		{"args not JSON", head + "do\n  tool t\n    args {\"a\":}\n", "bad.txt:6: args: invalid character"},
		{"result and error", head + "do\n  tool t\n    result a\n    error b\n", "bad.txt:5: a tool call has a result or an error, not both"},
		{"pending with a value", head + "do\n  sh ls\n    pending yes\n", "bad.txt:6: pending takes no value"},
		{"from an unknown mark", head + "user hi\nfrom fork\n", "bad.txt:5: no mark \"fork\" before this line"},
		{"compaction before its mark", head + "compaction kept\nmark kept\n", "bad.txt:4: no mark \"kept\" before this line"},
		{"header after a turn", head + "user hi\nkeep 40\n", "bad.txt:5: keep belongs in the header, before the first turn"},
		{"header twice", head + "title u\n", "bad.txt:4: title twice"},
		{"unknown kind", "case bad\ntitle t\nkind history\n", "bad.txt:3: kind is \"compaction\" or \"branch\", not \"history\""},
		{"bad keep", head + "keep -3\n", "bad.txt:4: keep is \"last\" or a number of tokens, not \"-3\""},
		{"held-out with a value", head + "held-out yes\n", "bad.txt:4: held-out takes no value"},
		{"expect not last", head + "user hi\nexpect\n  goal g\nuser again\n", "bad.txt:7: \"user\" is not a field of expect"},
		{"latest twice", head + "user hi\nexpect\n  latest a\n  latest b\n", "bad.txt:7: latest twice for the expect on line 5"},
		{"no case line", "title t\n", "bad.txt:1: the file starts with \"case NAME\" or \"session NAME\""},
		{"empty file", "", "bad.txt:1: the file is empty"},
		{"name not the file's", "case good\ntitle t\nkind compaction\n", "bad.txt:1: the case is named \"good\", its file \"bad\""},
		{"no title", "case bad\nkind compaction\n", "bad.txt:1: the case has no title"},
		{"no kind", "case bad\ntitle t\n", "bad.txt:1: the case has no kind"},
		{"branch without target", "case bad\ntitle t\nkind branch\n", "bad.txt:1: a branch case needs a target mark"},
		{"target not a mark", "case bad\ntitle t\nkind branch\ntarget fork\nuser hi\n", "bad.txt:1: target \"fork\" is not a mark of the session"},
		{"a session file as a case", "session bad\ncwd /x\nuser hi\n", "bad.txt:1: a case file starts with \"case NAME\""},
	} {
		_, err := ParseCase("cases/x/bad.txt", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.want)
		}
	}
}

// A session file has a directory and turns only; a case file is not one.
func TestParseSession(t *testing.T) {
	got, err := ParseSession("s.txt", []byte("session demo\ncwd /srv/app\nuser hi\nsay hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := NewScript("demo", "/srv/app").User("hi").Say("hello").Bytes()
	if string(got) != string(want) {
		t.Errorf("session\n%s\nwant\n%s", got, want)
	}
	for text, msg := range map[string]string{
		"case demo\ntitle t\nkind compaction\nuser hi\n":    "s.txt:1: a session file starts with \"session NAME\" and \"cwd DIR\"",
		"session demo\nuser hi\n":                           "s.txt:1: a session file starts with \"session NAME\" and \"cwd DIR\"",
		"session demo\ncwd /x\nuser hi\nexpect\n  goal g\n": "s.txt:1: a session file has turns only",
	} {
		if _, err := ParseSession("s.txt", []byte(text)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", text, err, msg)
		}
	}
}

// LoadCases reads the .txt files below the folder and names the file that is wrong.
func TestLoadCases(t *testing.T) {
	ok := "case %s\ntitle t\nkind compaction\nuser hi\nexpect\n  goal hi\n"
	fsys := fstest.MapFS{
		"cases/a/one.txt":   {Data: []byte(strings.Replace(ok, "%s", "one", 1))},
		"cases/b/two.txt":   {Data: []byte(strings.Replace(ok, "%s", "two", 1))},
		"cases/b/README.md": {Data: []byte("not a case")},
	}
	cases, err := LoadCases(fsys, "cases")
	if err != nil || len(cases) != 2 {
		t.Fatalf("%d cases, %v", len(cases), err)
	}
	fsys["cases/b/three.txt"] = &fstest.MapFile{Data: []byte("case three\ntitle t\nkind compaction\nuser hi\nbogus\n")}
	if _, err := LoadCases(fsys, "cases"); err == nil || !strings.Contains(err.Error(), "cases/b/three.txt:5: unknown keyword \"bogus\"") {
		t.Errorf("error %v", err)
	}
}
