package session_test

// Fuzz targets for hostile session files. Seed corpora are in testdata/fuzz/<Name>/;
// scripts/fuzz.sh runs each target for a while. Properties: nothing panics or hangs;
// whatever parses holds only valid JSON entries, and every walk over the tree (index,
// tree, path, context of every leaf) terminates within a bound, whatever the id/parentId
// graph (cycles, duplicates, self-parents, dangling parents).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/heap"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// fzWatchdog fails the test when fn does not return within d (a hang).
func fzWatchdog(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	var panicked any
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		fn()
	}()
	select {
	case <-done:
		if panicked != nil {
			t.Fatalf("panic: %v", panicked)
		}
	case <-time.After(d):
		buf := make([]byte, 1<<16)
		n := runtime.Stack(buf, true)
		t.Fatalf("no answer within %v (a hang)\n%s", d, buf[:n])
	}
}

// fzCheckFile checks what Parse accepted: every entry is valid JSON with its own id
// and parentId, and every walk terminates within a bound.
func fzCheckFile(t *testing.T, f *session.File) {
	t.Helper()
	for i, e := range f.Entries {
		if !json.Valid(e.Raw()) {
			t.Fatalf("entry %d: Raw is not valid JSON: %q", i, e.Raw())
		}
	}
	ix := session.NewIndex(f)
	n := len(f.Entries)
	_ = ix.Problems()
	// The tree is a forest: every node is reached once, and no more nodes than entries.
	// (Bookkeeping by entry position, not in maps: the hostile-input memory test counts
	// this function's heap too.)
	seen, nodes := make([]bool, n), 0
	stack := ix.Tree()
	for len(stack) > 0 {
		nd := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		p := nd.Entry.Pos()
		if p < 0 || p >= n || f.Entries[p] != nd.Entry {
			t.Fatalf("Tree node %s is not an entry of the file", nd.Entry.ID)
		}
		if seen[p] {
			t.Fatalf("Tree reaches node %s twice (not a forest)", nd.Entry.ID)
		}
		seen[p] = true
		if nodes++; nodes > n {
			t.Fatalf("Tree has more nodes than the %d entries", n)
		}
		stack = append(stack, nd.Children...)
	}
	// hasChild is by the position of the entry an id names (the later one of a
	// duplicated id), as parentId lookups are.
	hasChild := make([]bool, n)
	for _, e := range f.Entries {
		if p := ix.Entry(e.ParentID); e.ParentID != "" && p != nil {
			hasChild[p.Pos()] = true
		}
	}
	isLeaf := func(e *session.Entry) bool {
		p := ix.Entry(e.ID)
		return p == nil || !hasChild[p.Pos()]
	}
	// Every entry (for big inputs a sample of about 100 spread over the file: each walk
	// is linear, so all of them would be quadratic).
	step := 1
	if n > 2000 {
		step = n / 100
	}
	for i := 0; i < n; i += step {
		e := f.Entries[i]
		if p := ix.Path(e.ID); len(p) > n {
			t.Fatalf("Path(%s) has %d entries, more than the file's %d", e.ID, len(p), n)
		}
		_ = ix.Children(e.ID)
		if isLeaf(e) {
			c := ix.BuildContext(e.ID)
			if len(c.Messages) > n+1 {
				t.Fatalf("context of %s has %d messages for %d entries", e.ID, len(c.Messages), n)
			}
			for _, m := range c.Messages {
				if !json.Valid(m.Raw()) {
					t.Fatalf("context message is not valid JSON: %q", m.Raw())
				}
			}
			_ = session.EstimateContextTokens(c.Messages)
		}
	}
	_ = ix.BuildContext("")
	_ = ix.Name()
	_ = ix.Labels()
}

var fzHeader = testfile.SessionHeader("fz")

