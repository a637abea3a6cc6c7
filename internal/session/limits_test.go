package session_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

var limitsHeader = testfile.SessionHeader("lim")

// A file with more entries than its size allows a genuine session is refused with
// ErrTooDense, by Parse and by Load, and the error names the count and the size.
func TestDenseFileRefused(t *testing.T) {
	n := 4 * session.DenseFloor
	data := []byte(limitsHeader + "\n" + strings.Repeat(`{"type":"label"}`+"\n", n))
	path := testfile.Temp(t, "dense.jsonl", string(data))
	_, perr := session.Parse(data)
	_, lerr := session.Load(path)
	for _, err := range []error{perr, lerr} {
		if !errors.Is(err, session.ErrTooDense) {
			t.Fatalf("error %v, want ErrTooDense", err)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("in %d bytes", len(data))) || !strings.Contains(err.Error(), "entries") {
			t.Errorf("error %q does not say how many entries in how many bytes", err)
		}
	}
}

// Up to DenseFloor entries are accepted however small, and past it entries of Pi's
// smallest size (a v1 thinking-level change, about 90 bytes) are far from the limit.
func TestDensityLimitAcceptsGenuineFiles(t *testing.T) {
	small := limitsHeader + "\n" + strings.Repeat("{}\n", session.DenseFloor)
	if f, err := session.Parse([]byte(small)); err != nil || len(f.Entries) != session.DenseFloor {
		t.Fatalf("%d tiny entries: err %v", session.DenseFloor, err)
	}
	var b strings.Builder
	b.WriteString(`{"type":"session","id":"v1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	line := `{"type":"thinking_level_change","timestamp":"2026-01-01T00:00:00.000Z","thinkingLevel":"off"}`
	if len(line) <= session.MinEntryBytes+16 {
		t.Fatalf("the smallest entry is %d bytes, too close to the limit", len(line))
	}
	n := 4 * session.DenseFloor
	for i := 0; i < n; i++ {
		b.WriteString(line + "\n")
	}
	if f, err := session.Parse([]byte(b.String())); err != nil || len(f.Entries) != n {
		t.Fatalf("%d minimal entries: err %v", n, err)
	}
	for _, dir := range []string{"genuine", "synthetic"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "corpus", dir, "*.jsonl"))
		for _, p := range files {
			if _, err := session.Load(p); errors.Is(err, session.ErrTooDense) {
				t.Errorf("%s refused: %v", p, err)
			}
		}
	}
}

// Skipped lines and index problems are kept up to MaxReported and counted past it.
func TestSkippedAndProblemsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString(limitsHeader + "\n")
	n := session.MaxReported + 500
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "garbage %d\n", i)
		fmt.Fprintf(&b, `{"type":"message","id":"o%d","parentId":"missing%d","message":{"role":"user","content":"x"}}`+"\n", i, i)
	}
	f, err := session.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Skipped) != session.MaxReported || f.SkippedLines != n {
		t.Errorf("skipped: %d records, %d counted; want %d, %d", len(f.Skipped), f.SkippedLines, session.MaxReported, n)
	}
	for i, s := range f.Skipped {
		if s.Line != 2+2*i {
			t.Fatalf("skipped record %d is line %d, want %d", i, s.Line, 2+2*i)
		}
	}
	ix := session.NewIndex(f)
	if len(ix.Problems()) != session.MaxReported || ix.ProblemCount() != n {
		t.Errorf("problems: %d records, %d counted; want %d, %d", len(ix.Problems()), ix.ProblemCount(), session.MaxReported, n)
	}
	if p := ix.Problems()[0]; p.Kind != session.ProblemOrphan || p.Line != 3 {
		t.Errorf("first problem %v", p)
	}
}
