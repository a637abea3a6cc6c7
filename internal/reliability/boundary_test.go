package reliability

// Boundaries: the LSP server reads and writes only .jsonl files inside the Pi sessions
// folder; any other path (outside, through a symlink, with .., relative, not .jsonl)
// is refused with data.kind "outsideSessions" and the file is left untouched.

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// boundaryEnv is a workspace with one session inside the sessions folder and copies of
// it in places the server must not touch.
type boundaryEnv struct {
	world
	sessionDir string
	inside     string // a valid session inside the folder
	outside    string // a valid session outside the folder
	notJSONL   string // a valid session inside the folder, named .txt
	symlink    string // inside the folder, a .jsonl symlink to outside
	dirLink    string // a symlinked directory inside the folder, pointing outside
	c          *client
}

func newBoundaryEnv(t *testing.T) *boundaryEnv {
	e := &boundaryEnv{world: newWorld(t)}
	e.sessionDir = e.sessionsFolder()
	e.inside = e.install(t, corpus.Genuine("tree-nav"))
	outDir := filepath.Join(e.root, "outside")
	e.outside = corpus.InstallWithCwd(t, corpus.Genuine("tree-nav"), outDir, e.workspace)
	e.notJSONL = filepath.Join(e.sessionDir, "notes.txt")
	mustWrite(t, e.notJSONL, sessiontest.Read(t, e.inside))
	e.symlink = filepath.Join(e.sessionDir, "link.jsonl")
	if err := os.Symlink(e.outside, e.symlink); err != nil {
		t.Fatal(err)
	}
	// The symlink's target is the newest file of the folder, as Pi's "most recent
	// session" rule sees it.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(e.outside, future, future); err != nil {
		t.Fatal(err)
	}
	e.dirLink = filepath.Join(session.SessionsRoot(e.agentDir), "--linked--")
	if err := os.Symlink(outDir, e.dirLink); err != nil {
		t.Fatal(err)
	}
	e.c = startServer(t, serverConfig{AgentDir: e.agentDir, Workspace: e.workspace,
		InitOptions: map[string]any{"session": e.outside}})
	return e
}