func FuzzParse(f *testing.F) {
	f.Add([]byte(fzHeader + "\n"))
	f.Add([]byte(fzHeader + "\n" + `{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"))
	f.Add([]byte("\xef\xbb\xbf" + fzHeader + "\r\n\n  \n{\"type\":\"label\",\"id\":\"l\",\"parentId\":\"l\",\"targetId\":\"l\",\"label\":\"x\"}\n{torn"))
	for _, name := range []string{"tree-nav", "compact-split", "misc-messages"} {
		if data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "genuine", name+".jsonl")); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fzWatchdog(t, 20*time.Second, func() {
			file, err := session.Parse(data)
			if err != nil {
				return
			}
			fzCheckFile(t, file)
		})
	})
}

// FuzzMigrate builds a v1 or v2 file (or one without a version) from fuzzed entry
// lines: migration gives v1 entries fresh unique ids chained in file order, renames
// hookMessage to custom, resolves firstKeptEntryIndex, and the result is consistent.
func FuzzMigrate(f *testing.F) {
	f.Add(uint8(1), []byte(`{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`+"\n"+
		`{"type":"compaction","timestamp":"2026-01-01T00:00:02.000Z","summary":"s","firstKeptEntryIndex":1,"tokensBefore":5}`))
	f.Add(uint8(2), []byte(`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"x","content":"c","display":true,"timestamp":1}}`+"\n"+
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"u","timestamp":2}}`))
	f.Add(uint8(0), []byte(`{"type":"compaction","summary":"s","firstKeptEntryIndex":7}`+"\n"+`{"type":"message","message":{"role":"hookMessage"}}`+"\n"+`{"type":"compaction","firstKeptEntryIndex":-1.5}`))
	f.Fuzz(func(t *testing.T, version uint8, body []byte) {
		v := int(version % 3) // 0: no version field (v1), 1, 2
		hdr := `{"type":"session","id":"fz","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`
		if v > 0 {
			hdr = fmt.Sprintf(`{"type":"session","version":%d,"id":"fz","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`, v)
		}
		data := append([]byte(hdr+"\n"), body...)
		lines := bytes.Split(data, []byte("\n"))
		fzWatchdog(t, 20*time.Second, func() {
			file, err := session.Parse(data)
			if err != nil {
				return
			}
			want := v
			if v == 0 {
				want = 1
			}
			if len(file.Entries) > 0 && file.MigratedFrom != want {
				t.Fatalf("MigratedFrom %d, want %d", file.MigratedFrom, want)
			}
			ids := map[string]bool{}
			for i, e := range file.Entries {
				var m map[string]json.RawMessage
				if err := json.Unmarshal(e.Raw(), &m); err != nil {
					t.Fatalf("migrated entry %d is not a JSON object: %v", i, err)
				}
				if want == 1 {
					if len(e.ID) != 8 || ids[e.ID] {
						t.Fatalf("v1 entry %d got id %q (not a fresh unique 8-hex id)", i, e.ID)
					}
					parent := ""
					if i > 0 {
						parent = file.Entries[i-1].ID
					}
					if e.ParentID != parent {
						t.Fatalf("v1 entry %d parent %q, want the previous entry %q", i, e.ParentID, parent)
					}
					if string(m["id"]) != `"`+e.ID+`"` {
						t.Fatalf("v1 entry %d: Raw id %s, Entry.ID %q", i, m["id"], e.ID)
					}
					// Pi's migrateV1ToV2 resolves and deletes firstKeptEntryIndex only
					// when it is a number (typeof === "number"); any other value stays.
					if e.Type == session.TypeCompaction {
						_, kept := m["firstKeptEntryIndex"]
						present, number := fzFieldKind(lines, e.Line, "firstKeptEntryIndex")
						if want := present && !number; kept != want {
							t.Fatalf("v1 compaction %d: firstKeptEntryIndex kept=%v, want %v (in the source: present=%v, a number=%v; Pi deletes exactly the numbers)", i, kept, want, present, number)
						}
					}
				}
				ids[e.ID] = true
				if e.Type == session.TypeMessage && e.Role() == "hookMessage" {
					t.Fatalf("entry %d still has role hookMessage after migration", i)
				}
			}
			fzCheckFile(t, file)
		})
	})
}

