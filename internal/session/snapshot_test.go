package session_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// snapLine is a message entry line with id and parent ("" for a root).
func snapLine(id, parent string) string {
	p := "null"
	if parent != "" {
		p = fmt.Sprintf("%q", parent)
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"text of %s","timestamp":1}}`, id, p, id) + "\n"
}

// snapSession writes a session of a linear chain a1..a4 and an orphan o1 whose parent
// "p1" is not in the file yet.
func snapSession(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	parent := ""
	for _, id := range []string{"a1", "a2", "a3", "a4"} {
		b.WriteString(snapLine(id, parent))
		parent = id
	}
	b.WriteString(snapLine("o1", "p1"))
	b.WriteString(snapLine("a5", "a4"))
	path := testfile.Temp(t, "s.jsonl", b.String())
	return path
}

// view is what a job reads of a snapshot.
type view struct {
	entries, problems int
	leaf, label       string
	path, orphanPath  []string
	a3, p1            bool
	pathA3            bool // the leaf's path goes through the file's first a3
}

func viewOf(s *session.Snapshot) view {
	ix := s.Index()
	ids := func(p []*session.Entry) []string {
		var out []string
		for _, e := range p {
			out = append(out, e.ID)
		}
		return out
	}
	return view{entries: len(ix.Entries()), problems: ix.ProblemCount(), leaf: ix.LeafID(), label: ix.Label("a2"),
		path: ids(ix.Path(ix.LeafID())), orphanPath: ids(ix.Path("o1")),
		a3: ix.Entry("a3") == ix.Entries()[2], p1: ix.Entry("p1") != nil,
		pathA3: len(ix.Path("a5")) == 5 && ix.Path("a5")[2] == ix.Entries()[2]}
}

var newEntry = []session.NewEntry{{Type: session.TypeCustom, ParentID: "a5", Fields: []session.Field{{Key: "customType", Value: "test"}}}}

// unchangedSince fails when the file at path no longer holds before (a refused append
// wrote to it).
func unchangedSince(t *testing.T, path string, before []byte) {
	t.Helper()
	if !bytes.Equal(sessiontest.Read(t, path), before) {
		t.Error("the refused append changed the file")
	}
}

// TestSnapshotAppendRefusesAChangedFile: a job's append through its snapshot refuses,
// with ErrChanged and the file byte-identical, once the file grew, was replaced by a
// file of the same size, or lost its read-back; it appends when the file is the one read.
func TestSnapshotAppendRefusesAChangedFile(t *testing.T) {
	t.Run("grown", func(t *testing.T) {
		path := snapSession(t)
		snap := sessiontest.Snapshot(t, path)
		sessiontest.Append(t, path, snapLine("x1", "a5"))
		before := sessiontest.Read(t, path)
		if _, err := snap.Append(newEntry); !errors.Is(err, session.ErrChanged) {
			t.Fatalf("append after another writer's: %v, want ErrChanged", err)
		}
		unchangedSince(t, path, before)
	})
	t.Run("replaced at the same size", func(t *testing.T) {
		path := snapSession(t)
		snap := sessiontest.Snapshot(t, path)
		data := sessiontest.Read(t, path)
		tmp := testfile.Write(t, path+".tmp", string(data))
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		if _, err := snap.Append(newEntry); !errors.Is(err, session.ErrChanged) {
			if st, _ := os.Stat(path); err == nil && st != nil {
				t.Logf("(the system gives files no identity?)")
			}
			t.Fatalf("append to a replaced file: %v, want ErrChanged", err)
		}
		unchangedSince(t, path, data)
	})
	t.Run("unchanged", func(t *testing.T) {
		path := snapSession(t)
		snap := sessiontest.Snapshot(t, path)
		before, v := sessiontest.Read(t, path), viewOf(snap)
		written, err := snap.Append(newEntry)
		if err != nil {
			t.Fatal(err)
		}
		if now := sessiontest.Read(t, path); !bytes.HasPrefix(now, before) || !bytes.Equal(now[len(before):], append(written[0].Raw(), '\n')) {
			t.Errorf("the file after the append:\n%s", now[len(before):])
		}
		if got := viewOf(snap); !equalView(got, v) {
			t.Errorf("the snapshot changed with its own append: %+v, was %+v", got, v)
		}
		if _, err := snap.Append(newEntry); !errors.Is(err, session.ErrChanged) {
			t.Errorf("a second append from the same snapshot: %v, want ErrChanged", err)
		}
	})
}

func equalView(a, b view) bool {
	return a.entries == b.entries && a.problems == b.problems && a.leaf == b.leaf && a.label == b.label &&
		slices.Equal(a.path, b.path) && slices.Equal(a.orphanPath, b.orphanPath) && a.a3 == b.a3 && a.p1 == b.p1 && a.pathA3 == b.pathA3
}

// TestLiveSnapshotUnchangedByRefresh: the server's followed index goes on following the
// file while a job works on a snapshot of it: appended entries, a label, an id reused
// (which relinks every child of that id) and the parent an orphan was missing all reach
// the followed index and none reaches the snapshot, which is read meanwhile from
// another goroutine (run with -race). The job's append then refuses with ErrChanged and
// leaves the file byte-identical.
func TestLiveSnapshotUnchangedByRefresh(t *testing.T) {
	path := snapSession(t)
	l, err := session.OpenLive(path)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := l.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := viewOf(snap)
	if want.entries != 6 || want.leaf != "a5" || want.p1 || len(want.orphanPath) != 1 || !want.pathA3 {
		t.Fatalf("snapshot %+v", want)
	}
	if loaded := viewOf(sessiontest.Snapshot(t, path)); !equalView(loaded, want) {
		t.Fatalf("the followed index's snapshot %+v is not the loaded one %+v", want, loaded)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // a job reading its snapshot while the index is refreshed
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if got := viewOf(snap); !equalView(got, want) {
				t.Errorf("the snapshot changed under the job: %+v, was %+v", got, want)
				return
			}
		}
	}()
	for i, add := range []string{
		snapLine("x1", "a5"),
		`{"type":"label","id":"l1","parentId":"x1","timestamp":"2025-01-01T00:00:00.000Z","targetId":"a2","label":"here"}` + "\n",
		snapLine("a3", "a2"), // a reused id: Pi's byId takes the later entry
		snapLine("p1", "a1"), // the orphan's parent
		snapLine("x2", "p1"),
	} {
		sessiontest.Append(t, path, add)
		if changed, err := l.Refresh(); err != nil || !changed {
			t.Fatalf("refresh %d: %v, %v", i, changed, err)
		}
	}
	close(stop)
	wg.Wait()
	ix := l.Index
	if ix.LeafID() != "x2" || ix.Label("a2") != "here" || ix.Entry("p1") == nil || len(ix.Path("o1")) != 3 || ix.Entry("a3") == ix.Entries()[2] {
		t.Errorf("the followed index did not follow: leaf %s, label %q, o1's path %d entries", ix.LeafID(), ix.Label("a2"), len(ix.Path("o1")))
	}
	if got := viewOf(snap); !equalView(got, want) {
		t.Errorf("the snapshot changed with the refreshes: %+v, was %+v", got, want)
	}
	// The followed index's snapshot is now what Load makes of the file (but for its
	// problems: an orphan whose parent came later stays listed; no job reads them).
	now, err := l.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	loaded := sessiontest.Snapshot(t, path)
	a, b := viewOf(now), viewOf(loaded)
	a.problems, b.problems = 0, 0
	if !equalView(a, b) || now.Size() != loaded.Size() {
		t.Errorf("after the refreshes, the followed snapshot %+v (%d bytes) is not the loaded one %+v (%d bytes)", a, now.Size(), b, loaded.Size())
	}
	before := sessiontest.Read(t, path)
	if _, err := snap.Append(newEntry); !errors.Is(err, session.ErrChanged) {
		t.Fatalf("the job's append after the file changed: %v, want ErrChanged", err)
	}
	if !bytes.Equal(sessiontest.Read(t, path), before) {
		t.Error("the refused append changed the file")
	}
	if _, err := now.Append(newEntry); err != nil {
		t.Errorf("the append of a snapshot of the current file: %v", err)
	}
}

// TestLiveSnapshotOfAnUnterminatedTail: while the followed index holds back a last line
// without its newline, a snapshot is loaded afresh, as Load reads the file (here the
// line parses, so it is an entry), and its size counts the line.
func TestLiveSnapshotOfAnUnterminatedTail(t *testing.T) {
	path := snapSession(t)
	l, err := session.OpenLive(path)
	if err != nil {
		t.Fatal(err)
	}
	line := snapLine("x1", "a5")
	sessiontest.Append(t, path, line[:len(line)-1])
	if _, err := l.Refresh(); err != nil {
		t.Fatal(err)
	}
	if l.Index.Entry("x1") != nil {
		t.Fatal("the followed index took a line without its newline")
	}
	snap, err := l.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if snap.Index().LeafID() != "x1" || snap.Size() != st.Size() {
		t.Errorf("snapshot leaf %s, %d bytes; want x1 and the file's %d", snap.Index().LeafID(), snap.Size(), st.Size())
	}
}
