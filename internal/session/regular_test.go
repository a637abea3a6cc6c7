//go:build unix

package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/watchdog"
)

var regularHeader = testfile.SessionHeader("reg")

// within runs fn and fails the test unless it returns within d (a blocked open of a
// FIFO is then released by opening its other end).
func within(t *testing.T, d time.Duration, what string, fn func(), unblock func()) {
	t.Helper()
	if done, ok := watchdog.Run(d, fn); !ok {
		unblock()
		<-done
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// releaseFIFO opens the FIFO's writing end and closes it: a reader blocked in its open
// returns and reads an end of file.
func releaseFIFO(path string) func() {
	return func() {
		for range 100 {
			fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err == nil {
				syscall.Close(fd)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// A FIFO, a link to a device and a directory named *.jsonl are refused at once as not
// regular files, by Load and by every reader of the package (the FIFO used to block the
// open for ever, the device to be read until the header scan gave up).
func TestLoadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.jsonl")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.jsonl")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, zero, sub} {
		name := filepath.Base(p)
		within(t, 3*time.Second, "Load("+name+")", func() {
			_, err := Load(p)
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("Load(%s) = %v, want ErrNotRegular", name, err)
			}
		}, releaseFIFO(fifo))
		within(t, 3*time.Second, "headerOK("+name+")", func() {
			if headerOK(p) {
				t.Errorf("headerOK(%s) is true", name)
			}
		}, releaseFIFO(fifo))
		within(t, 3*time.Second, "CheckWritable("+name+")", func() { _ = CheckWritable(p) }, releaseFIFO(fifo))
		within(t, 3*time.Second, "Append("+name+")", func() {
			if _, err := Append(p, nil, []NewEntry{{Type: TypeLabel}}); err == nil {
				t.Errorf("Append(%s) succeeded", name)
			}
		}, releaseFIFO(fifo))
	}
}

// Discovery in a folder holding a FIFO named *.jsonl beside a session: the session is
// found and listed at once, the FIFO left out.
func TestDiscoveryIsNotHeldByAFIFO(t *testing.T) {
	dir := t.TempDir()
	good := testfile.Write(t, filepath.Join(dir, "2026-01-01T00-00-00-000Z_reg.jsonl"), regularHeader+"\n")
	fifo := filepath.Join(dir, "2026-02-01T00-00-00-000Z_fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	within(t, 3*time.Second, "MostRecent", func() {
		if got := MostRecent(dir); got != good {
			t.Errorf("MostRecent = %q, want the session", got)
		}
	}, releaseFIFO(fifo))
	within(t, 3*time.Second, "List", func() {
		list, err := List(dir)
		if err != nil || len(list) != 1 || list[0].Path != good {
			t.Errorf("List = %+v, %v; want the session alone", list, err)
		}
	}, releaseFIFO(fifo))
}

// A sparse file of 2 GiB (one line of zero bytes, longer than Pi can read) is refused as
// too large once the line passes MaxLineBytes, not read whole; a file larger than the
// index can number is refused from its size, before any read.
func TestLoadRefusesOversizedFiles(t *testing.T) {
	dir := t.TempDir()
	sparse := testfile.Write(t, filepath.Join(dir, "sparse.jsonl"), regularHeader+"\n")
	if err := os.Truncate(sparse, 2<<30); err != nil {
		t.Fatal(err)
	}
	_, err := Load(sparse)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("Load(2 GiB sparse) = %v, want ErrTooLarge for its line", err)
	}
	huge := testfile.Write(t, filepath.Join(dir, "huge.jsonl"), regularHeader+"\n")
	if err := os.Truncate(huge, MaxFileBytes+1); err != nil {
		t.Skipf("cannot make a sparse file of %d bytes here: %v", int64(MaxFileBytes+1), err)
	}
	start := time.Now()
	_, err = Load(huge)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "128 GiB") {
		t.Errorf("Load(over 128 GiB) = %v, want ErrTooLarge for its size", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the refusal took %v: the file was read", d)
	}
}

// A line of exactly MaxLineBytes is not what is refused: the limit is past it. (Checked
// on the line end search alone: a file of half a gigabyte is not written.)
func TestLineEndAcceptsUpToMaxLineBytes(t *testing.T) {
	lr := &lineReader{in: lineSource{r: zeroReader{}, size: 4 * MaxLineBytes}}
	if _, err := lr.lineEnd(0, 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a line of zeros past MaxLineBytes: %v", err)
	}
	lr = &lineReader{in: lineSource{r: zeroReader{nl: MaxLineBytes}, size: 4 * MaxLineBytes}}
	if nl, err := lr.lineEnd(0, 0); err != nil || nl != MaxLineBytes {
		t.Fatalf("a line of MaxLineBytes: end %d, %v", nl, err)
	}
	lr = &lineReader{in: lineSource{r: zeroReader{nl: MaxLineBytes + 1}, size: 4 * MaxLineBytes}}
	if _, err := lr.lineEnd(0, 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a line of MaxLineBytes+1: %v", err)
	}
}

// zeroReader reads zero bytes, with a newline at nl when nl > 0.
type zeroReader struct{ nl int64 }

func (z zeroReader) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	if z.nl > 0 && z.nl >= off && z.nl < off+int64(len(p)) {
		p[z.nl-off] = '\n'
	}
	return len(p), nil
}
