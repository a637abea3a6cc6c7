package rpc_test

// FuzzFraming writes arbitrary bytes to a running server (after a valid initialize):
// broken headers, Content-Length missing, negative, huge or lying, bodies that are not
// JSON or not JSON-RPC, params of the wrong types, deep nesting. The server never
// panics, never hangs (every step has a deadline), writes only well-formed frames, and
// still answers a valid request sent afterwards. Seeds: testdata/fuzz/FuzzFraming/. The
// deadlines (30 s for the answer, 20 s for Serve to return) are generous because fuzz
// workers share the machine; a real hang never ends.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	lspframe "github.com/pi-lsp/pi-lsp/internal/rpc/frame"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/feed"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/heap"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

// fzMaxFrame is the frame limit of the fuzzed server; the padding written after the
// fuzz input is longer, so a frame the input left open is always completed.
const fzMaxFrame = 64 << 10

const fzSyncID = "zz-sync-7f3a"

// fzConn is one server and a strict reader of what it writes.
type fzConn struct {
	conn   net.Conn
	served chan int
	frames *feed.Feed[[]byte] // ended once Serve returned

	mu  sync.Mutex
	bad error
}

func fzStart(tb testing.TB, agentDir string, maxFrame int) *fzConn {
	clientEnd, serverEnd := net.Pipe()
	c := &fzConn{conn: clientEnd, served: make(chan int, 1), frames: feed.New[[]byte]()}
	opt := rpc.Options{AgentDir: agentDir, MaxFrameBytes: maxFrame, WatchInterval: time.Hour, Debounce: time.Millisecond,
		HookTimeout: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	go func() {
		code := rpc.Serve(context.Background(), serverEnd, serverEnd, serverEnd, opt)
		c.frames.End()
		c.served <- code
	}()
	go c.read()
	return c
}

// read parses the server's output strictly (one canonical Content-Length header, a
// blank line, a JSON body).
func (c *fzConn) read() {
	fr := lspframe.NewStrictReader(c.conn)
	for {
		body, err := fr.Next()
		if err != nil {
			var fe *lspframe.Error
			if errors.As(err, &fe) {
				c.mu.Lock()
				if c.bad == nil {
					c.bad = err
				}
				c.mu.Unlock()
			}
			return
		}
		c.frames.Add(body)
	}
}

// awaitID waits for an answer to id; false on timeout or when the server is gone.
func (c *fzConn) awaitID(id string, d time.Duration) bool {
	_, err := c.frames.Await(d, func(f []byte) bool {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		return json.Unmarshal(f, &m) == nil && string(m.ID) == strconv.Quote(id)
	})
	return err == nil
}

func fzFrame(body string) []byte {
	return []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

var fzLengthRe = regexp.MustCompile(`(?i)content-length:([^\n]*)`)

// fzMayStall reports whether the input declares a frame longer than the padding can
// complete (the server then legitimately waits for its body), or asks the server to
// exit.
func fzMayStall(data []byte) bool {
	for _, m := range fzLengthRe.FindAllSubmatch(data, -1) {
		v := strings.TrimSpace(string(m[1]))
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			// The server reads the value up to the end of the line; anything that parses
			// there with more digits than fit counts as huge.
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return true
			}
			continue
		}
		if n > fzMaxFrame/2 {
			return true
		}
	}
	return bytes.Contains(data, []byte(`"exit"`))
}

// fzEnv is the agent dir shared by the inputs of one fuzz process: one workspace with a
// genuine session, so requests reach real handlers.
func fzEnv(f *testing.F) (agentDir, workspace string) {
	root := f.TempDir()
	agentDir = isolate.Under(f, root, filepath.Join(root, "agent")).AgentDir
	workspace = filepath.Join(root, "work", "project")
	dir := session.SessionDir(agentDir, workspace)
	for _, d := range []string{workspace, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(corpus.Path("genuine"), "tree-nav.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_fz.jsonl"), data, 0o644); err != nil {
		f.Fatal(err)
	}
	return agentDir, workspace
}

