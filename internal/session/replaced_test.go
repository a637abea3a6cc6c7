package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// A session renamed over between its load and the start of following it (a writer that
// rewrites through a temporary file) is read again whole at the next refresh. Before,
// the follower took the inode of the path after the load, the new file's, and read it
// from the old file's offset: a dry run of clear-tool-output then saw the old tool
// results while the job that followed saw the new ones.
func TestFollowingStartsFromTheInodeLoaded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	session := func(text string) string {
		var b strings.Builder
		b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
		parent := "null"
		for i := range 4 {
			id := fmt.Sprintf("e%d", i)
			fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":%q,"timestamp":1}}`+"\n", id, parent, text)
			parent = fmt.Sprintf("%q", id)
		}
		return b.String()
	}
	testfile.Write(t, path, session("short"))
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := testfile.Write(t, path+".tmp", session(strings.Repeat("much longer text ", 20)))
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	u, err := tailOf(f).Poll()
	if err != nil {
		t.Fatal(err)
	}
	if !u.Reset || len(u.Lines) != 5 {
		t.Fatalf("after the file was replaced: reset %v, %d lines (want a reset and the new file's 5)", u.Reset, len(u.Lines))
	}
}
