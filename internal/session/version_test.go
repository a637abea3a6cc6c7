package session

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// A session whose header is newer than Pi 1.6.0's format is read as 1.6.0 reads it and
// never written: every append is refused with a *NewerVersionError, the file untouched.
func TestNewerVersionIsReadOnly(t *testing.T) {
	entry := `{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`
	for _, tc := range []struct {
		name, header string
		readOnly     bool
	}{
		{"v3", `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`, false},
		{"v2", `{"type":"session","version":2,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`, false},
		{"no version", `{"type":"session","id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`, false},
		{"v4", `{"type":"session","version":4,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`, true},
		{"v3.5 after a blank line", "\n" + `{"type":"session","version":3.5,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.header + "\n" + entry + "\n"
			p := testfile.Temp(t, "s.jsonl", body)
			f, err := Load(p)
			if err != nil {
				t.Fatalf("a %s session must load: %v", tc.name, err)
			}
			if len(f.Entries) != 1 {
				t.Fatalf("loaded %d entries", len(f.Entries))
			}
			_, err = Append(p, nil, []NewEntry{{Type: TypeLabel, ParentID: "a1", Fields: []Field{{"targetId", "a1"}, {"label", "x"}}}})
			check := CheckWritable(p)
			if !tc.readOnly {
				if err != nil || check != nil {
					t.Fatalf("append: %v, CheckWritable: %v", err, check)
				}
				return
			}
			var nv *NewerVersionError
			if !errors.As(err, &nv) || !errors.Is(err, ErrNewerVersion) || !errors.Is(check, ErrNewerVersion) {
				t.Fatalf("append: %v, CheckWritable: %v; want a *NewerVersionError", err, check)
			}
			if got, _ := os.ReadFile(p); string(got) != body {
				t.Errorf("the file changed:\n%s", got)
			}
			if msg := err.Error(); !strings.Contains(msg, "newer than Pi 1.6.0's (3)") || !strings.Contains(msg, "read-only") {
				t.Errorf("message %q does not say why the session is read-only", msg)
			}
		})
	}
}
