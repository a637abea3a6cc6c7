package session

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
)

// The flat tree of a linear session read from the file's order is the depth-first walk of
// Tree, page by page: every offset and limit, sessions with several roots and labels, and
// the same after appends that keep the session linear.
func TestFlatTreeOfALinearSessionIsTheWalk(t *testing.T) {
	var gen bytes.Buffer
	if err := benchgen.Write(&gen, benchgen.Options{Entries: 300, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	line := func(id, parent, extra string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:0%d.000Z","message":{"role":"user","content":"x"}%s}`, id, p, len(id)%10, extra)
	}
	hand := `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" +
		line("a1", "", "") + "\n" + line("a2", "a1", "") + "\n" +
		`{"type":"label","id":"l1","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","targetId":"a1","label":"start"}` + "\n" +
		line("b1", "", "") + "\n" + line("b2", "b1", "") + "\n" + line("b3", "b2", "") + "\n" + line("c1", "", "") + "\n"
	for name, data := range map[string][]byte{"generated": gen.Bytes(), "roots and a label": []byte(hand)} {
		f, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		ix := NewIndex(f)
		if !ix.linear {
			t.Fatalf("%s: not read as linear", name)
		}
		same := func(when string) {
			n := len(ix.File.Entries)
			for _, page := range [][2]int{{0, 0}, {0, 1}, {0, 7}, {1, 3}, {n / 2, 5}, {n - 1, 10}, {n - 3, 0}, {n, 5}, {n + 4, 2}} {
				fast, total, _ := ix.FlatTree(context.Background(), page[0], page[1])
				walk, wtotal, err := ix.flatWalk(context.Background(), page[0], page[1])
				if err != nil {
					t.Fatal(err)
				}
				if total != wtotal || !reflect.DeepEqual(fast, walk) {
					t.Fatalf("%s, %s, page %v: linear %d %+v, walk %d %+v", name, when, page, total, fast, wtotal, walk)
				}
			}
		}
		same("as loaded")
		last := ix.File.Entries[len(ix.File.Entries)-1]
		for i, parent := range []string{last.ID, "x0", ""} {
			e, err := parseLine([]byte(line(fmt.Sprintf("x%d", i), parent, "")), nil)
			if err != nil {
				t.Fatal(err)
			}
			ix.Append(e)
		}
		if !ix.linear {
			t.Fatalf("%s: appends that keep the session linear made it branched", name)
		}
		same("after appends")
	}
}

// A session that branches is walked: the file's order is not the tree's.
func TestFlatTreeOfABranchedSessionWalks(t *testing.T) {
	var b bytes.Buffer
	if err := benchgen.Write(&b, benchgen.Options{Entries: 400, Seed: 3, BranchEvery: 4}); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(f)
	if ix.linear {
		t.Fatal("a branched session read as linear")
	}
	nodes, total, err := ix.FlatTree(context.Background(), 0, 0)
	if err != nil || total != len(ix.File.Entries) || len(nodes) != total {
		t.Fatalf("%d nodes of %d (%v), want every entry", len(nodes), total, err)
	}
	inFileOrder := true
	for i, n := range nodes {
		inFileOrder = inFileOrder && n.Node.Entry == ix.File.Entries[i]
	}
	if inFileOrder {
		t.Fatal("a branched session's depth-first order is its file order; the test shows nothing")
	}
}
