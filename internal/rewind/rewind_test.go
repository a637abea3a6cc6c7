package rewind

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func opts(t *testing.T) ApplyOptions {
	root := t.TempDir()
	return ApplyOptions{StateDir: filepath.Join(root, "state"), Trash: FreedesktopTrash{Dir: filepath.Join(root, "Trash")}}
}

func stateDirEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("the state dir keeps %d rewinds after a failed one", len(ents))
	}
}

// story is a session whose agent creates, edits (single and multiple replacements,
// a deletion), rewrites and reads files, with a user message between each turn.
func story(t *testing.T) (*world, []string) {
	w := newWorld(t)
	for _, f := range []string{"a.txt", "lib/b.go", "c.md", "pre.txt"} {
		w.touch(f)
	}
	w.setDisk("pre.txt", "one\ntwo\nthree\nfour\nfive\n") // never shown whole by the session
	var marks []string
	marks = append(marks, w.user("start"))
	w.write("a.txt", "alpha\nbeta\ngamma\n")
	w.edit("pre.txt", true, Edit{"two\n", "TWO\n"})
	marks = append(marks, w.user("next"))
	w.edit("a.txt", true, Edit{"beta", "BETA"}, Edit{"gamma\n", ""})
	w.write("lib/b.go", "package b\n")
	w.edit("pre.txt", true, Edit{"four\nfive\n", "4\n5\n6\n"}, Edit{"one", "1"})
	marks = append(marks, w.user("more"))
	w.write("a.txt", "rewritten\n")
	w.read("c.md") // fails: does not exist yet
	w.write("c.md", "# C\n")
	w.edit("lib/b.go", false, Edit{"package b\n", "package b\n\nfunc F() {}\n"})
	w.edit("pre.txt", true, Edit{"three", "3"})
	marks = append(marks, w.user("end"))
	return w, marks
}

func TestRewindToEachEntry(t *testing.T) {
	for i := 0; ; i++ {
		w, marks := story(t)
		if i == len(marks) {
			break
		}
		mark := marks[i]
		t.Run(mark, func(t *testing.T) {
			p, err := Compute(context.Background(), w.snap(), mark, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.NotRestorable) > 0 || len(p.Conflicts()) > 0 {
				t.Fatalf("not restorable %v, conflicts %d", p.NotRestorable, len(p.Conflicts()))
			}
			o := opts(t)
			before := w.state()
			res, err := Apply(context.Background(), p, o)
			if err != nil {
				t.Fatal(err)
			}
			sameState(t, "after the rewind", w.state(), w.snapshot[mark])
			if mark == marks[0] && (len(res.Removed) != 3 || !strings.Contains(strings.Join(res.Restored, ","), "pre.txt")) {
				t.Errorf("to the first entry: restored %v removed %v", res.Restored, res.Removed)
			}
			if i < len(marks)-1 {
				// Removed files are in the trash, with the spec's info file.
				for _, r := range res.Removed {
					info, err := os.ReadFile(filepath.Join(o.Trash.(FreedesktopTrash).Dir, "info", filepath.Base(r)+".trashinfo"))
					if err != nil || !strings.Contains(string(info), "Path="+filepath.Join(w.cwd, r)) {
						t.Errorf("%s: no trash info (%v) %s", r, err, info)
					}
				}
				if _, err := Undo(context.Background(), res.ID, o); err != nil {
					t.Fatal(err)
				}
				sameState(t, "after undo", w.state(), before)
				if _, err := Undo(context.Background(), res.ID, o); !errors.Is(err, ErrNothingToUndo) {
					t.Errorf("a second undo of the same rewind: %v", err)
				}
			} else if res.ID != "" || len(res.Restored)+len(res.Removed) != 0 {
				t.Errorf("rewind to the leaf did %v %v", res.Restored, res.Removed)
			}
		})
	}
}

