package session_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

// findFixture is an agent dir with two projects: "proj" (the working directory) and
// "other", each with sessions whose ids share prefixes across and within projects.
type findFixture struct {
	agent, cwd, other string
	paths             map[string]string // session name -> file
}

// findSessions are the sessions of the fixture: a name, its project, its id, the time of
// its last message (Pi's list order) and its file's mtime (Pi's -c order), in minutes.
var findSessions = []struct {
	name, project, id string
	activity, mtime   int
}{
	{"L1", "proj", "aaaa1111-0000-7000-8000-000000000001", 10, 1},
	{"L2", "proj", "aaaa2222-0000-7000-8000-000000000002", 20, 2},
	{"L3", "proj", "bbbb1111-0000-7000-8000-000000000003", 5, 3},
	{"L4", "proj", "ffff0001-0000-7000-8000-000000000004", 5, 9}, // the newest file of proj
	{"L5", "proj", "hhhh", 1, 4},
	{"L6", "proj", "hhhh-0000-7000-8000-000000000006", 2, 5},
	{"G1", "other", "cccc1111-0000-7000-8000-000000000011", 1, 20},
	{"G2", "other", "aaaa3333-0000-7000-8000-000000000012", 30, 21},
	{"G3", "other", "dddd1111-0000-7000-8000-000000000013", 40, 22},
	{"G4", "other", "dddd2222-0000-7000-8000-000000000014", 50, 23},
	{"G5", "other", "bbbb1111-0000-7000-8000-000000000003", 60, 24}, // L3's id, in another project
	{"G6", "other", "ffff", 1, 25},
	{"G7", "other", "gggg", 1, 26},
	{"G8", "other", "gggg-0000-7000-8000-000000000018", 2, 27},
}

var findBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newFindFixture(t *testing.T) findFixture {
	t.Helper()
	root := t.TempDir()
	fx := findFixture{agent: filepath.Join(root, "agent"), cwd: filepath.Join(root, "w", "proj"), other: filepath.Join(root, "w", "other"), paths: map[string]string{}}
	for _, d := range []string{fx.cwd, fx.other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range findSessions {
		cwd := fx.cwd
		if s.project == "other" {
			cwd = fx.other
		}
		dir := session.SessionDir(fx.agent, cwd)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		ts := findBase.Format("2006-01-02T15:04:05.000Z")
		act := findBase.Add(time.Duration(s.activity) * time.Minute).UnixMilli()
		header := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":%q}`, s.id, ts, cwd)
		user := fmt.Sprintf(`{"type":"message","id":"e0000001","parentId":null,"timestamp":%q,"message":{"role":"user","content":"session %s","timestamp":%d}}`, ts, s.name, act)
		p := filepath.Join(dir, session.FileName(ts, s.id))
		if err := os.WriteFile(p, []byte(header+"\n"+user+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := findBase.Add(time.Duration(s.mtime) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		fx.paths[s.name] = p
	}
	return fx
}

// findCases are Pi 1.6.0's rules of resolveSessionPath (main.ts), as pi-lsp applies
// them: want is the session found, "ambiguous:A,B" (the candidates, newest activity
// first: Pi takes the first) or "not found"; a want starting with / is a path relative
// to the working directory.
var findCases = []struct {
	name, ref, want, scope string
}{
	{"a unique prefix in this project", "aaaa1111", "L1", session.ScopeLocal},
	{"a full id in this project", "aaaa2222-0000-7000-8000-000000000002", "L2", session.ScopeLocal},
	{"a prefix two sessions of this project share", "aaaa", "ambiguous:L2,L1", session.ScopeLocal},
	{"this project first, though another project has the same id", "bbbb1111-0000-7000-8000-000000000003", "L3", session.ScopeLocal},
	{"this project's prefix before another project's exact id", "ffff", "L4", session.ScopeLocal},
	{"an exact id before a longer id it prefixes", "hhhh", "L5", session.ScopeLocal},
	{"only in another project", "cccc", "G1", session.ScopeGlobal},
	{"a prefix two sessions of another project share", "dddd", "ambiguous:G4,G3", session.ScopeGlobal},
	{"another project's exact id before its prefix", "gggg", "G7", session.ScopeGlobal},
	{"no session", "zzzz", "not found", ""},
	{"a relative path", "sub/x.jsonl", "/sub/x.jsonl", session.ScopePath},
	{"a bare file name", "x.jsonl", "/x.jsonl", session.ScopePath},
	{"a path with a backslash", `a\b`, `/a\b`, session.ScopePath},
	{"a path with dots", "./sub/../y.jsonl", "/y.jsonl", session.ScopePath},
}

func (fx findFixture) names(ms []session.Match) string {
	var out []string
	for _, m := range ms {
		for n, p := range fx.paths {
			if p == m.Path {
				out = append(out, n)
			}
		}
	}
	return strings.Join(out, ",")
}

func (fx findFixture) name(p string) string {
	for n, q := range fx.paths {
		if q == p {
			return n
		}
	}
	if rel, err := filepath.Rel(fx.cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return "/" + rel
	}
	return p
}

// TestFindSessionRules encodes the rules of Pi 1.6.0's resolveSessionPath (main.ts:
// SessionManager.findById, then list, then listAll, each by exact id and then by
// startsWith) with one difference: several matches of one step are refused, listed,
// where Pi takes the newest.
func TestFindSessionRules(t *testing.T) {
	fx := newFindFixture(t)
	for _, tc := range findCases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := session.FindSession(tc.ref, fx.cwd, fx.agent)
			var amb *session.AmbiguousError
			var nf *session.NotFoundError
			switch {
			case errors.As(err, &amb):
				if got := "ambiguous:" + fx.names(amb.Matches); got != tc.want || amb.Scope != tc.scope {
					t.Fatalf("got %s in %s, want %s in %s", got, amb.Scope, tc.want, tc.scope)
				}
				for _, m := range amb.Matches {
					if !strings.Contains(err.Error(), m.ID) || !strings.Contains(err.Error(), m.Path) {
						t.Errorf("the refusal does not list %s (%s): %v", m.ID, m.Path, err)
					}
				}
			case errors.As(err, &nf):
				if tc.want != "not found" || !errors.Is(err, session.ErrNoSession) {
					t.Fatalf("not found (%v), want %s", err, tc.want)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if got := fx.name(f.Path); got != tc.want || f.Scope != tc.scope {
					t.Fatalf("got %s (%s) in %s, want %s in %s", got, f.Path, f.Scope, tc.want, tc.scope)
				}
			}
		})
	}
}

// TestContinueRecentRules: `pi -c` is SessionManager.continueRecent, which takes
// findMostRecentSession of the working directory's folder: the newest mtime among the
// files with a valid header, whatever the sessions' activity times; without one, an
// error where Pi starts a new session.
func TestContinueRecentRules(t *testing.T) {
	fx := newFindFixture(t)
	f, err := session.ContinueRecent(fx.cwd, fx.agent)
	if err != nil {
		t.Fatal(err)
	}
	if got := fx.name(f.Path); got != "L4" || f.Scope != session.ScopeContinue || f.ID != findSessions[3].id {
		t.Fatalf("-c takes %s (%+v), want L4", got, f)
	}
	// A newer file without a header is passed over.
	junk := filepath.Join(filepath.Dir(fx.paths["L4"]), "junk.jsonl")
	if err := os.WriteFile(junk, []byte("[]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := session.ContinueRecent(fx.cwd, fx.agent); err != nil || fx.name(f.Path) != "L4" {
		t.Fatalf("-c with a newer junk file: %v %v", f, err)
	}
	_, err = session.ContinueRecent(filepath.Join(fx.cwd, "empty"), fx.agent)
	if !errors.Is(err, session.ErrNoSession) {
		t.Fatalf("-c in a project without sessions: %v", err)
	}
}

// TestFindSessionSkipsSymlinkOut: a file that is a symlink out of its sessions folder is
// no session of that folder, as in List and MostRecent.
func TestFindSessionSkipsSymlinkOut(t *testing.T) {
	fx := newFindFixture(t)
	outside := filepath.Join(t.TempDir(), "s.jsonl")
	header := `{"type":"session","version":3,"id":"kkkk0001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}`
	if err := os.WriteFile(outside, []byte(header+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(session.SessionDir(fx.agent, fx.cwd), "2026-01-01T00-00-00-000Z_kkkk0001.jsonl")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if _, err := session.FindSession("kkkk", fx.cwd, fx.agent); !errors.Is(err, session.ErrNoSession) {
		t.Fatalf("a symlink out of the folder is found: %v", err)
	}
}

// TestFindSessionMatchesPi16 asks real Pi 1.6.0 (its createSessionManager, through
// testdata/pi-resolve.mjs) which session `pi --session REF` and `pi -c` open in the
// fixture, and compares: the same file wherever Pi's answer is unique, Pi's pick first
// among the candidates pi-lsp lists where it is not, and no session where Pi exits.
func TestFindSessionMatchesPi16(t *testing.T) {
	oracle.NeedPiCLI(t, "the differential test of session references")
	fx := newFindFixture(t)
	var queries []map[string]any
	for _, tc := range findCases {
		queries = append(queries, map[string]any{"session": tc.ref})
	}
	queries = append(queries, map[string]any{"continue": true})
	in, err := json.Marshal(map[string]any{"cwd": fx.cwd, "queries": queries})
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "pi-resolve.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := isolate.Child(t, t.TempDir(), fx.agent)
	cmd := exec.Command(oracle.Node(), script)
	cmd.Dir = fx.cwd
	cmd.Env = append(append(os.Environ(), dirs.Env()...), "PI_DIR="+oracle.PiDir())
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pi-resolve.mjs: %v\n%s", err, stderr.String())
	}
	defer func() {
		if t.Failed() {
			t.Logf("Pi's messages:\n%s", stderr.String())
		}
	}()
	var answers []struct {
		Kind   string `json:"kind"`
		Path   string `json:"path"`
		Exists bool   `json:"exists"`
		Code   int    `json:"code"`
	}
	if err := json.Unmarshal(out, &answers); err != nil || len(answers) != len(queries) {
		t.Fatalf("answers %s: %v", out, err)
	}
	for i, tc := range findCases {
		a := answers[i]
		f, err := session.FindSession(tc.ref, fx.cwd, fx.agent)
		var amb *session.AmbiguousError
		switch {
		case a.Kind == "exit":
			if !errors.Is(err, session.ErrNoSession) {
				t.Errorf("%s: Pi exits %d, pi-lsp: %+v %v", tc.name, a.Code, f, err)
			}
		case errors.As(err, &amb):
			if amb.Matches[0].Path != a.Path {
				t.Errorf("%s: Pi takes %s, pi-lsp lists %s first", tc.name, fx.name(a.Path), fx.name(amb.Matches[0].Path))
			}
			if (a.Kind == "fork") != (amb.Scope == session.ScopeGlobal) {
				t.Errorf("%s: Pi %s, pi-lsp's scope %s", tc.name, a.Kind, amb.Scope)
			}
		case err != nil:
			t.Errorf("%s: Pi opens %s, pi-lsp: %v", tc.name, a.Path, err)
		default:
			if f.Path != a.Path {
				t.Errorf("%s: Pi opens %s, pi-lsp %s", tc.name, fx.name(a.Path), fx.name(f.Path))
			}
			if (a.Kind == "fork") != (f.Scope == session.ScopeGlobal) {
				t.Errorf("%s: Pi %s, pi-lsp's scope %s", tc.name, a.Kind, f.Scope)
			}
		}
	}
	c := answers[len(answers)-1]
	f, err := session.ContinueRecent(fx.cwd, fx.agent)
	if err != nil || !c.Exists || c.Path != f.Path {
		t.Errorf("-c: Pi opens %s (exists %v), pi-lsp %s %v", fx.name(c.Path), c.Exists, fx.name(f.Path), err)
	}
}