func mustWrite(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot records every regular file under dir with its content.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil {
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func TestRefusesPathsOutsideTheSessionsFolder(t *testing.T) {
	e := newBoundaryEnv(t)
	sessionsRoot := session.SessionsRoot(e.agentDir)
	ids := sessiontest.Index(t, e.inside)
	entry := ids.Entries()[1].ID
	paths := map[string]string{
		"outside the folder":                   e.outside,
		"outside, as a file URI":               "file://" + e.outside,
		"outside, percent-encoded ..":          "file://" + strings.ReplaceAll(e.sessionDir, "/", "/") + "/%2e%2e/%2e%2e/%2e%2e/outside/" + filepath.Base(e.outside),
		"escaping with ..":                     e.sessionDir + "/../../../outside/" + filepath.Base(e.outside),
		"escaping with .. from the root":       sessionsRoot + "/../../outside/" + filepath.Base(e.outside),
		"a .jsonl symlink pointing outside":    e.symlink,
		"a directory symlink pointing outside": filepath.Join(e.dirLink, filepath.Base(e.outside)),
		"not .jsonl, inside the folder":        e.notJSONL,
		"not .jsonl, a system file":            "/etc/passwd",
		"relative":                             filepath.Base(e.inside),
		"relative with ..":                     "../outside/" + filepath.Base(e.outside),
		"the sessions folder itself":           sessionsRoot,
		"empty extension trick":                e.inside + "/.",
		"uppercase extension":                  strings.TrimSuffix(e.inside, ".jsonl") + ".JSONL",
	}
	msg := json.RawMessage(`{"role":"user","content":[{"type":"text","text":"must not be written"}],"timestamp":1}`)
	requests := func(p string) map[string]any {
		return map[string]any{
			"pi/tree":           map[string]any{"session": p},
			"pi/context":        map[string]any{"session": p},
			"pi/files":          map[string]any{"session": p},
			"pi/compact":        map[string]any{"session": p, "force": true},
			"pi/navigate":       map[string]any{"session": p, "targetId": entry, "force": true},
			"pi/label":          map[string]any{"session": p, "entryId": entry, "label": "x", "force": true},
			"pi/undoCompaction": map[string]any{"session": p, "force": true},
			"pi/append":         map[string]any{"session": p, "messages": []any{msg}, "force": true},
			"pi/selectSession":  map[string]any{"path": p},
			"workspace/executeCommand": map[string]any{"command": "pi.label",
				"arguments": []any{map[string]any{"session": p, "entryId": entry, "label": "y", "force": true}}},
		}
	}
	before := snapshot(t, e.root)
	refused := 0
	for name, p := range paths {
		for method, params := range requests(p) {
			_, err := e.c.call(context.Background(), method, params)
			switch kind := kindOf(err); {
			case err == nil:
				t.Errorf("%s, %s: accepted %q", name, method, p)
			case kind == "outsideSessions":
				refused++
			default:
				t.Errorf("%s, %s: refused with kind %q (%v), want outsideSessions", name, method, kind, err)
			}
		}
	}
	// initializationOptions.session named the outside file: it was refused. The newest
	// .jsonl of the folder is the symlink out of it: it is not a session of the
	// folder either. So the current session is the workspace's own, and neither the
	// session list nor an append without a session parameter reaches the outside file.
	tree := mustCallFor[rpc.TreeResult](e.c, "pi/tree", map[string]any{})
	if tree.Session != e.inside {
		t.Errorf("current session %q, want the workspace's %q", tree.Session, e.inside)
	}
	list := string(e.c.mustCall("pi/sessions", map[string]any{}))
	if strings.Contains(list, "link.jsonl") || strings.Contains(list, e.outside) {
		t.Errorf("pi/sessions lists the symlink out of the folder: %s", list)
	}
	app := mustCallFor[rpc.AppendResult](e.c, "pi/append", map[string]any{"messages": []any{msg}})
	if app.Session != e.inside {
		t.Errorf("pi/append without a session wrote %q, want %q", app.Session, e.inside)
	}
	before[e.inside] = string(sessiontest.Read(t, e.inside)) // that append was expected
	// Nothing anywhere changed (the tree answer above was a read).
	after := snapshot(t, e.root)
	for p, b := range after {
		if before[p] != b {
			t.Errorf("%s was created or changed", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s was removed", p)
		}
	}
	t.Logf("RESULT boundaries: %d path forms × %d methods refused with outsideSessions (%d requests)", len(paths), len(requests("")), refused)
	// Positive control: a .. that stays inside the folder is accepted.
	inside := filepath.Join(e.sessionDir, "..", filepath.Base(e.sessionDir), filepath.Base(e.inside))
	if _, err := e.c.call(context.Background(), "pi/tree", map[string]any{"session": inside}); err != nil {
		t.Errorf("a path with .. that stays inside was refused: %v", err)
	}
	if _, err := e.c.call(context.Background(), "pi/tree", map[string]any{"session": (&url.URL{Scheme: "file", Path: e.inside}).String()}); err != nil {
		t.Errorf("the inside session as a file URI was refused: %v", err)
	}
}

// TestRefusesMissingPathsOutsideTheFolder: a path outside the folder is refused as
// outside whether or not it exists, so the server cannot be used to probe for files.
func TestRefusesMissingPathsOutsideTheFolder(t *testing.T) {
	e := newBoundaryEnv(t)
	for _, p := range []string{filepath.Join(e.root, "outside", "missing.jsonl"), "/etc/missing.jsonl", e.sessionDir + "/../../../outside/missing.jsonl", e.inside + "\x00.jsonl"} {
		_, err := e.c.call(context.Background(), "pi/tree", map[string]any{"session": p})
		if kindOf(err) != "outsideSessions" {
			t.Errorf("%s: %v (kind %q), want outsideSessions", p, err, kindOf(err))
		}
	}
}
