package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	lsp "go.lsp.dev/jsonrpc2"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

func TestMain(m *testing.M) { os.Exit(oracle.Main(m)) }

// needLive skips (or, with PI_LSP_REQUIRE_ORACLE=1, fails) a test that needs node and
// the installed real Pi.
func needLive(t testing.TB, what string) {
	t.Helper()
	why := ""
	if _, err := exec.LookPath(oracle.Node()); err != nil {
		why = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(oracle.PiDir(), "dist", "bundle", "cli.js")); err != nil {
		why = "Pi is not installed (run scripts/install-pi.sh)"
	} else if os.Getenv("PI_LSP_ORACLE_OFFLINE") == "1" {
		why = "PI_LSP_ORACLE_OFFLINE=1"
	}
	if why == "" {
		return
	}
	if os.Getenv("PI_LSP_REQUIRE_ORACLE") == "1" {
		t.Fatalf("%s needs real Pi, but %s (PI_LSP_REQUIRE_ORACLE=1)", what, why)
	}
	t.Skipf("%s needs real Pi, but %s", what, why)
}

// liveOracle returns the live oracle or skips/fails as needLive does.
func liveOracle(t testing.TB) *oracle.Oracle {
	t.Helper()
	needLive(t, "loading in real Pi")
	o := oracle.Start(t)
	if !o.Live() {
		if os.Getenv("PI_LSP_REQUIRE_ORACLE") == "1" {
			t.Fatal("the live Pi oracle is required (PI_LSP_REQUIRE_ORACLE=1)")
		}
		t.Skip("needs the live Pi oracle")
	}
	return o
}

// optionalOracle is the live oracle, or nil when real Pi is not available (a test then
// runs its own checks and leaves out the real-Pi ones); with PI_LSP_REQUIRE_ORACLE=1 a
// missing oracle fails the test.
func optionalOracle(t testing.TB) *oracle.Oracle {
	t.Helper()
	if os.Getenv("PI_LSP_ORACLE_OFFLINE") != "1" {
		if _, err := exec.LookPath("node"); err == nil {
			if _, err := os.Stat(filepath.Join(oracle.PiDir(), "dist", "index.js")); err == nil {
				if o := oracle.Start(t); o.Live() {
					return o
				}
			}
		}
	}
	if os.Getenv("PI_LSP_REQUIRE_ORACLE") == "1" {
		t.Fatal("the live Pi oracle is required (PI_LSP_REQUIRE_ORACLE=1)")
	}
	t.Log("real Pi is not available: the real-Pi load checks are left out")
	return nil
}

// piLoad is what real Pi's SessionManager made of a file.
type piLoad struct {
	LeafID     *string           `json:"leafId"`
	Messages   []json.RawMessage `json:"messages"`
	EntryCount int               `json:"entryCount"`
	NewSession bool              `json:"newSession"`
	Rewritten  bool              `json:"rewritten"`
	IDs        []string          `json:"ids"`
}

// checkPiLoads loads path in real Pi (a copy) and checks that Pi sees exactly the
// entries, leaf and number of context messages that pi-lsp sees. It reports whether the
// check ran (o nil: no real Pi).
func checkPiLoads(t testing.TB, o *oracle.Oracle, path string) bool {
	t.Helper()
	if o == nil {
		return false
	}
	f, err := session.Load(path)
	if err != nil {
		t.Fatalf("pi-lsp cannot load %s: %v", path, err)
	}
	ix := session.NewIndex(f)
	var got piLoad
	o.Query(t, map[string]any{"op": "piload", "file": path}, &got)
	if got.NewSession {
		t.Errorf("real Pi did not recognise the session header and started a new session")
	}
	if got.Rewritten {
		t.Errorf("real Pi rewrote the file on open")
	}
	mine := make([]string, len(f.Entries))
	for i, e := range f.Entries {
		mine[i] = e.ID
	}
	if !reflect.DeepEqual(got.IDs, mine) {
		t.Errorf("real Pi sees %d entries, pi-lsp %d (ids differ)", len(got.IDs), len(mine))
	}
	leaf := ""
	if got.LeafID != nil {
		leaf = *got.LeafID
	}
	if leaf != ix.LeafID() {
		t.Errorf("real Pi's leaf %q, pi-lsp's %q", leaf, ix.LeafID())
	}
	if n := len(ix.BuildContext("").Messages); n != len(got.Messages) {
		t.Errorf("real Pi's context has %d messages, pi-lsp's %d", len(got.Messages), n)
	}
	return true
}

