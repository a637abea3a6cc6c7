// Package corpus reaches the session corpus under testdata/corpus (genuine sessions
// written by real Pi, and synthetic ones) from any package's tests, and copies its
// files to where a test may write them.
//
// Invariant: a test never writes to the corpus itself; it gets a copy in its own temp
// dir, either under the corpus name (Copy) or under the file name Pi gives the session
// in a sessions folder (Install).
//
// Import it only from _test.go files.
package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// Dir is the path of testdata/corpus, which does not depend on the test's working
// directory (testfile.Repo).
func Dir() string { return testfile.Repo("testdata/corpus") }

// Path is the corpus file rel (slash-separated, e.g. "genuine/tree-nav.jsonl").
func Path(rel string) string { return testfile.Repo("testdata/corpus/" + rel) }

// Genuine is the genuine session name (without .jsonl), written by real Pi 0.73.1.
func Genuine(name string) string { return Path("genuine/" + name + ".jsonl") }

// Read returns the bytes of the corpus file rel.
func Read(t testing.TB, rel string) []byte {
	t.Helper()
	return testfile.ReadRepo(t, "testdata/corpus/"+rel)
}

// Copy copies the corpus file rel into a fresh temp dir under its base name and
// returns the copy's path.
func Copy(t testing.TB, rel string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(rel))
	if err := os.WriteFile(dst, Read(t, rel), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Install writes the session file src (any path) into dir under Pi's file name for its
// header (a "-2", "-3", ... suffix when that name is taken) with the given modification
// time, and returns the new path. A zero mtime leaves the time of writing.
func Install(t testing.TB, src, dir string, mtime time.Time) string {
	t.Helper()
	data := sessiontest.Read(t, src)
	f := sessiontest.Parse(t, data)
	return write(t, dir, session.FileName(f.Header.Timestamp, f.Header.ID), data, mtime, true)
}

// InstallWithCwd is Install with the header's cwd replaced by cwd (real Pi refuses a
// session whose cwd does not exist, and the owner check compares it with the pi
// process's cwd). Only the header line changes; every other byte is the original's. A
// file of that name is replaced, so installing a session again refreshes it.
func InstallWithCwd(t testing.TB, src, dir, cwd string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	nl := strings.IndexByte(string(data), '\n')
	var h map[string]any
	if err := json.Unmarshal(data[:nl], &h); err != nil {
		t.Fatal(err)
	}
	old, _ := json.Marshal(h["cwd"])
	nw, _ := json.Marshal(cwd)
	head := strings.Replace(string(data[:nl]), `"cwd":`+string(old), `"cwd":`+string(nw), 1)
	ts, _ := h["timestamp"].(string)
	id, _ := h["id"].(string)
	return write(t, dir, session.FileName(ts, id), append([]byte(head), data[nl:]...), time.Time{}, false)
}

func write(t testing.TB, dir, name string, data []byte, mtime time.Time, fresh bool) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, name)
	path := base
	for i := 2; fresh; i++ {
		if _, err := os.Stat(path); err != nil {
			break
		}
		path = strings.TrimSuffix(base, ".jsonl") + fmt.Sprintf("-%d.jsonl", i)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// EnlargeToolResults rewrites the session file at path so that each tool result is a
// long text of its own (old ones are then worth clearing). The file is replaced by a
// rename, as any other writer's change.
func EnlargeToolResults(t testing.TB, path string) {
	t.Helper()
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(sessiontest.Read(t, path)))
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if m, ok := e["message"].(map[string]any); ok && m["role"] == "toolResult" {
			n++
			m["content"] = []any{map[string]any{"type": "text", "text": strings.Repeat(fmt.Sprintf("line %d of a long tool output\n", n), 200)}}
		}
		b, _ := json.Marshal(e)
		out.Write(append(b, '\n'))
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
