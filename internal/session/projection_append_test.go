package session

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
)

// The projection kept for the leaf and extended by each append is the projection of the
// new leaf's path made afresh: on sessions that branch, compact and edit their context,
// appended one line at a time with the leaf's projection asked for after each.
func TestAppendedProjectionIsTheFreshOne(t *testing.T) {
	var gen bytes.Buffer
	if err := benchgen.Write(&gen, benchgen.Options{Entries: 600, Seed: 4, BranchEvery: 9, CompactEvery: 70}); err != nil {
		t.Fatal(err)
	}
	var linear bytes.Buffer
	if err := benchgen.Write(&linear, benchgen.Options{Entries: 300, Seed: 8}); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"generated, branched and compacted": gen.Bytes(), "generated, linear": linear.Bytes()}
	for _, name := range []string{"context-edits", "compact-twice", "tree-nav", "retain-none"} {
		data, err := os.ReadFile("../../testdata/corpus/genuine-1.6/" + name + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	// A context edit that names an entry written after it: the entry is projected edited.
	files["an edit before its target"] = []byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"first"}}
{"type":"context_edit","id":"c1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","targetId":"u2","replacement":{"content":"edited before it was written"}}
{"type":"message","id":"u2","parentId":"c1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"second"}}
{"type":"message","id":"u3","parentId":"u2","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"third"}}
`)
	for name, data := range files {
		f, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		all := f.Entries
		f.Entries = all[:1:1]
		ix := NewIndex(f)
		extended := 0
		for _, e := range all[1:] {
			before := ix.projected.Load()
			ix.Append(e)
			if c := ix.projected.Load(); c != nil && c != before {
				extended++
			}
			leaf := ix.Entry(ix.LeafID())
			path, proj := ix.ProjectedPath(leaf.ID)
			fresh := ProjectPath(ix.pathFrom(leaf))
			if !reflect.DeepEqual(path, ix.pathFrom(leaf)) || !reflect.DeepEqual(proj, fresh) {
				t.Fatalf("%s, after %s: the kept projection differs from a fresh one", name, e.ID)
			}
		}
		if extended == 0 && name != "an edit before its target" {
			t.Errorf("%s: no append extended the kept projection; the test shows nothing", name)
		}
	}
}
