package session_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

var rulesHeader = testfile.SessionHeader("0190a000-0000-7000-8000-000000000001")

const (
	rulesUser  = `{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`
	rulesReply = `{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"api":"openai-completions","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}`
)

// loadRuleCases are the line-level rules of Pi 1.6.0's loadEntriesFromFile where it
// differs from 0.73.1 (which trimmed the whole content first): each line is parsed as
// it stands, blank means what String.prototype.trim removes, falsy JSON values are no
// entry, and the header must be the first value parsed.
var loadRuleCases = []struct {
	name    string
	content string
	ids     []string // nil: the file is refused as not a session
}{
	{"plain", rulesHeader + "\n" + rulesUser + "\n" + rulesReply + "\n", []string{"aaaa0001", "aaaa0002"}},
	{"byte order mark before the header", "\ufeff" + rulesHeader + "\n" + rulesUser + "\n", nil},
	{"byte order mark alone on the first line", "\ufeff\n" + rulesHeader + "\n" + rulesUser + "\n", []string{"aaaa0001"}},
	{"malformed line before the header", "{oops\n" + rulesHeader + "\n" + rulesUser + "\n", []string{"aaaa0001"}},
	{"blank lines before the header", "\n  \n\t\n" + rulesHeader + "\n" + rulesUser + "\n", []string{"aaaa0001"}},
	{"null, false, 0 and empty string before the header", "null\nfalse\n0\n\"\"\n-0.0e3\n" + rulesHeader + "\n" + rulesUser + "\n", []string{"aaaa0001"}},
	{"a number before the header", "1\n" + rulesHeader + "\n" + rulesUser + "\n", nil},
	{"an array before the header", "[]\n" + rulesHeader + "\n" + rulesUser + "\n", nil},
	{"a string before the header", "\"x\"\n" + rulesHeader + "\n" + rulesUser + "\n", nil},
	{"a message before the header", rulesUser + "\n" + rulesHeader + "\n", nil},
	{"vertical tab after an entry", rulesHeader + "\n" + rulesUser + "\v\n" + rulesReply + "\n", []string{"aaaa0002"}},
	{"form feed before an entry", rulesHeader + "\n\f" + rulesUser + "\n" + rulesReply + "\n", []string{"aaaa0002"}},
	{"carriage returns", rulesHeader + "\r\n" + rulesUser + "\r\n" + rulesReply + "\r\n", []string{"aaaa0001", "aaaa0002"}},
	{"no-break spaces and a line separator only", rulesHeader + "\n\u00a0\u2028\u3000\n" + rulesUser + "\n", []string{"aaaa0001"}},
	{"leading and trailing JSON spaces", "  " + rulesHeader + " \t\n\t" + rulesUser + "  \n", []string{"aaaa0001"}},
}

// Pi 1.6.0 opens (SessionManager.open) or refuses exactly the files pi-lsp loads or
// refuses, with the same entries.
func TestLoadRulesMatchPi16(t *testing.T) {
	o := oracle.StartLive(t)
	for _, tc := range loadRuleCases {
		t.Run(tc.name, func(t *testing.T) {
			path := testfile.Temp(t, "s.jsonl", tc.content)
			f, err := session.Load(path)
			var ours []string
			if err == nil {
				ours = []string{}
				for _, e := range f.Entries {
					ours = append(ours, e.ID)
				}
			} else if !errors.Is(err, session.ErrNoHeader) {
				t.Fatalf("load: %v", err)
			}
			if !reflect.DeepEqual(ours, tc.ids) && !(len(ours) == 0 && len(tc.ids) == 0 && (ours == nil) == (tc.ids == nil)) {
				t.Errorf("pi-lsp: entries %v (err %v), want %v", ours, err, tc.ids)
			}
			if o == nil {
				return
			}
			var pi struct {
				IDs []string `json:"ids"`
			}
			perr := o.QueryErr(t, map[string]any{"op": "piload", "file": path}, &pi)
			switch {
			case perr != nil && tc.ids != nil:
				t.Errorf("Pi refuses the file (%v), pi-lsp loads it", perr)
			case perr != nil && !strings.Contains(perr.Error(), "not a valid"):
				t.Errorf("Pi: unexpected error %v", perr)
			case perr == nil && tc.ids == nil:
				t.Errorf("Pi loads the file with entries %v, pi-lsp refuses it", pi.IDs)
			case perr == nil && !reflect.DeepEqual(pi.IDs, tc.ids) && len(pi.IDs)+len(tc.ids) > 0:
				t.Errorf("Pi's entries %v, pi-lsp's %v", pi.IDs, tc.ids)
			}
		})
	}
}

