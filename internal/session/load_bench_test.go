package session_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// benchFile writes a generated session sized by PI_LSP_BENCH_ENTRIES (default 16000,
// about 26 MB) and returns its path and size.
func benchFile(b *testing.B) (string, int64) {
	n := 16000
	if s := os.Getenv("PI_LSP_BENCH_ENTRIES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	path := filepath.Join(b.TempDir(), "s.jsonl")
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := benchgen.Write(out, benchgen.Options{Entries: n, Seed: int64(n)}); err != nil {
		b.Fatal(err)
	}
	out.Close()
	st, _ := os.Stat(path)
	return path, st.Size()
}

// BenchmarkLoadIndex is a session's load and index, as a job or the server's first look
// at a session makes them.
func BenchmarkLoadIndex(b *testing.B) {
	path, size := benchFile(b)
	b.SetBytes(size)
	for b.Loop() {
		f, err := session.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		session.NewIndex(f)
	}
}

// BenchmarkLiveRefresh is the server's refresh of a followed session after one line was
// appended to it (what each of Pi's appends costs the server).
func BenchmarkLiveRefresh(b *testing.B) {
	path, _ := benchFile(b)
	l, err := session.OpenLive(path)
	if err != nil {
		b.Fatal(err)
	}
	parent := l.Index.LeafID()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("b%07x", i)
		i++
		line := fmt.Sprintf(`{"type":"custom","id":%q,"parentId":%q,"timestamp":"2025-01-01T00:00:00.000Z","customType":"bench"}`+"\n", id, parent)
		if _, err := f.WriteString(line); err != nil {
			b.Fatal(err)
		}
		if changed, err := l.Refresh(); err != nil || !changed {
			b.Fatal(changed, err)
		}
		parent = id
	}
}

// BenchmarkLiveSnapshot is what a job's snapshot of the followed index costs the server
// (the id table and the labels copied; the entries shared).
func BenchmarkLiveSnapshot(b *testing.B) {
	path, _ := benchFile(b)
	l, err := session.OpenLive(path)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := l.Snapshot(); err != nil {
			b.Fatal(err)
		}
	}
}
