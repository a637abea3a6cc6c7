//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/watchdog"
)

// oddFiles puts a FIFO and a link to /dev/zero, both named *.jsonl, in dir and returns
// their paths.
func oddFiles(t *testing.T, dir string) (fifo, zero string) {
	t.Helper()
	fifo = filepath.Join(dir, "2030-01-01T00-00-00-000Z_fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero = filepath.Join(dir, "2030-01-01T00-00-00-000Z_zero.jsonl")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	return fifo, zero
}

// `pi-lsp tree` on a FIFO or a link to /dev/zero fails at once ("not a regular file"),
// and `pi-lsp sessions` in a folder holding both lists the real sessions at once (a FIFO
// used to block both for ever).
func TestE2EFIFOAndDeviceRefused(t *testing.T) {
	e2eBinary(t) // built before any process bound starts counting
	env, work, paths := e2eWorkspace(t)
	fifo, zero := oddFiles(t, filepath.Dir(paths[0]))
	for _, p := range []string{fifo, zero} {
		r := startCLI(t, env, 30*time.Second, "tree", p)
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
			t.Fatalf("pi-lsp tree %s still runs after 5s", filepath.Base(p))
		}
		if r.code == 0 || !strings.Contains(r.stderr.String(), "not a regular file") {
			t.Errorf("pi-lsp tree %s: exit %d, stderr %q", filepath.Base(p), r.code, r.stderr.String())
		}
		t.Logf("RESULT odd-file (CLI tree %s): exit %d after %v, %q", filepath.Base(p), r.code, r.took.Round(time.Millisecond), lastLine(r.stderr.String()))
	}
	r := startCLI(t, env, 30*time.Second, "sessions", "--cwd", work, "--json")
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		t.Fatal("pi-lsp sessions still runs after 5s")
	}
	out := r.stdout.String()
	if r.code != 0 || strings.Count(out, `"path"`) != len(paths) || strings.Contains(out, "fifo") || strings.Contains(out, "zero") {
		t.Errorf("pi-lsp sessions: exit %d, stdout %s, stderr %s", r.code, out, r.stderr.String())
	}
	t.Logf("RESULT odd-file (CLI sessions with a FIFO and /dev/zero in the folder): exit %d after %v, %d sessions listed", r.code, r.took.Round(time.Millisecond), strings.Count(out, `"path"`))
}

// The server answers initialize at once, and pi/sessions lists the real sessions, with a
// FIFO and a link to /dev/zero in the workspace's sessions folder (discovery used to
// block on the FIFO, so that initialize was never answered).
func TestE2ELSPInitializeWithFIFOInSessionsFolder(t *testing.T) {
	cfg := lsptest.Config{SkipInitialize: true}
	e := e2eEnv(t, cfg)
	oddFiles(t, e.SessionDir)
	start := time.Now()
	if _, ok := watchdog.Run(5*time.Second, func() { e.Initialize(cfg) }); !ok {
		t.Fatalf("initialize not answered within 5s; logs:\n%s", e.Logs())
	}
	took := time.Since(start)
	res, err := e.Call("pi/sessions", map[string]any{})
	if err != nil {
		t.Fatalf("pi/sessions: %v", err)
	}
	if n := strings.Count(string(res), `"path"`); n != len(e.Paths) || strings.Contains(string(res), "fifo") {
		t.Errorf("pi/sessions listed %d sessions, want %d: %s", n, len(e.Paths), lsptest.Trunc(res))
	}
	t.Logf("RESULT odd-file (LSP initialize with a FIFO and /dev/zero in the sessions folder): answered in %v", took.Round(time.Millisecond))
}

// `pi-lsp tree` on a 2 GiB sparse file (a header line, then zero bytes: one line longer
// than Pi can read) is refused as too large without reading it into memory: the peak
// resident memory of the process stays far below the file (it used to be 2.1 GB).
func TestE2ESparseFileRefusedWithoutReadingIt(t *testing.T) {
	e2eBinary(t) // built before any process bound starts counting
	env, _, paths := e2eWorkspace(t)
	sparse := filepath.Join(filepath.Dir(paths[0]), "2030-01-01T00-00-00-000Z_sparse.jsonl")
	if err := os.WriteFile(sparse, []byte(`{"type":"session","version":3,"id":"sparse","timestamp":"2030-01-01T00:00:00.000Z","cwd":"/w"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 2<<30); err != nil {
		t.Fatal(err)
	}
	r := startCLI(t, env, 60*time.Second, "tree", sparse)
	r.wait(t)
	stderr := r.stderr.String()
	rss := r.peakRSS()
	if r.code == 0 || !strings.Contains(stderr, session.ErrTooLarge.Error()) {
		t.Errorf("exit %d, stderr %q: want the file refused as too large", r.code, stderr)
	}
	if rss > 200<<20 {
		t.Errorf("peak RSS %d MB reading a 2 GiB sparse file", rss>>20)
	}
	t.Logf("RESULT odd-file (CLI tree on a 2 GiB sparse file): exit %d after %v, peak RSS %d MB, %q", r.code, r.took.Round(time.Millisecond), rss>>20, lastLine(stderr))
}