// ---- processes ----

// groupCmd prepares a command in its own process group, killed with its group when ctx
// ends.
func groupCmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// selfCmd re-executes this test binary running only the named helper test.
func selfCmd(ctx context.Context, helper string, env ...string) *exec.Cmd {
	cmd := groupCmd(ctx, os.Args[0], "-test.run=^"+helper+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// ---- a minimal LSP client over net.Pipe (go.lsp.dev/jsonrpc2 framing) ----

type note struct {
	Method string
	Params json.RawMessage
}

// wireErr is a JSON-RPC error answer.
type wireErr struct {
	Code    int64
	Message string
	Kind    string
}

func (e *wireErr) Error() string { return fmt.Sprintf("%d %s (%s)", e.Code, e.Message, e.Kind) }

type client struct {
	t      testing.TB
	conn   io.Closer
	stream lsp.Stream
	wmu    sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	served chan int
	logs   *lsptest.SyncBuffer

	mu        sync.Mutex
	pending   map[string]chan *lsp.Response
	notes     []note
	keepNotes bool
	next      atomic.Int32
	readDone  chan struct{}
}

// serverConfig configures startServer.
type serverConfig struct {
	AgentDir    string
	Workspace   string
	InitOptions map[string]any
	KeepNotes   bool // record notifications
	Options     rpc.Options
}

// startServer runs rpc.Serve in process on one end of a net.Pipe, initializes it for
// the workspace and returns the client. The server is closed at cleanup.
func startServer(t testing.TB, cfg serverConfig) *client {
	t.Helper()
	clientEnd, serverEnd := net.Pipe()
	served := make(chan int, 1)
	c := newClient(t, clientEnd, served, cfg.KeepNotes)
	opt := cfg.Options
	opt.AgentDir = cfg.AgentDir
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(c.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opt.Debounce == 0 {
		opt.Debounce = 20 * time.Millisecond
	}
	if opt.WatchInterval == 0 {
		opt.WatchInterval = 200 * time.Millisecond
	}
	go func() { served <- rpc.Serve(c.ctx, serverEnd, serverEnd, serverEnd, opt) }()
	c.initialize(cfg.Workspace, cfg.InitOptions)
	return c
}

// newClient starts a client on rwc; served yields the server's exit (closed or sent
// once the server is gone).
func newClient(t testing.TB, rwc io.ReadWriteCloser, served chan int, keepNotes bool) *client {
	c := &client{t: t, conn: rwc, stream: lsp.NewStream(rwc), served: served,
		pending: map[string]chan *lsp.Response{}, keepNotes: keepNotes, logs: &lsptest.SyncBuffer{}, readDone: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.readLoop()
	t.Cleanup(c.close)
	return c
}

// initialize sends initialize and initialized for the workspace.
func (c *client) initialize(workspace string, initOptions map[string]any) {
	c.t.Helper()
	uri := "file://" + workspace
	params := map[string]any{
		"processId": os.Getpid(), "rootUri": uri,
		"workspaceFolders": []any{map[string]any{"uri": uri, "name": "project"}},
		"capabilities":     map[string]any{"window": map[string]any{"workDoneProgress": false}},
	}
	if initOptions != nil {
		params["initializationOptions"] = initOptions
	}
	if _, err := c.call(context.Background(), "initialize", params); err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	c.notify("initialized", map[string]any{})
}

func (c *client) readLoop() {
	defer close(c.readDone)
	for {
		m, _, err := c.stream.Read(c.ctx)
		if err != nil {
			if errors.Is(err, lsp.ErrInvalidRequest) || strings.HasPrefix(err.Error(), "unmarshaling") {
				continue // a whole frame this library cannot decode
			}
			return
		}
		switch m := m.(type) {
		case *lsp.Response:
			key := fmt.Sprintf("%q", m.ID())
			c.mu.Lock()
			ch := c.pending[key]
			delete(c.pending, key)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case *lsp.Call:
			var resp *lsp.Response
			if m.Method() == "window/workDoneProgress/create" {
				resp, _ = lsp.NewResponse(m.ID(), nil, nil)
			} else {
				resp, _ = lsp.NewResponse(m.ID(), nil, lsp.Errorf(lsp.MethodNotFound, "method not found: %s", m.Method()))
			}
			go c.write(resp)
		case *lsp.Notification:
			if c.keepNotes {
				c.mu.Lock()
				c.notes = append(c.notes, note{m.Method(), append(json.RawMessage(nil), m.Params()...)})
				c.mu.Unlock()
			}
		}
	}
}

func (c *client) write(m lsp.Message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.stream.Write(context.Background(), m)
	return err
}

func (c *client) notify(method string, params any) {
	n, err := lsp.NewNotification(method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.write(n); err != nil {
		c.t.Errorf("notify %s: %v", method, err)
	}
}

// answerTimeout bounds the wait for an answer, also after a cancellation (a cancelled
// compaction is answered only once the session's previous compaction let go of it).
const answerTimeout = 3 * time.Minute

// call sends a request and waits for its answer. When ctx ends first, it sends
// $/cancelRequest and still waits for the (cancelled) answer: every request must be
// answered. A JSON-RPC error answer is returned as *wireErr.
func (c *client) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	n := c.next.Add(1)
	id := lsp.NewNumberID(n)
	call, err := lsp.NewCall(id, method, params)
	if err != nil {
		return nil, err
	}
	ch := make(chan *lsp.Response, 1)
	key := fmt.Sprintf("%q", id)
	c.mu.Lock()
	c.pending[key] = ch
	c.mu.Unlock()
	if err := c.write(call); err != nil {
		return nil, fmt.Errorf("send %s: %w", method, err)
	}
	overall := time.NewTimer(answerTimeout)
	defer overall.Stop()
	var resp *lsp.Response
	select {
	case resp = <-ch:
	case <-ctx.Done():
		c.notify("$/cancelRequest", map[string]any{"id": n})
		select {
		case resp = <-ch:
		case <-overall.C:
			return nil, fmt.Errorf("%s (id %d) was never answered after its cancellation", method, n)
		}
	case <-overall.C:
		return nil, fmt.Errorf("%s (id %d) was not answered within %v", method, n, answerTimeout)
	}
	if resp.Err() != nil {
		var le *lsp.Error
		if errors.As(resp.Err(), &le) {
			we := &wireErr{Code: int64(le.Code), Message: le.Message}
			if le.Data != nil {
				var d struct {
					Kind string `json:"kind"`
				}
				_ = json.Unmarshal(*le.Data, &d)
				we.Kind = d.Kind
			}
			return nil, we
		}
		return nil, resp.Err()
	}
	return resp.Result(), nil
}

// mustCall fails the test on any error.
func (c *client) mustCall(method string, params any) json.RawMessage {
	c.t.Helper()
	res, err := c.call(context.Background(), method, params)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return res
}

// kindOf is the data.kind of an error answer ("" for other errors).
func kindOf(err error) string {
	var we *wireErr
	if errors.As(err, &we) {
		return we.Kind
	}
	return ""
}

func (c *client) notifications(method string) []note {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []note
	for _, n := range c.notes {
		if method == "" || n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

func (c *client) close() {
	_ = c.conn.Close()
	select {
	case <-c.served:
	case <-time.After(10 * time.Second):
		c.t.Errorf("rpc.Serve did not return within 10s after the client closed")
	}
	c.cancel()
	<-c.readDone
}

// ---- files ----

func readAll(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// drain discards a reader (for child stderr we do not look at).
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, r) }
