package session

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// A write that fails part-way is taken back: the file is byte-identical afterwards, so
// a running pi's next line is never glued to a partial one of ours.

// failSession is a session of one user message, a1, followed by tail.
func failSession(t *testing.T, tail string) string {
	t.Helper()
	return testfile.Temp(t, "s.jsonl", testfile.SessionHeader("s1")+"\n"+`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`+"\n"+tail)
}

func bigLabel(n int) []NewEntry {
	return []NewEntry{{Type: TypeLabel, ParentID: "a1", Fields: []Field{{Key: "targetId", Value: "a1"}, {Key: "label", Value: strings.Repeat("x", n)}}}}
}

// withWrite replaces the write seam for one test.
func withWrite(t *testing.T, w func(f *os.File, b []byte) (int, error)) {
	t.Helper()
	old := writeAppend
	writeAppend = w
	t.Cleanup(func() { writeAppend = old })
}

func TestFailedAppendLeavesTheFileByteIdentical(t *testing.T) {
	cases := []struct {
		name  string
		tail  string // bytes after the last whole line (a torn line)
		write func(f *os.File, b []byte) (int, error)
	}{
		{"short write without error", "", func(f *os.File, b []byte) (int, error) {
			return f.Write(b[:len(b)/2])
		}},
		{"error after half the bytes", "", func(f *os.File, b []byte) (int, error) {
			n, _ := f.Write(b[:len(b)/2])
			return n, syscall.ENOSPC
		}},
		{"error after one byte", "", func(f *os.File, b []byte) (int, error) {
			n, _ := f.Write(b[:1])
			return n, syscall.EFBIG
		}},
		{"error counting nothing after some bytes", "", func(f *os.File, b []byte) (int, error) {
			f.Write(b[:7])
			return 0, syscall.EIO
		}},
		{"error before any byte", "", func(f *os.File, b []byte) (int, error) {
			return 0, syscall.ENOSPC
		}},
		{"after a torn tail", `{"type":"message","id":"zz","par`, func(f *os.File, b []byte) (int, error) {
			n, _ := f.Write(b[:len(b)-3])
			return n, syscall.ENOSPC
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := failSession(t, c.tail)
			before, _ := os.ReadFile(p)
			withWrite(t, c.write)
			_, err := Append(p, nil, bigLabel(300))
			if err == nil {
				t.Fatal("a failed write was reported as written")
			}
			if strings.Contains(err.Error(), "could not be taken back") {
				t.Fatalf("not taken back: %v", err)
			}
			after, _ := os.ReadFile(p)
			if !bytes.Equal(before, after) {
				t.Fatalf("file changed by a failed append (%d -> %d bytes): %q", len(before), len(after), after[len(before)-min(len(before), len(after)):])
			}
			// The next append works and lands on a line of its own.
			writeAppend = func(f *os.File, b []byte) (int, error) { return f.Write(b) }
			if _, err := Append(p, nil, bigLabel(10)); err != nil {
				t.Fatal(err)
			}
			f, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := NewIndex(f).Label("a1"); got != strings.Repeat("x", 10) {
				t.Fatalf("label after the retry = %q", got)
			}
		})
	}
}

// A line another writer appended after our partial bytes is never cut: the error says
// the partial write stays and where.
func TestFailedAppendNeverCutsAnotherWritersLine(t *testing.T) {
	p := failSession(t, "")
	other := `{"type":"message","id":"b2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"pi","timestamp":2}}` + "\n"
	withWrite(t, func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:10])
		g, err := os.OpenFile(f.Name(), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return n, err
		}
		defer g.Close()
		g.WriteString(other)
		return n, syscall.ENOSPC
	})
	_, err := Append(p, nil, bigLabel(100))
	if err == nil || !strings.Contains(err.Error(), "could not be taken back") || !strings.Contains(err.Error(), "another writer") {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(p); !bytes.HasSuffix(data, []byte(other)) {
		t.Fatal("the other writer's line was cut")
	}
}

// The real thing: a child process under RLIMIT_FSIZE (the limit `prlimit --fsize` sets)
// appends past its limit; the kernel writes what fits and answers EFBIG.
func TestAppendPastTheFileSizeLimitIsTakenBack(t *testing.T) {
	for _, room := range []int{0, 1, 60, 200, 1500} {
		t.Run(strconv.Itoa(room), func(t *testing.T) {
			p := failSession(t, "")
			before, _ := os.ReadFile(p)
			out, err := runLimited(t, int64(len(before)+room), p)
			if err == nil {
				t.Fatalf("the append past the limit succeeded:\n%s", out)
			}
			if !strings.Contains(string(out), "file too large") {
				t.Fatalf("want EFBIG, got %v:\n%s", err, out)
			}
			if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
				t.Fatalf("file grew by %d bytes past a failed append", len(after)-len(before))
			}
		})
	}
}

func runLimited(t *testing.T, limit int64, path string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLimitedAppender$", "-test.v")
	cmd.Env = append(os.Environ(), "PI_LSP_TEST_LIMITED="+path, "PI_LSP_TEST_FSIZE="+strconv.FormatInt(limit, 10))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			if cmd.Process != nil {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		}
	}()
	return cmd.CombinedOutput()
}

// TestHelperLimitedAppender is the child of TestAppendPastTheFileSizeLimitIsTakenBack.
func TestHelperLimitedAppender(t *testing.T) {
	p := os.Getenv("PI_LSP_TEST_LIMITED")
	if p == "" {
		t.Skip("helper process only")
	}
	limit, _ := strconv.ParseUint(os.Getenv("PI_LSP_TEST_FSIZE"), 10, 64)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		t.Fatal(err)
	}
	if _, err := Append(p, nil, bigLabel(2000)); err != nil {
		fmt.Println("append:", err)
		os.Exit(1)
	}
}