func FuzzFraming(f *testing.F) {
	agentDir, workspace := fzEnv(f)
	initialize := fzFrame(fmt.Sprintf(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"processId":1,"rootUri":%q,"capabilities":{}}}`, "file://"+workspace))
	deep := func(n int) string {
		return `{"jsonrpc":"2.0","id":"deep","method":"pi/tree","params":{"session":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
	}
	for _, s := range [][]byte{
		fzFrame(`{"jsonrpc":"2.0","id":1,"method":"pi/tree"}`),
		fzFrame(`{"jsonrpc":"2.0","id":5,"method":`),
		[]byte("Content-Length: -5\r\n\r\n{}"),
		[]byte("Content-Length: 99999999999999999999999\r\n\r\n{}"),
		[]byte("Content-Length: 10\r\n\r\n" + `{"jsonrpc":"2.0","id":14,"method":"pi/tree"}`),
		[]byte("Content-Type: application/vscode-jsonrpc\r\n\r\n{}"),
		fzFrame(`{"jsonrpc":"2.0","id":16,"method":"pi/tree","params":{"session":5}}`),
		fzFrame(`{"jsonrpc":"2.0","id":"n22","method":"pi/navigate","params":{"targetId":5}}`),
		fzFrame(deep(3000)),
		fzFrame(`[{"jsonrpc":"2.0","id":9,"method":"pi/tree"}]`),
		fzFrame(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"x"}}`),
		[]byte("\r\n\r\ngarbage\r\nContent-Length: 2\r\n\r\n{}"),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := fzStart(t, agentDir, fzMaxFrame)
		defer func() {
			_ = c.conn.Close()
			select {
			case <-c.served:
			case <-time.After(20 * time.Second):
				buf := make([]byte, 1<<16)
				t.Fatalf("Serve did not return within 20s after the client closed\n%s", buf[:runtime.Stack(buf, true)])
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.bad != nil {
				t.Fatalf("the server wrote a malformed frame: %v", c.bad)
			}
		}()
		_ = c.conn.SetWriteDeadline(time.Now().Add(20 * time.Second))
		if _, err := c.conn.Write(initialize); err != nil {
			t.Fatalf("write initialize: %v", err)
		}
		if !c.awaitID("init", 10*time.Second) {
			t.Fatal("no answer to initialize")
		}
		sync := fzFrame(`{"jsonrpc":"2.0","id":"` + fzSyncID + `","method":"pi/sessions","params":{}}`)
		stall := fzMayStall(data)
		wrote := make(chan error, 1)
		go func() {
			// The input, then enough newlines to complete any frame it left open (a
			// missing blank line, a body shorter than its length), then a valid request.
			if _, err := c.conn.Write(data); err != nil {
				wrote <- err
				return
			}
			if _, err := c.conn.Write(bytes.Repeat([]byte("\n"), fzMaxFrame+16)); err != nil {
				wrote <- err
				return
			}
			_, err := c.conn.Write(sync)
			wrote <- err
		}()
		answered := c.awaitID(fzSyncID, 30*time.Second)
		if !answered && !stall {
			select {
			case err := <-wrote:
				t.Fatalf("no answer to a valid request after the input (write: %v)", err)
			default:
				t.Fatal("no answer to a valid request after the input (the server stopped reading)")
			}
		}
	})
}

// TestUndecodableIDGetsAWellFormedAnswer: the error answer to a body whose id cannot
// be read back as JSON is still a JSON frame (found by FuzzFraming).
func TestUndecodableIDGetsAWellFormedAnswer(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := fzStart(t, t.TempDir(), 0)
	defer func() { _ = c.conn.Close(); <-c.served }()
	go func() {
		_, _ = c.conn.Write([]byte("Content-Length: 25\r\n\r\n" + `{"a":"b","id":""0 ,"c":1}`))
		_, _ = c.conn.Write(fzFrame(`{"jsonrpc":"2.0","id":"after","method":"shutdown"}`))
	}()
	if !c.awaitID("after", 10*time.Second) {
		t.Fatal("no answer to the request after the bad frame")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bad != nil {
		t.Fatalf("the server wrote a malformed frame: %v", c.bad)
	}
}

// TestFramingLargeHostileFrames sends 10 MB frames of hostile shapes to a server with
// the default frame limit (1 MB under -race or -short, with 8 MB more allowed):
// each is answered with an error, the next request is answered, the heap grows by at
// most hostileFrameBound times the frame while it is read, rejected and answered
// (sampled every 2 ms, from a baseline taken with the frame already built), and the heap
// returns to its baseline afterwards.
func TestFramingLargeHostileFrames(t *testing.T) {
	size, slack := 10<<20, int64(0)
	if fuzzRaceOn || testing.Short() {
		// At 1 MB the collector's minimum heap (4 MB) and what the rest of the package
		// keeps live weigh on the peak as much as the frame: the bound allows 8 MB more.
		size, slack = 1<<20, 8<<20
	}
	agentDir := isolate.Setup(t).AgentDir
	bodies := []struct {
		name, id string
		body     func() string
		raw      bool // sent as is, not framed
	}{
		{"nested arrays in params", "big1", func() string {
			return `{"jsonrpc":"2.0","id":"big1","method":"pi/tree","params":{"session":` + strings.Repeat("[", size/2) + strings.Repeat("]", size/2) + `}}`
		}, false},
		{"nested objects, no id", "", func() string { return strings.Repeat(`{"a":`, size/5) }, false},
		{"a 10 MB string param", "big2", func() string {
			return `{"jsonrpc":"2.0","id":"big2","method":"pi/tree","params":{"session":"` + strings.Repeat("x", size) + `.jsonl"}}`
		}, false},
		{"a 10 MB array of messages", "big3", func() string {
			return `{"jsonrpc":"2.0","id":"big3","method":"pi/append","params":{"messages":[` + strings.Repeat(`{"role":5},`, size/11) + `{}]}}`
		}, false},
		{"a 10 MB array of valid messages", "big4", func() string {
			return `{"jsonrpc":"2.0","id":"big4","method":"pi/append","params":{"messages":[` + strings.Repeat(`{"role":"user"},`, size/16) + `{"role":"user"}]}}`
		}, false},
		{"a 10 MB array as the id", "", func() string {
			return `{"jsonrpc":"2.0","id":[` + strings.Repeat(`{},`, size/3) + `{}],"method":"pi/tree"}`
		}, false},
		{"10 MB of unknown members", "big5", func() string {
			return `{"jsonrpc":"2.0","id":"big5","method":"pi/none","junk":[` + strings.Repeat(`{},`, size/3) + `{}]}`
		}, false},
		{"10 MB of garbage", "", func() string { return strings.Repeat("\x00\xff garbage ", size/11) }, false},
		{"a 10 MB header line", "", func() string { return strings.Repeat("X-Garbage: x ", size/13) + "\r\n\r\n" }, true},
		{"10 MB of garbage, then a frame on its line", "", func() string {
			return strings.Repeat("garbage ", size/8) + "Content-Length: 2\r\n\r\n{}"
		}, true},
	}
	c := fzStart(t, agentDir, 0) // the default limit (64 MB)
	defer func() {
		_ = c.conn.Close()
		<-c.served
	}()
	if _, err := c.conn.Write(fzFrame(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"processId":1,"rootUri":"file:///tmp","capabilities":{}}}`)); err != nil {
		t.Fatal(err)
	}
	if !c.awaitID("init", 10*time.Second) {
		t.Fatal("no answer to initialize")
	}
	runtime.GC()
	start := heap.HeapAlloc()
	worst := 0.0
	for i, b := range bodies {
		next := fmt.Sprintf("next-%d", i)
		frame := []byte(b.body()) // the test's copy, part of the baseline
		if !b.raw {
			frame = fzFrame(string(frame))
		}
		nextFrame := fzFrame(`{"jsonrpc":"2.0","id":"` + next + `","method":"pi/sessions","params":{}}`)
		peak := heap.StartPeak()
		go func() {
			_, _ = c.conn.Write(frame)
			_, _ = c.conn.Write(nextFrame)
		}()
		if !c.awaitID(next, 60*time.Second) {
			t.Fatalf("%s: the next request was not answered", b.name)
		}
		if b.id != "" && !c.awaitID(b.id, 60*time.Second) {
			t.Fatalf("%s: no answer to the large request", b.name)
		}
		grew := peak.Stop()
		runtime.KeepAlive(frame)
		largest, errs := 0, 0
		for _, f := range c.frames.Take() {
			largest = max(largest, len(f))
			if bytes.Contains(f, []byte(`"error"`)) {
				errs++
			}
		}
		ratio := float64(grew) / float64(len(frame))
		worst = max(worst, ratio)
		t.Logf("RESULT hostile-frame %q: %d bytes, %d error answer(s), largest answer %d bytes, peak heap +%d MB (%.1f× the frame)",
			b.name, len(frame), errs, largest, grew>>20, ratio)
		if errs == 0 {
			t.Errorf("%s: no error answer", b.name)
		}
		if grew > hostileFrameBound*int64(len(frame))+slack {
			t.Errorf("%s: peak heap +%d MB for a %d MB frame (more than %d×)", b.name, grew>>20, len(frame)>>20, hostileFrameBound)
		}
	}
	time.Sleep(200 * time.Millisecond) // let the answered jobs finish
	after := int64(heap.Settled()) - int64(start)
	t.Logf("RESULT hostile-frames: %d frames of %d MB answered with errors; peak heap at most %.1f× a frame (the test's reading of the answers included); heap after GC %+d MB from the baseline",
		len(bodies), size>>20, worst, after>>20)
	if after > 8<<20 {
		t.Errorf("heap grew by %d MB after the large frames", after>>20)
	}
}

// hostileFrameBound is the most one hostile frame may grow the heap by, as a multiple of
// its size.
const hostileFrameBound = 8
