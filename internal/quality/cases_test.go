package quality

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The benchmark holds at least 30 sessions, of every kind the issue lists, with a held-out
// set, and unique names.
func TestCasesCoverTheKinds(t *testing.T) {
	cases := Cases()
	if len(cases) < 30 {
		t.Errorf("%d cases, want at least 30", len(cases))
	}
	names := map[string]bool{}
	var branches, updates, splits, heldOut, blocked, inProgress, stale, constraints int
	for _, c := range cases {
		if names[c.Name] {
			t.Errorf("duplicate case %s", c.Name)
		}
		names[c.Name] = true
		p, err := c.Produce(context.Background(), HeadingOnly{})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.Kind == Branch:
			branches++
		case p.HasPrevious:
			updates++
		}
		if p.SplitTurn {
			splits++
		}
		if c.HeldOut {
			heldOut++
		}
		if len(c.Want.Blocked) > 0 {
			blocked++
		}
		if len(c.Want.InProgress) > 0 {
			inProgress++
		}
		if len(c.Want.Stale) > 0 {
			stale++
		}
		if len(c.Want.Constraints) > 0 {
			constraints++
		}
	}
	for what, n := range map[string]int{"branch summaries": branches, "updates of a previous summary": updates, "split turns": splits,
		"held-out cases": heldOut, "open blockers": blocked, "work in progress": inProgress, "resolved errors": stale, "constraints": constraints} {
		if n < 3 {
			t.Errorf("%d cases with %s, want at least 3", n, what)
		}
	}
	if splits == len(cases)-branches {
		t.Error("every compaction splits a turn")
	}
}

// A case's session is the same bytes every time and loads without problems.
func TestCaseSessionsAreDeterministicAndValid(t *testing.T) {
	for _, c := range Cases() {
		a, b := c.Session(), c.Session()
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two writes differ", c.Name)
		}
		f, err := session.Parse(a)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if n := session.NewIndex(f).ProblemCount(); n != 0 {
			t.Errorf("%s: %d problems loading the session", c.Name, n)
		}
	}
}

// Every annotation is supported by what the summarizer is given: each term of each fact
// (one of its alternatives) and each entity is in the summarized part, so nothing is
// asked for that only the kept part holds; the file lists are the ones Pi computes.
func TestAnnotationsAreInTheSummarizedPart(t *testing.T) {
	for _, c := range Cases() {
		p, err := c.Produce(context.Background(), compaction.Extractive{})
		if err != nil {
			t.Fatal(err)
		}
		src := norm(p.Source)
		w := c.Want
		for _, f := range concat(w.Goal, []string{w.Latest}, w.Constraints, w.Done, w.InProgress, w.Blocked, w.Next, w.Stale) {
			if f == "" {
				continue
			}
			for _, term := range strings.Split(f, " & ") {
				if !matches(src, term) {
					t.Errorf("%s: %q: no alternative of %q is in the summarized part", c.Name, f, term)
				}
			}
		}
		for _, e := range w.Entities {
			if !strings.Contains(p.Source, e) {
				t.Errorf("%s: entity %q is not in the summarized part", c.Name, e)
			}
		}
		for _, n := range w.Noise {
			if !strings.Contains(p.Source, n) {
				t.Errorf("%s: noise %q is not in the summarized part", c.Name, n)
			}
		}
		if strings.Join(w.ReadFiles, "\n") != strings.Join(p.Read, "\n") {
			t.Errorf("%s: read files %q, Pi's lists give %q", c.Name, w.ReadFiles, p.Read)
		}
		if strings.Join(w.ModifiedFiles, "\n") != strings.Join(p.Modified, "\n") {
			t.Errorf("%s: modified files %q, Pi's lists give %q", c.Name, w.ModifiedFiles, p.Modified)
		}
		if len(w.Goal) == 0 {
			t.Errorf("%s: no goal annotated", c.Name)
		}
	}
}
