package session

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// A file truncated (or replaced) after it was loaded leaves its messages with no bytes
// to read again: every accessor of a message's body answers empty, the file's ReadErr
// says it was rewritten, and nothing recurses (the unreadable message used to read
// itself again without end, a fatal stack overflow).
func TestTruncatedFileMessagesAnswerEmptyAndReportRewritten(t *testing.T) {
	for _, how := range []string{"truncated", "replaced"} {
		t.Run(how, func(t *testing.T) {
			head := testfile.SessionHeader("s")
			lines := []string{
				`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"a string","timestamp":1}}`,
				`{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"blocks"}],"timestamp":2}}`,
				`{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"bashExecution","command":"ls","output":"out","exitCode":0,"timestamp":3}}`,
			}
			path := testfile.Temp(t, "s.jsonl", head+"\n"+strings.Join(lines, "\n")+"\n")
			f, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			switch how {
			case "truncated":
				if err := os.Truncate(path, int64(len(head)+1)); err != nil {
					t.Fatal(err)
				}
			case "replaced":
				tmp := testfile.Write(t, path+".new", head+"\n")
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
				f.src.mu.Lock() // as after a rest: the next read reopens by path
				if f.src.fd != nil {
					f.src.fd.Close()
					f.src.fd = nil
				}
				f.src.mu.Unlock()
			}
			for _, e := range f.Entries {
				m, err := e.Message()
				if err != nil {
					t.Fatal(err)
				}
				if s, ok := m.StringContent(); ok || s != "" {
					t.Errorf("%s: StringContent %q %v of a vanished line", e.ID, s, ok)
				}
				if b := m.Blocks(); len(b) != 0 {
					t.Errorf("%s: Blocks %+v of a vanished line", e.ID, b)
				}
				_ = m.Text(" ")
				_ = m.OutputText()
				_ = EstimateTokens(m)
			}
			if err := f.ReadErr(); !errors.Is(err, ErrRewritten) {
				t.Fatalf("ReadErr = %v, want ErrRewritten", err)
			}
		})
	}
}
