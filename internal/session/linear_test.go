package session

import (
	"fmt"
	"strings"
	"testing"
)

// walkedPath is a path found by following parent pointers, as pathFrom does for any
// file.
func walkedPath(e *Entry) []*Entry {
	var p []*Entry
	for ; e != nil; e = e.parent {
		p = append([]*Entry{e}, p...)
	}
	return p
}

func entryLine(id, parent string) string {
	p := "null"
	if parent != "" {
		p = fmt.Sprintf("%q", parent)
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x","timestamp":1}}`, id, p)
}

// In a file where every entry is the child of the line before it (with roots on the
// way), a path is the entries from the last root before its leaf; appends that keep
// that shape keep it, and the first one that does not leaves the walk to the pointers.
func TestLinearPathsAreRunsOfTheFile(t *testing.T) {
	lines := []string{`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`}
	prev := ""
	for i := range 30 {
		id := fmt.Sprintf("e%02d", i)
		if i == 12 || i == 20 {
			prev = "" // a new root
		}
		lines = append(lines, entryLine(id, prev))
		prev = id
	}
	f, err := Parse([]byte(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(f)
	if !ix.linear || len(ix.roots) != 3 {
		t.Fatalf("linear %v, roots %v: want a linear index with 3 roots", ix.linear, ix.roots)
	}
	check := func(when string) {
		t.Helper()
		for _, e := range ix.File.Entries {
			got, want := ix.pathFrom(e), walkedPath(e)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: path to %s is %d entries from %s, want %d from %s", when, e.ID, len(got), got[0].ID, len(want), want[0].ID)
			}
			if ix.linear && cap(got) != len(got) {
				t.Fatalf("%s: path to %s has room to grow into the file's entries", when, e.ID)
			}
		}
	}
	check("loaded")
	appendLine := func(id, parent string) {
		g, err := Parse([]byte(lines[0] + "\n" + entryLine(id, parent) + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		ix.Append(g.Entries[0])
	}
	appendLine("a1", "e29")
	appendLine("a2", "")
	appendLine("a3", "a2")
	if !ix.linear {
		t.Fatal("appends that follow the line before left the index non-linear")
	}
	check("after linear appends")
	appendLine("b1", "e05") // a branch from far back
	appendLine("b2", "b1")
	if ix.linear {
		t.Fatal("a branch kept the index linear")
	}
	check("after a branch")
}
