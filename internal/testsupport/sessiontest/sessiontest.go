// Package sessiontest reads and opens session files for tests: the bytes, the loaded
// index, and the entries by id that session.Append takes, each failing the test on
// error, so that no package keeps its own copy of these steps.
//
// Import it only from _test.go files.
package sessiontest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Read reads a file or fails the test.
func Read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	return must(t, b, err)
}

// Parse parses session content held in memory, or fails the test.
func Parse(t testing.TB, data []byte) *session.File {
	t.Helper()
	f, err := session.Parse(data)
	return must(t, f, err)
}

// Load loads the session file at path, or fails the test.
func Load(t testing.TB, path string) *session.File {
	t.Helper()
	f, err := session.Load(path)
	return must(t, f, err)
}

// must is v, or fails the test with err.
func must[T any](t testing.TB, v T, err error) T {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Index loads the session file at path and indexes it, or fails the test.
func Index(t testing.TB, path string) *session.Index {
	t.Helper()
	return session.NewIndex(Load(t, path))
}

// Snapshot loads the session file at path as a job's snapshot (session.LoadSnapshot),
// or fails the test.
func Snapshot(t testing.TB, path string) *session.Snapshot {
	t.Helper()
	s, err := session.LoadSnapshot(path)
	return must(t, s, err)
}

// Taken is every entry of ix by id: the ids a new entry must not reuse, as
// session.Append takes them.
func Taken(ix *session.Index) map[string]*session.Entry {
	taken := make(map[string]*session.Entry, len(ix.Entries()))
	for _, e := range ix.Entries() {
		taken[e.ID] = e
	}
	return taken
}

// ForAppend loads the session file at path (failing the test on error) and returns its
// index with the entries an append to it must not collide with.
func ForAppend(t testing.TB, path string) (*session.Index, map[string]*session.Entry) {
	t.Helper()
	ix := Index(t, path)
	return ix, Taken(ix)
}

// Last loads the session file at path and returns its last entry (the one written
// last), failing the test on error or when the file has no entries.
func Last(t testing.TB, path string) *session.Entry {
	t.Helper()
	f, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) == 0 {
		t.Fatal("no entries")
	}
	return f.Entries[len(f.Entries)-1]
}

// Bench writes a generated session sized by PI_LSP_BENCH_ENTRIES (default 16000, about
// 26 MB) for a benchmark and returns its path and size.
func Bench(b *testing.B) (string, int64) {
	b.Helper()
	n := 16000
	if s := os.Getenv("PI_LSP_BENCH_ENTRIES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	path := filepath.Join(b.TempDir(), "s.jsonl")
	Generate(b, path, benchgen.Options{Entries: n, Seed: int64(n)})
	st, _ := os.Stat(path)
	return path, st.Size()
}

// Append appends s to the file at path as another writer does (Pi appending a line, or
// part of one), or fails the test.
func Append(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// Generate writes the session benchgen generates with opt to path, or fails the test.
func Generate(t testing.TB, path string, opt benchgen.Options) {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := benchgen.Write(out, opt); err != nil {
		t.Fatal(err)
	}
}

// UserMessage is a user message on the path to ix's leaf: its entry id and text.
type UserMessage struct{ ID, Text string }

// UserMessages are the user messages on the path to ix's leaf, oldest first.
func UserMessages(ix *session.Index) []UserMessage {
	var out []UserMessage
	for _, e := range ix.Path(ix.LeafID()) {
		if e.Role() == session.RoleUser {
			m, _ := e.Message()
			out = append(out, UserMessage{e.ID, m.Text("")})
		}
	}
	return out
}