// fzFieldKind reports whether the object on 1-based line n has key, and whether its
// value is a JSON number (the last occurrence wins, as in JSON.parse).
func fzFieldKind(lines [][]byte, n int, key string) (present, number bool) {
	if n < 1 || n > len(lines) {
		return false, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSuffix(lines[n-1], []byte("\r")), &m) != nil {
		return false, false
	}
	v, ok := m[key]
	return ok, len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))
}

// FuzzIndex builds id/parentId graphs from the fuzz bytes: each entry takes two bytes
// that choose its id from a small pool (so ids repeat) and its parent (none, itself, a
// pool id, or a missing one) and its type (messages, compactions naming pool ids as
// firstKeptEntryId, branch summaries, labels of pool ids). Every walk terminates.
func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 0, 1, 1, 2, 2})                                     // a chain
	f.Add([]byte{0, 0x11, 1, 0x02, 2, 0x12})                            // self parents and a cycle
	f.Add([]byte{0, 0x40, 0, 0x41, 1, 0x80, 1, 0x81, 2, 0xc0})          // duplicates, compactions, labels
	f.Add(bytes.Repeat([]byte{3, 0x23, 4, 0x34, 5, 0x45, 6, 0x56}, 20)) // long cycles
	f.Fuzz(func(t *testing.T, spec []byte) {
		if len(spec) > 1200 {
			spec = spec[:1200]
		}
		pool := func(b byte) string { return fmt.Sprintf("id%02d", int(b)%23) }
		var b strings.Builder
		b.WriteString(fzHeader + "\n")
		for i := 0; i+1 < len(spec); i += 2 {
			id := pool(spec[i])
			sel := spec[i+1]
			var parent any
			switch sel & 0x0f % 4 {
			case 0:
				parent = nil
			case 1:
				parent = id
			case 2:
				parent = pool(sel >> 4 * 3)
			case 3:
				parent = "missing" + pool(sel)
			}
			ts := fmt.Sprintf("2026-01-01T00:00:%02d.000Z", (i/2)%60)
			e := map[string]any{"id": id, "parentId": parent, "timestamp": ts}
			switch sel >> 6 {
			case 0:
				role := []string{"user", "assistant", "toolResult", "custom"}[int(spec[i])%4]
				e["type"] = "message"
				e["message"] = map[string]any{"role": role, "content": []any{map[string]any{"type": "text", "text": "t" + id}}, "timestamp": i}
			case 1:
				e["type"] = "compaction"
				e["summary"], e["firstKeptEntryId"], e["tokensBefore"] = "s", pool(sel), 10
			case 2:
				e["type"] = "branch_summary"
				e["fromId"], e["summary"] = pool(sel), "b"
			case 3:
				e["type"] = "label"
				e["targetId"], e["label"] = pool(sel>>2), "L"
			}
			line, _ := json.Marshal(e)
			b.Write(line)
			b.WriteByte('\n')
		}
		fzWatchdog(t, 20*time.Second, func() {
			file, err := session.Parse([]byte(b.String()))
			if err != nil {
				t.Fatalf("a structurally defective but well-formed file is refused: %v", err)
			}
			fzCheckFile(t, file)
			// The follower sees the same entries when the file is appended line by line.
			ix := session.NewIndex(&session.File{Header: file.Header})
			for _, e := range file.Entries {
				ix.Append(e)
			}
			for _, e := range file.Entries {
				if p := ix.Path(e.ID); len(p) > len(file.Entries) {
					t.Fatalf("incremental index: Path(%s) too long", e.ID)
				}
			}
		})
	})
}

