// Package testfile writes the files a test reads (a session, a config) where the test
// may write them, and reads the repository's own files a test checks (docs, manifests),
// or fails the test.
//
// Invariant: it imports nothing of this module, so that the tests inside any package,
// internal/session's own included, can use it.
package testfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Write writes content to path (mode 0644) and answers path, or fails the test.
func Write(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Temp writes content to a file named name in a new temp dir of the test and answers
// its path.
func Temp(t testing.TB, name, content string) string {
	t.Helper()
	return Write(t, filepath.Join(t.TempDir(), name), content)
}

// SessionHeader is the header line of a Pi v3 session (started 2026-01-01 in /w) whose id
// is id, a string JSON needs no escape for: the line a test's hand-written session begins
// with.
func SessionHeader(id string) string {
	return `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`
}

// Repo is the path of the repository's file or folder rel (slash-separated, relative to
// the repository's root; "" for the root), found from this file so that it does not
// depend on the test's working directory.
func Repo(rel string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", filepath.FromSlash(rel))
}

// ReadRepo returns the bytes of the repository's file rel (see Repo), or fails the test.
func ReadRepo(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(Repo(rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
