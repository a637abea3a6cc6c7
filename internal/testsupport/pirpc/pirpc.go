// Package pirpc runs one `pi --mode rpc` process of a test (a command prepared by
// isolate.GroupCmd): the JSON lines it writes to stdout collected as they come, a wait
// for the first of them that matches, a command written to its stdin, and its end.
//
// Import it only from _test.go files.
package pirpc

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/feed"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

// ErrExited and ErrTimeout are why Await found no line.
var (
	ErrExited  = errors.New("pi exited")
	ErrTimeout = errors.New("timed out")
)

// Proc is a started pi process.
type Proc struct {
	PID    int
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *feed.Feed[map[string]any] // ended once the process was waited for
	mu     sync.Mutex                 // guards stderr
	stderr strings.Builder
	exited chan struct{} // closed once stdout ended and the process was waited for
}

// Start starts cmd with pipes to its stdin and stdout (what it writes to stderr is kept
// for Stderr) and reads its JSON lines until it exits; the test's end kills it. It fails
// the test when pi cannot start.
func Start(t testing.TB, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{cmd: cmd, lines: feed.New[map[string]any](), exited: make(chan struct{})}
	cmd.Stderr = writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.stderr.Write(b)
	})
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.PID = cmd.Process.Pid
	t.Cleanup(p.Kill)
	go func() {
		defer close(p.exited)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			p.lines.Add(m)
		}
		_ = cmd.Wait()
		p.lines.End()
	}()
	return p
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// Environ is the test binary's environment without what would make pi read or write
// the user's own files or accounts: the API keys, HOME, TMPDIR, XDG_* and the variables
// whose names begin with one of drop (e.g. "PI_").
func Environ(drop ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasPrefix(k, "XDG_") || k == "HOME" || k == "TMPDIR" || hasPrefix(k, drop) {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Send writes cmd to pi's stdin as one JSON line.
func (p *Proc) Send(cmd map[string]any) error {
	b, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	_, err = p.stdin.Write(append(b, '\n'))
	return err
}

// CloseStdin ends pi's input.
func (p *Proc) CloseStdin() error { return p.stdin.Close() }

// Lines are the JSON lines pi wrote so far.
func (p *Proc) Lines() []map[string]any { return p.lines.Items() }

// Stderr is what pi wrote to stderr so far.
func (p *Proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Await waits for the first line that match accepts: ErrExited when pi exits before
// writing one, ErrTimeout when timeout passes first.
func (p *Proc) Await(timeout time.Duration, match func(map[string]any) bool) (map[string]any, error) {
	m, err := p.lines.Await(timeout, match)
	switch {
	case errors.Is(err, feed.ErrEnded):
		return nil, ErrExited
	case errors.Is(err, feed.ErrTimeout):
		return nil, ErrTimeout
	}
	return m, err
}

// Exited is closed once pi exited and its output was read.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Kill ends pi and everything it started, and waits (10 s at the most) for its exit.
func (p *Proc) Kill() {
	_ = isolate.KillGroup(p.cmd)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
	}
}
