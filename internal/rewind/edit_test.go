package rewind

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// The argument shapes Pi 1.6.0's prepareEditArguments accepts.
func TestEditArgs(t *testing.T) {
	one := []Edit{{"a", "b"}}
	cases := []struct {
		args string
		want []Edit
	}{
		{`{"path":"f","edits":[{"oldText":"a","newText":"b"}]}`, one},
		{`{"path":"f","edits":"[{\"oldText\":\"a\",\"newText\":\"b\"}]"}`, one},
		{`{"path":"f","edits":{"oldText":"a","newText":"b"}}`, one},
		{`{"path":"f","edits":"{\"oldText\":\"a\",\"newText\":\"b\"}"}`, one},
		{`{"path":"f","oldText":"a","newText":"b"}`, one},
		{`{"path":"f","edits":[{"oldText":"x","newText":"y"}],"oldText":"a","newText":"b"}`, []Edit{{"x", "y"}, {"a", "b"}}},
		{`{"path":"f","edits":[]}`, nil},
	}
	for _, c := range cases {
		_, got, ok := editArgs(json.RawMessage(c.args))
		if !reflect.DeepEqual(got, c.want) || ok != (c.want != nil) {
			t.Errorf("%s: %v %v", c.args, got, ok)
		}
	}
}

func TestApplyEditsAsPi(t *testing.T) {
	got, err := applyEdits("\uFEFFx = 1\ny = 2\n", []Edit{{"y = 2", "y = 3"}, {"x", "z"}})
	if err != nil || got != "\uFEFFz = 1\ny = 3\n" {
		t.Errorf("%q %v", got, err)
	}
	for _, c := range []struct {
		content string
		edits   []Edit
		want    error
	}{
		{"a\r\nb\r\n", []Edit{{"a", "A"}}, errUnknown},              // CR line ends: spliced by Pi
		{"smart \u2019q\u2019\n", []Edit{{"'q'", "q"}}, errUnknown}, // fuzzy
		{"aaa", []Edit{{"aa", "b"}, {"a", "c"}}, errRefused},        // overlapping
		{"a", []Edit{{"", "b"}}, errRefused},
		{"a", []Edit{{"a", "a"}}, errRefused},
	} {
		if _, err := applyEdits(c.content, c.edits); !errors.Is(err, c.want) {
			t.Errorf("%q %v: %v, want %v", c.content, c.edits, err, c.want)
		}
	}
}

// An edit is undone only where it left its text: the same text elsewhere does not do.
func TestUndoEditWhereItLeftIt(t *testing.T) {
	ch := Change{Kind: KindEdit, Edits: []Edit{{"x\n", "y\n"}}}
	before := "a\nx\nb\nc\nd\ne\nf\ng\nh\ny\n"
	after, _ := applyEdits(before, ch.Edits)
	ch.Patch = "--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n-x\n+y\n b\n"
	if got, err := undoEdit(after, ch); err != nil || got != before {
		t.Errorf("%q %v", got, err)
	}
	// The user moved the line: the patch no longer fits.
	if _, err := undoEdit("a\nb\ny\nc\nd\ne\nf\ng\nh\ny\n", ch); !errors.Is(err, errNotThere) {
		t.Errorf("moved text undone: %v", err)
	}
	// Without a patch, text found twice is not undone.
	ch.Patch = ""
	if _, err := undoEdit(after, ch); !errors.Is(err, errNotThere) {
		t.Errorf("ambiguous text undone: %v", err)
	}
}