// hostileBound is the most a hostile file may grow the heap by, as a multiple of its
// size, while it is loaded (or parsed), indexed and walked (fzCheckFile).
const hostileBound = 8

// TestHostileInputMemoryBounded loads 10 MB inputs (1 MB under -race or -short, with
// 8 MB more allowed) of hostile shapes, with Load (a file, as the server reads
// sessions) and with Parse (bytes in memory): none panics or hangs, the heap grows by at
// most hostileBound times the input at its peak (sampled every 2 ms; garbage the
// collector has not reclaimed yet counts) or the input is refused before it grows, and
// the heap returns to its baseline afterwards. The densest shape, millions of tiny
// entries ("{}" lines, each an entry as in Pi, each costing a few hundred bytes of
// records), is refused with ErrTooDense; skipped lines cost nothing but a count.
func TestHostileInputMemoryBounded(t *testing.T) {
	size, slack := 10<<20, int64(0)
	if fuzzRaceOn || testing.Short() {
		// The race detector makes 10 MB slow. At 1 MB the collector lets the heap grow by
		// the 4 MB of its minimum heap, or by as much as the rest of the package keeps
		// live, before it collects: the bound allows that much more (a regression to
		// tens of times the input still fails it).
		size, slack = 1<<20, 8<<20
	}
	deep := func(open, close string) func() []byte {
		return func() []byte {
			n := (size - 200) / (len(open) + len(close))
			return []byte(fzHeader + "\n" + `{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":` +
				strings.Repeat(open, n) + strings.Repeat(close, n) + `}}` + "\n")
		}
	}
	// Each input is made when its case runs, so that the others are not on the heap
	// (the collector lets the heap grow in proportion to what is live).
	cases := []struct {
		name    string
		data    func() []byte
		entries int   // entries loaded
		refused error // or the error the input is refused with
	}{
		{"one 10 MB line of [", func() []byte { return []byte(fzHeader + "\n" + strings.Repeat("[", size)) }, 0, nil},
		{"an entry nested 5M levels deep", deep("[", "]"), 0, nil},
		{"an entry nested in objects 2M deep", deep(`{"a":`, "}"), 0, nil},
		{"3.5M tiny lines", func() []byte { return []byte(fzHeader + "\n" + strings.Repeat("{}\n", size/3)) }, 0, session.ErrTooDense},
		{"1M skipped non-JSON lines", func() []byte { return []byte(fzHeader + "\n" + strings.Repeat("garbage\n\n", size/9)) }, 0, nil},
		{"a 10 MB torn last line", func() []byte {
			return []byte(fzHeader + "\n" + `{"type":"message","id":"a","message":{"content":"` + strings.Repeat("x", size))
		}, 0, nil},
		{"entries in one long cycle", func() []byte { return fzCycle(size / 150) }, size / 150, nil},
		{"a 10 MB string with escapes", func() []byte {
			return []byte(fzHeader + "\n" + `{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"` + strings.Repeat(`\u00e9\n`, size/8) + `","timestamp":1}}` + "\n")
		}, 1, nil},
		{"10 MB of NUL and invalid UTF-8 bytes", func() []byte {
			return append([]byte(fzHeader+"\n"), bytes.Repeat([]byte{0, 0xff, 0xfe, '\n'}, size/4)...)
		}, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, via := range []string{"Load", "Parse"} {
				t.Run(via, func(t *testing.T) {
					data := c.data()
					n := len(data)
					path := ""
					if via == "Load" {
						path = filepath.Join(t.TempDir(), "hostile.jsonl")
						if err := os.WriteFile(path, data, 0o600); err != nil {
							t.Fatal(err)
						}
						data = nil // the input is the file
					}
					grew, after, entries, elapsed, err := hostileLoad(t, data, path)
					what := "hostile-parse"
					if via == "Load" {
						what = "hostile-load"
					}
					outcome := fmt.Sprintf("%d entries", entries)
					if err != nil {
						outcome = fmt.Sprintf("refused (%s)", strings.TrimPrefix(err.Error(), path+": "))
					}
					t.Logf("RESULT %s %q: %d bytes, %s, %v, peak heap +%d MB (%.1f× input), after GC %+d KB",
						what, c.name, n, outcome, elapsed.Round(time.Millisecond), grew>>20, float64(grew)/float64(n), after>>10)
					switch {
					case c.refused != nil && !errors.Is(err, c.refused):
						t.Errorf("error %v, want %v", err, c.refused)
					case c.refused == nil && err != nil:
						t.Errorf("refused: %v", err)
					case err == nil && entries != c.entries:
						t.Errorf("%d entries, want %d", entries, c.entries)
					}
					if grew > hostileBound*int64(n)+slack {
						t.Errorf("heap grew by %d MB for a %d MB input (more than %d×)", grew>>20, n>>20, hostileBound)
					}
					if after > 8<<20 {
						t.Errorf("heap did not return to its baseline: %+d MB", after>>20)
					}
				})
			}
		})
	}
}