// Discovery reads only the start of a file, as Pi 1.6.0's readSessionHeader: within the
// first MiB, blank and malformed lines are skipped and the first value must be the
// header. The newest file (by mtime) with a valid header is the session to continue.
func TestMostRecentMatchesPi16(t *testing.T) {
	o := oracle.StartLive(t)
	big := strings.Repeat(" ", 1<<20) // pushes the header past the scan
	cases := []struct {
		name  string
		files []string // oldest first
		want  string   // the file name MostRecent picks, "" for none
	}{
		{"newest valid wins", []string{rulesHeader + "\n", rulesHeader + "\n"}, "1.jsonl"},
		{"a newer file without a header is passed over", []string{rulesHeader + "\n", rulesUser + "\n"}, "0.jsonl"},
		{"malformed and blank lines before the header", []string{rulesHeader + "\n", "\n{oops\n\n" + rulesHeader + "\n"}, "1.jsonl"},
		{"a byte order mark hides the header", []string{rulesHeader + "\n", "\ufeff" + rulesHeader + "\n"}, "0.jsonl"},
		{"a header past the first MiB is not found", []string{rulesHeader + "\n", big + "\n" + rulesHeader + "\n"}, "0.jsonl"},
		{"a header that ends the file at the scan limit", []string{rulesHeader + "\n", strings.Repeat("\n", 1<<20-len(rulesHeader)) + rulesHeader}, "1.jsonl"},
		{"a header one byte past the scan limit", []string{rulesHeader + "\n", strings.Repeat("\n", 1<<20-len(rulesHeader)+1) + rulesHeader}, "0.jsonl"},
		{"a header without a newline", []string{rulesHeader + "\n", rulesHeader}, "1.jsonl"},
		{"nothing valid", []string{"[]\n" + rulesHeader + "\n", "1\n"}, ""},
		{"a falsy value before the header", []string{rulesHeader + "\n", "null\n" + rulesHeader + "\n"}, "1.jsonl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			base := time.Now().Add(-time.Hour)
			for i, c := range tc.files {
				p := filepath.Join(dir, string(rune('0'+i))+".jsonl")
				testfile.Write(t, p, c)
				mt := base.Add(time.Duration(i) * time.Minute)
				if err := os.Chtimes(p, mt, mt); err != nil {
					t.Fatal(err)
				}
			}
			got := session.MostRecent(dir)
			if got != "" {
				got = filepath.Base(got)
			}
			if got != tc.want {
				t.Errorf("pi-lsp picks %q, want %q", got, tc.want)
			}
			if o == nil {
				return
			}
			var pi struct {
				Path *string `json:"path"`
			}
			o.Query(t, map[string]any{"op": "mostrecent", "dir": dir}, &pi)
			piGot := ""
			if pi.Path != nil {
				piGot = *pi.Path
			}
			if piGot != got {
				t.Errorf("Pi picks %q, pi-lsp %q", piGot, got)
			}
		})
	}
}

// The sessions folder and a new header's cwd use the resolved working directory, so a
// trailing slash, a "." or a ".." names the folder Pi uses.
func TestSessionDirResolvesCwdAsPi(t *testing.T) {
	want := session.SessionDir("/agent", "/w/p")
	for _, cwd := range []string{"/w/p/", "/w/p/.", "/w/x/../p", "//w//p"} {
		if got := session.SessionDir("/agent", cwd); got != want {
			t.Errorf("SessionDir(%q) = %q, want %q", cwd, got, want)
		}
	}
	t.Setenv("HOME", "/w")
	if got := session.SessionDir("/agent", "~/p"); got != want {
		t.Errorf("SessionDir(~/p) = %q, want %q", got, want)
	}
}
