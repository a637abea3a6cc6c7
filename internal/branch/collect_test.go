package branch

import (
	"reflect"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// The tree of pi-behavior.md §14.1: A-B-{C-D, E-F}, plus G on a second root.
func abcdefg(t *testing.T) string {
	return writeSession(t,
		user("A", "", "a"), asst("B", "A", "b"),
		user("C", "B", "c"), asst("D", "C", "d"),
		user("E", "B", "e"), asst("F", "E", "f"),
		user("G", "", "g"),
	)
}

func TestCollectPiTable(t *testing.T) {
	ix := sessiontest.Index(t, abcdefg(t))
	for _, tc := range []struct {
		old, target string
		entries     []string
		ca          string
	}{
		{"D", "F", []string{"C", "D"}, "B"},
		{"D", "A", []string{"B", "C", "D"}, "A"},
		{"B", "D", []string{}, "B"},
		{"", "D", []string{}, ""},
		{"D", "D", []string{}, "D"},
		{"D", "G", []string{"A", "B", "C", "D"}, ""},
		{"F", "C", []string{"E", "F"}, "B"},
		{"G", "D", []string{"G"}, ""},
		{"D", "unknown", []string{"A", "B", "C", "D"}, ""},
	} {
		c := Collect(ix, tc.old, tc.target)
		if got := ids(c.Entries); !reflect.DeepEqual(got, tc.entries) || c.CommonAncestorID != tc.ca {
			t.Errorf("%s→%s: entries %v ca %q, want %v ca %q", tc.old, tc.target, got, c.CommonAncestorID, tc.entries, tc.ca)
		}
	}
}

// Cycles, self-parents and dangling parents never hang the collection.
func TestCollectDefectiveTrees(t *testing.T) {
	path := writeSession(t,
		user("R", "", "root"), asst("S", "R", "s"),
		user("X", "Y", "x"), asst("Y", "X", "y"), // X and Y are each other's parent
		user("Z", "Y", "below the cycle"),
		user("P", "P", "self parent"),
		user("O", "missing", "orphan"), asst("Q", "O", "q"),
	)
	ix := sessiontest.Index(t, path)
	for _, tc := range []struct {
		old, target string
		entries     []string
		ca          string
	}{
		{"Z", "S", []string{"X", "Y", "Z"}, ""},
		{"S", "Z", []string{"R", "S"}, ""},
		{"Z", "X", []string{"Y", "Z"}, "X"},
		{"P", "S", []string{"P"}, ""},
		{"S", "P", []string{"R", "S"}, ""},
		{"Q", "S", []string{"O", "Q"}, ""},
		{"Q", "O", []string{"Q"}, "O"},
	} {
		var c Collected
		noHang(t, 5*time.Second, func() { c = Collect(ix, tc.old, tc.target) })
		if got := ids(c.Entries); !reflect.DeepEqual(got, tc.entries) || c.CommonAncestorID != tc.ca {
			t.Errorf("%s→%s: entries %v ca %q, want %v ca %q", tc.old, tc.target, got, c.CommonAncestorID, tc.entries, tc.ca)
		}
	}
}