func TestConflictLeftAloneUnlessPicked(t *testing.T) {
	w, marks := story(t)
	w.setDisk("a.txt", "the user's own\n") // after the agent's last write
	p, err := Compute(context.Background(), w.snap(), marks[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := p.Conflicts()
	if len(cs) != 1 || cs[0].Rel != "a.txt" || string(cs[0].Current) != "the user's own\n" || string(cs[0].Expected) != "rewritten\n" {
		t.Fatalf("conflicts %+v", cs)
	}
	res, err := Apply(context.Background(), p, opts(t))
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := w.disk("a.txt"); c != "the user's own\n" || len(res.Conflicts) != 1 {
		t.Errorf("a conflict was written over: %q", c)
	}
	want := w.snapshot[marks[1]]
	if c, _ := w.disk("lib/b.go"); want["lib/b.go"] != nil || c != "" {
		t.Errorf("the other files were not rewound")
	}
	// Picked by path, it is brought back; its bytes kept.
	p, _ = Compute(context.Background(), w.snap(), marks[1], Options{})
	o := opts(t)
	o.Pick = []string{"a.txt"}
	res, err = Apply(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := w.disk("a.txt"); c != *want["a.txt"] {
		t.Errorf("picked conflict holds %q", c)
	}
	if b, ok := Kept(o.StateDir, res.ID, "a.txt"); !ok || string(b) != "the user's own\n" {
		t.Errorf("the user's bytes were not kept: %q %v", b, ok)
	}
}

func TestNotRestorableAndCommands(t *testing.T) {
	w := newWorld(t)
	w.touch("x.txt")
	w.touch("y.txt")
	w.setDisk("x.txt", "unknown\n")
	w.setDisk("y.txt", "1\n2\n3\n")
	w.edit("x.txt", true, Edit{"unknown", "known"})
	mark := w.user("go")
	w.write("x.txt", "over\n") // over content the session never showed
	w.edit("y.txt", true, Edit{"2", "two"})
	w.bash("sed -i s/two/TWO/ y.txt", func() { w.setDisk("y.txt", "1\nTWO\n3\n") })
	p, err := Compute(context.Background(), w.snap(), mark, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Commands) != 1 || p.Commands[0].Command != "sed -i s/two/TWO/ y.txt" {
		t.Errorf("commands %+v", p.Commands)
	}
	reasons := map[string]string{}
	for _, n := range p.NotRestorable {
		reasons[n.Path] = n.Reason
	}
	if !strings.Contains(reasons["x.txt"], "never showed") || !strings.Contains(reasons["y.txt"], "cannot undo the edit") {
		t.Errorf("not restorable: %v", p.NotRestorable)
	}
	if len(p.Files) != 0 {
		t.Errorf("files %v", p.Files)
	}
}

func TestEditUndoneFromDiskKeepsUnrelatedUserChange(t *testing.T) {
	w := newWorld(t)
	w.touch("f.txt")
	w.setDisk("f.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n")
	mark := w.user("go")
	w.edit("f.txt", true, Edit{"b\n", "B\n"})
	w.edit("f.txt", false, Edit{"k", "K"}) // no patch: found by its text
	w.setDisk("f.txt", "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nK\nl\nuser line\n")
	p, err := Compute(context.Background(), w.snap(), mark, Options{})
	if err != nil || len(p.Files) != 1 || p.Files[0].Conflict {
		t.Fatalf("%v %+v", err, p)
	}
	if got := string(p.Files[0].Target); got != "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nuser line\n" {
		t.Errorf("target %q", got)
	}
}

func TestNotOnPath(t *testing.T) {
	w, _ := story(t)
	if _, err := Compute(context.Background(), w.snap(), "e0003", Options{Leaf: "e0002"}); !errors.Is(err, ErrNotOnPath) {
		t.Errorf("got %v", err)
	}
}

// A failure at any step, or a cancel, leaves every file as it was and keeps nothing.
func TestFailureMidRewindPutsEverythingBack(t *testing.T) {
	for fail := 0; fail < 6; fail++ {
		w, marks := story(t)
		p, err := Compute(context.Background(), w.snap(), marks[0], Options{})
		if err != nil {
			t.Fatal(err)
		}
		if fail >= len(p.Files) {
			break
		}
		before := w.state()
		o := opts(t)
		ctx, cancel := context.WithCancel(context.Background())
		boom := errors.New("injected")
		o.Step = func(_ context.Context, i, n int, path string) error {
			if i == fail {
				if fail%2 == 1 {
					cancel()
					return nil
				}
				return boom
			}
			return nil
		}
		_, err = Apply(ctx, p, o)
		cancel()
		if fail%2 == 0 && !errors.Is(err, boom) || fail%2 == 1 && !errors.Is(err, context.Canceled) {
			t.Errorf("step %d: error %v", fail, err)
		}
		sameState(t, "after a failed rewind", w.state(), before)
		stateDirEmpty(t, o.StateDir)
		trash, _ := os.ReadDir(filepath.Join(o.Trash.(FreedesktopTrash).Dir, "files"))
		if len(trash) != 0 {
			t.Errorf("step %d: %d files left in the trash", fail, len(trash))
		}
	}
}

// A file the trash cannot take is removed, and its kept copy brings it back.
func TestRemoveWithoutTrash(t *testing.T) {
	w, marks := story(t)
	p, _ := Compute(context.Background(), w.snap(), marks[0], Options{})
	o := opts(t)
	o.Trash = noTrash{}
	before := w.state()
	res, err := Apply(context.Background(), p, o)
	if err != nil || len(res.Removed) != 3 {
		t.Fatalf("%v %v", err, res)
	}
	if _, err := Undo(context.Background(), res.ID, o); err != nil {
		t.Fatal(err)
	}
	sameState(t, "after undo", w.state(), before)
}

type noTrash struct{}

func (noTrash) Put(string) (string, string, error) { return "", "", errors.New("no trash here") }

func TestUnifiedDiff(t *testing.T) {
	d := UnifiedDiff("f", true, []byte("a\nb\nc\n"), true, []byte("a\nB\nc\nd"))
	want := "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n\\ No newline at end of file\n"
	if d != want {
		t.Errorf("got\n%s\nwant\n%s", d, want)
	}
	// The diff reads back as a patch that undoes the change.
	back, err := reversePatch("a\nB\nc\nd", d)
	if err != nil || back != "a\nb\nc\n" {
		t.Errorf("reversed: %q %v", back, err)
	}
}