// hostileLoad parses data (or loads path when data is nil) and checks the file, sampling
// the heap every 2 ms: it returns the peak growth over the baseline, the growth left
// after collecting, and the entries loaded or the error.
func hostileLoad(t *testing.T, data []byte, path string) (grew, after int64, entries int, elapsed time.Duration, err error) {
	peak := heap.StartPeak()
	start := time.Now()
	var file *session.File
	var ix *session.Index
	fzWatchdog(t, 60*time.Second, func() {
		// What the server holds for a session: the file and its index.
		if data != nil {
			file, err = session.Parse(data)
		} else {
			file, err = session.Load(path)
		}
		if err == nil {
			entries = len(file.Entries)
			ix = session.NewIndex(file)
		}
	})
	elapsed = time.Since(start)
	grew = peak.Stop()
	// The exhaustive walks of the check (every path, every leaf's context) run after the
	// measurement: their garbage is the test's, and how much of it is still uncollected
	// at a sample depends on the machine's load, not on pi-lsp.
	if file != nil {
		fzWatchdog(t, 60*time.Second, func() { fzCheckFile(t, file) })
	}
	runtime.KeepAlive(ix)
	left := heap.Settled()
	runtime.KeepAlive(data) // in the baseline, and a parsed file's entries are views of it
	return grew, int64(left) - int64(peak.Base), entries, elapsed, err
}

// TestTreeWithDuplicateIDsIsAForest: duplicated ids never make the tree a graph with a
// node reached twice or a cycle (found by FuzzIndex; `pi-lsp tree` printed forever and
// pi/tree never answered).
func TestTreeWithDuplicateIDsIsAForest(t *testing.T) {
	lines := []string{fzHeader,
		`{"type":"message","id":"x","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}`,
		`{"type":"message","id":"y","parentId":"x","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"b","timestamp":2}}`,
		`{"type":"message","id":"x","parentId":"y","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"c","timestamp":3}}`,
		`{"type":"message","id":"z","parentId":null,"timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"d","timestamp":4}}`,
		`{"type":"message","id":"z","parentId":null,"timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"e","timestamp":5}}`,
	}
	f, err := session.Parse([]byte(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	fzWatchdog(t, 10*time.Second, func() { fzCheckFile(t, f) })
	roots := session.NewIndex(f).Tree()
	if len(roots) != 1 || roots[0].Entry != f.Entries[4] {
		t.Errorf("roots: want only the later z (x and y are a cycle through the later x)")
	}
}

// fzCycle is a file whose n entries form one parent cycle.
func fzCycle(n int) []byte {
	var b bytes.Buffer
	b.WriteString(fzHeader + "\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"type":"message","id":"c%d","parentId":"c%d","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"x","timestamp":1}}`+"\n", i, (i+1)%n)
	}
	return bytes.Clone(b.Bytes()) // not the buffer's spare capacity
}
