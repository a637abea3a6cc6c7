// Package lsptest is the LSP harness of pi-lsp's tests, in the style of gopls's
// integration tests: the server runs either in process on one end of a net.Pipe or as
// the built binary over its stdio, and an independent client (go.lsp.dev/jsonrpc2
// v0.10.0, whose framing and id code share nothing with the server's
// own connection) drives it from the other end. The client records every message
// the server sends, answers the server's requests through scriptable hooks, and tests
// wait with Await for composable expectations that are re-evaluated on every new
// message.
//
// Invariants: every Env gets its own temp agent dir, XDG dirs, $HOME and workspace, so
// nothing is written under the real $HOME; a second, strict frame parser fails the
// test on any malformed frame the server writes; a spawned server runs in its own
// process group under a deadline and the group is killed when the test ends.
//
// Import it only from _test.go files.
package lsptest

import (
	"bytes"
	"cmp"
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
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	lsp "go.lsp.dev/jsonrpc2"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/rpc/frame"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

// MsgKind says what a recorded server→client message is.
type MsgKind int

const (
	KindNotification MsgKind = iota
	KindCall                 // a server→client request
	KindResponse             // the answer to one of our requests
	KindUndecodable          // a well-framed body the client library could not decode
)

// Msg is one recorded server→client message.
type Msg struct {
	Seq    int
	Kind   MsgKind
	Method string
	Params json.RawMessage
	ID     string // "#12" or "\"abc\"" (fmt %q of the id), calls and responses
	Result json.RawMessage
	Err    *lsp.Error
	Bad    error // KindUndecodable
	At     time.Time
}

func (m Msg) String() string {
	switch m.Kind {
	case KindNotification:
		return fmt.Sprintf("%d notify %s %s", m.Seq, m.Method, Trunc(m.Params))
	case KindCall:
		return fmt.Sprintf("%d call %s %s %s", m.Seq, m.ID, m.Method, Trunc(m.Params))
	case KindResponse:
		if m.Err != nil {
			return fmt.Sprintf("%d response %s error %d %q", m.Seq, m.ID, m.Err.Code, m.Err.Message)
		}
		return fmt.Sprintf("%d response %s %s", m.Seq, m.ID, Trunc(m.Result))
	}
	return fmt.Sprintf("%d undecodable: %v", m.Seq, m.Bad)
}

// Trunc shortens a message for a log line.
func Trunc(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// recStream wraps the client library's stream: it records what it reads (in wire
// order, before the library dispatches it) and serializes writes, so a test can also
// write raw bytes between framed messages.
type recStream struct {
	inner lsp.Stream
	raw   io.Writer
	wmu   sync.Mutex
	env   *Env
}

func (s *recStream) Read(ctx context.Context) (lsp.Message, int64, error) {
	for {
		m, n, err := s.inner.Read(ctx)
		if err != nil {
			if errors.Is(err, lsp.ErrInvalidRequest) || strings.HasPrefix(err.Error(), "unmarshaling") {
				// A complete frame whose body this library cannot decode: keep reading.
				s.env.record(Msg{Kind: KindUndecodable, Bad: err})
				continue
			}
			return m, n, err
		}
		switch m := m.(type) {
		case *lsp.Call:
			s.env.record(Msg{Kind: KindCall, Method: m.Method(), Params: clone(m.Params()), ID: fmt.Sprintf("%q", m.ID())})
		case *lsp.Notification:
			s.env.record(Msg{Kind: KindNotification, Method: m.Method(), Params: clone(m.Params())})
		case *lsp.Response:
			rec := Msg{Kind: KindResponse, ID: fmt.Sprintf("%q", m.ID()), Result: clone(m.Result())}
			if m.Err() != nil {
				var le *lsp.Error
				if errors.As(m.Err(), &le) {
					rec.Err = le
				} else {
					rec.Err = &lsp.Error{Message: m.Err().Error()}
				}
			}
			s.env.record(rec)
		}
		return m, n, nil
	}
}

func clone(b []byte) json.RawMessage { return append(json.RawMessage(nil), b...) }

func (s *recStream) Write(ctx context.Context, m lsp.Message) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.inner.Write(ctx, m)
}

func (s *recStream) Close() error { return s.inner.Close() }

func (s *recStream) writeRaw(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.raw.Write(b)
	return err
}

// Hooks script the client's answers to server→client requests. Each runs in its own
// goroutine; ctx is cancelled when the harness closes (so a hook that "never answers"
// blocks on it). A nil hook answers null.
type Hooks struct {
	CreateProgress func(ctx context.Context, params json.RawMessage) (any, error)
	BeforeCompact  func(ctx context.Context, params json.RawMessage) (any, error)
	BeforeTree     func(ctx context.Context, params json.RawMessage) (any, error)
}

// Env is one test's server, client and files.
type Env struct {
	T          testing.TB
	AgentDir   string
	Workspace  string
	SessionDir string
	// Sessions are the copied genuine sessions, by corpus name; Paths all copies in
	// order.
	Sessions map[string]string
	Paths    []string
	Init     json.RawMessage // initialize result
	Conn     lsp.Conn

	ctx      context.Context
	cancel   context.CancelFunc
	stream   *recStream
	proc     *exec.Cmd // the spawned server, or nil in process
	exitCode chan int
	code     *int
	logs     *SyncBuffer

	mu      sync.Mutex
	msgs    []Msg
	raw     []json.RawMessage // every frame body, from the independent raw parser
	changed chan struct{}
	hooks   Hooks
	nextID  atomic.Int32
	// framingErr is set when the server wrote a malformed frame.
	framingErr error
	// waiters are CallContext's requests awaiting their answers, by recorded id.
	waiters      map[string]chan Msg
	quiet        bool
	closeTimeout time.Duration
}

// Config configures NewEnv.
type Config struct {
	// Corpus names genuine sessions (without .jsonl) to copy into the workspace's
	// session folder; the last one is the newest.
	Corpus []string
	// InitOptions is initializationOptions.
	InitOptions map[string]any
	// ClientHooks declares capabilities.experimental.pi.hooks.
	ClientHooks bool
	// NoProgress leaves out capabilities.window.workDoneProgress.
	NoProgress bool
	// SkipInitialize leaves the server uninitialized.
	SkipInitialize bool
	Hooks          Hooks
	// Options configure the in-process server (AgentDir is the Env's).
	Options rpc.Options
	// Binary, when set, is a built pi-lsp that is spawned as "Binary serve --stdio"
	// instead of the in-process server; Options then do not apply, and the process
	// gets the test's (isolated) environment plus ExtraEnv.
	Binary   string
	ExtraEnv []string
	// Timeout bounds the spawned process (default 2 minutes).
	Timeout time.Duration
	// AgentDir and Workspace, when set, are the server's dirs instead of fresh ones
	// below the Env's temp root; the caller has then isolated the test itself (see
	// package isolate) and the Env does not touch the environment.
	AgentDir, Workspace string
	// Quiet records no messages (Await and Messages see nothing; CallContext still
	// works): for load tests whose answers would pile up.
	Quiet bool
	// Args are more arguments for the spawned binary, after "serve --stdio".
	Args []string
	// Wire, when set, receives every byte the server writes (frames as sent).
	Wire io.Writer
	// CloseTimeout bounds the wait for the server to return after the client closed
	// (default 5 s).
	CloseTimeout time.Duration
	// AgentFiles are written into the agent dir (by slash-separated relative path)
	// before the server starts, e.g. Pi's settings.json.
	AgentFiles map[string]string
}

// NewEnv starts a server (in process, or cfg.Binary) and, unless told otherwise,
// initializes it.
func NewEnv(t testing.TB, cfg Config) *Env {
	t.Helper()
	root := t.TempDir()
	e := &Env{
		T:         t,
		AgentDir:  filepath.Join(root, "agent"),
		Workspace: filepath.Join(root, "work", "project"),
		Sessions:  map[string]string{},
		changed:   make(chan struct{}),
		hooks:     cfg.Hooks,
		exitCode:  make(chan int, 1),
		logs:      &SyncBuffer{},
	}
	if cfg.AgentDir != "" {
		e.AgentDir = cfg.AgentDir
	} else {
		isolate.Under(t, root, e.AgentDir)
	}
	if cfg.Workspace != "" {
		e.Workspace = cfg.Workspace
	}
	e.quiet, e.closeTimeout = cfg.Quiet, cfg.CloseTimeout
	if e.closeTimeout == 0 {
		e.closeTimeout = 5 * time.Second
	}
	for _, d := range []string{e.AgentDir, e.Workspace} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for rel, text := range cfg.AgentFiles {
		path := filepath.Join(e.AgentDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.SessionDir = session.SessionDir(e.AgentDir, e.Workspace)
	for i, name := range cfg.Corpus {
		e.Sessions[name] = e.copySession(name, time.Now().Add(time.Duration(i-len(cfg.Corpus))*time.Minute))
	}

	e.ctx, e.cancel = context.WithCancel(context.Background())
	var clientEnd io.ReadWriteCloser
	if cfg.Binary != "" {
		clientEnd = e.spawn(cfg)
	} else {
		clientEnd = e.inProcess(cfg.Options)
	}
	// The library reads through a tee: a second, strict frame parser records every body
	// as sent (the library cannot decode an error answer whose id is null) and fails
	// the test on any framing error of the server.
	pr, pw := io.Pipe()
	go e.parseRaw(pr)
	if cfg.Wire != nil {
		clientEnd = wireTee{clientEnd, cfg.Wire}
	}
	e.stream = &recStream{inner: lsp.NewStream(teeConn{clientEnd, pw}), raw: clientEnd, env: e}
	e.Conn = lsp.NewConn(e.stream)
	e.Conn.Go(e.ctx, e.handle)
	t.Cleanup(func() {
		e.Close()
		e.mu.Lock()
		ferr := e.framingErr
		e.mu.Unlock()
		if ferr != nil {
			t.Errorf("server framing error: %v", ferr)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", e.logs.String())
			e.mu.Lock()
			for _, m := range e.msgs {
				t.Logf("%s", m)
			}
			e.mu.Unlock()
		}
	})
	if !cfg.SkipInitialize {
		e.Initialize(cfg)
	}
	return e
}

// inProcess runs rpc.Serve on one end of a pipe and returns the other.
func (e *Env) inProcess(opt rpc.Options) io.ReadWriteCloser {
	opt.AgentDir = e.AgentDir
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// Shorter than the server's own defaults: a test waits less for each.
	opt.HookTimeout = cmp.Or(opt.HookTimeout, 5*time.Second)
	opt.Debounce = cmp.Or(opt.Debounce, 20*time.Millisecond)
	opt.WatchInterval = cmp.Or(opt.WatchInterval, 200*time.Millisecond)
	clientEnd, serverEnd := net.Pipe()
	go func() {
		e.exitCode <- rpc.Serve(e.ctx, serverEnd, serverEnd, serverEnd, opt)
	}()
	return clientEnd
}

// spawn starts cfg.Binary in its own process group under a deadline (the group is
// killed when it passes and when the test ends) and returns its stdio; its stderr is
// the server log.
func (e *Env) spawn(cfg Config) io.ReadWriteCloser {
	t := e.T
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := isolate.GroupCmd(ctx, cfg.Binary, append([]string{"serve", "--stdio"}, cfg.Args...)...)
	cmd.Env = append(os.Environ(), cfg.ExtraEnv...)
	cmd.Dir = e.Workspace
	cmd.Stderr = e.logs
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	e.proc = cmd
	go func() { e.exitCode <- isolate.ExitCode(cmd.Wait()) }()
	// Registered before NewEnv's own cleanup, so it runs after it: Close first lets
	// the server exit on its own, then whatever is left of the group is killed.
	t.Cleanup(func() {
		_ = isolate.KillGroup(cmd)
		cancel()
	})
	return stdio{stdout, stdin}
}

// stdio joins a child's stdout and stdin into one connection.
type stdio struct {
	io.ReadCloser
	io.WriteCloser
}

func (s stdio) Close() error {
	err := s.WriteCloser.Close()
	_ = s.ReadCloser.Close()
	return err
}

// Pid is the spawned server's process id (0 in process).
func (e *Env) Pid() int {
	if e.proc == nil {
		return 0
	}
	return e.proc.Process.Pid
}

// copySession copies a genuine session into the workspace's session folder under Pi's
// file name, with the given modification time.
func (e *Env) copySession(name string, mtime time.Time) string {
	e.T.Helper()
	path := corpus.Install(e.T, corpus.Genuine(name), e.SessionDir, mtime)
	e.Paths = append(e.Paths, path)
	return path
}

// Initialize sends initialize and initialized.
func (e *Env) Initialize(cfg Config) {
	e.T.Helper()
	caps := map[string]any{
		"window":       map[string]any{"workDoneProgress": !cfg.NoProgress},
		"experimental": map[string]any{"pi": map[string]any{"hooks": cfg.ClientHooks}},
	}
	uri := "file://" + e.Workspace
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]any{"name": "pi-lsp-harness", "version": "1"},
		"rootUri":          uri,
		"workspaceFolders": []any{map[string]any{"uri": uri, "name": "project"}},
		"capabilities":     caps,
	}
	if cfg.InitOptions != nil {
		params["initializationOptions"] = cfg.InitOptions
	}
	res, err := e.Call("initialize", params)
	if err != nil {
		e.T.Fatalf("initialize: %v", err)
	}
	e.Init = res
	if err := e.Conn.Notify(e.ctx, "initialized", map[string]any{}); err != nil {
		e.T.Fatalf("initialized: %v", err)
	}
}

// handle answers server→client requests; it never blocks the read loop.
func (e *Env) handle(ctx context.Context, reply lsp.Replier, req lsp.Request) error {
	call, ok := req.(*lsp.Call)
	if !ok {
		return nil
	}
	var hook func(context.Context, json.RawMessage) (any, error)
	switch call.Method() {
	case "window/workDoneProgress/create":
		hook = e.hooks.CreateProgress
	case "pi/beforeCompact":
		hook = e.hooks.BeforeCompact
	case "pi/beforeTree":
		hook = e.hooks.BeforeTree
	default:
		return reply(ctx, nil, lsp.Errorf(lsp.MethodNotFound, "method not found: %s", call.Method()))
	}
	params := clone(call.Params())
	go func() {
		var res any
		var err error
		if hook != nil {
			res, err = hook(e.ctx, params)
		}
		if e.ctx.Err() != nil {
			return
		}
		var le *lsp.Error
		if err != nil && !errors.As(err, &le) {
			err = lsp.NewError(lsp.InternalError, err.Error()) // the library would send code 0
		}
		_ = reply(context.Background(), res, err)
	}()
	return nil
}

// teeConn copies what the client reads to w.
type teeConn struct {
	io.ReadWriteCloser
	w *io.PipeWriter
}

func (c teeConn) Read(p []byte) (int, error) {
	n, err := c.ReadWriteCloser.Read(p)
	if n > 0 {
		_, _ = c.w.Write(p[:n])
	}
	if err != nil {
		_ = c.w.CloseWithError(err)
	}
	return n, err
}

// parseRaw parses the server's output strictly (the server's own framer in its strict
// mode): exactly one Content-Length header in the canonical form, a blank line, and a
// body of that many bytes that is valid JSON.
func (e *Env) parseRaw(r io.Reader) {
	fr := frame.NewStrictReader(r)
	for {
		body, err := fr.Next()
		if err != nil {
			var fe *frame.Error
			if errors.As(err, &fe) {
				e.framingError(err)
			}
			return
		}
		e.mu.Lock()
		if !e.quiet {
			e.raw = append(e.raw, body)
		}
		close(e.changed)
		e.changed = make(chan struct{})
		e.mu.Unlock()
	}
}

func (e *Env) framingError(err error) {
	e.mu.Lock()
	e.framingErr = err
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// RawMark is the number of raw frames recorded so far.
func (e *Env) RawMark() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.raw)
}

// AwaitRaw waits until pred holds for the raw frame bodies recorded from mark on.
func (e *Env) AwaitRaw(timeout time.Duration, mark int, desc string, pred func(frames []json.RawMessage) bool) []json.RawMessage {
	e.T.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		frames := append([]json.RawMessage(nil), e.raw[min(mark, len(e.raw)):]...)
		changed, ferr := e.changed, e.framingErr
		e.mu.Unlock()
		if ferr != nil {
			e.T.Fatalf("server framing error: %v", ferr)
		}
		if pred(frames) {
			return frames
		}
		select {
		case <-changed:
		case <-deadline.C:
			e.T.Fatalf("timed out after %v waiting for raw frames: %s", timeout, desc)
		}
	}
}

func (e *Env) record(m Msg) {
	e.mu.Lock()
	if m.Kind == KindResponse {
		if ch := e.waiters[m.ID]; ch != nil {
			delete(e.waiters, m.ID)
			ch <- m
		}
	}
	if e.quiet {
		e.mu.Unlock()
		return
	}
	m.Seq = len(e.msgs)
	m.At = time.Now()
	e.msgs = append(e.msgs, m)
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// Messages returns a snapshot of every recorded message.
func (e *Env) Messages() []Msg {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Msg(nil), e.msgs...)
}

// Mark is the number of messages recorded so far; Since(mark) restricts expectations to
// what came after it.
func (e *Env) Mark() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.msgs)
}

// CallError is a JSON-RPC error answer.
type CallError struct {
	Code    int64
	Message string
	Data    json.RawMessage
}

func (c *CallError) Error() string { return fmt.Sprintf("%d %s", c.Code, c.Message) }

// Kind is data.kind of the error.
func (c *CallError) Kind() string {
	var d struct {
		Kind string `json:"kind"`
	}
	_ = json.Unmarshal(c.Data, &d)
	return d.Kind
}

func toCallError(le *lsp.Error) *CallError {
	if le == nil {
		return nil
	}
	ce := &CallError{Code: int64(le.Code), Message: le.Message}
	if le.Data != nil {
		ce.Data = clone(*le.Data)
	}
	return ce
}

// Shutdown sends shutdown and fails the test unless the server acknowledges it, and
// within the given time (a server still running a job must answer at once).
func (e *Env) Shutdown(within time.Duration) {
	e.T.Helper()
	t0 := time.Now()
	if _, err := e.Call("shutdown", nil); err != nil {
		e.T.Fatalf("shutdown: %v", err)
	}
	if d := time.Since(t0); d > within {
		e.T.Errorf("shutdown took %v", d)
	}
}

// Call sends a request with a library-assigned numeric id and waits for its answer
// (bounded by 20 s). A JSON-RPC error comes back as *CallError.
func (e *Env) Call(method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	var res json.RawMessage
	_, err := e.Conn.Call(ctx, method, params, &res)
	if err != nil {
		var le *lsp.Error
		if errors.As(err, &le) {
			return nil, toCallError(le)
		}
		return nil, err
	}
	return res, nil
}

// Pending is a request sent with an id of the test's choosing.
type Pending struct {
	e      *Env
	ID     string // as recorded: "#n" or "\"s\""
	rawID  any    // as sent
	Method string
}

// Start sends a request with an explicit id without waiting: a number (ids from 1<<30
// up never collide with the library's) or, with stringID, a string.
func (e *Env) Start(method string, params any, stringID bool) *Pending {
	e.T.Helper()
	n := e.nextID.Add(1)
	var id lsp.ID
	var raw any
	if stringID {
		s := fmt.Sprintf("req-%d", n)
		id, raw = lsp.NewStringID(s), s
	} else {
		v := int32(1<<30) + n
		id, raw = lsp.NewNumberID(v), v
	}
	call, err := lsp.NewCall(id, method, params)
	if err != nil {
		e.T.Fatal(err)
	}
	if _, err := e.stream.Write(e.ctx, call); err != nil {
		e.T.Fatalf("send %s: %v", method, err)
	}
	return &Pending{e: e, ID: fmt.Sprintf("%q", id), rawID: raw, Method: method}
}

// Cancel sends $/cancelRequest for the request, with its id in its own JSON type.
func (p *Pending) Cancel() {
	if err := p.e.Conn.Notify(p.e.ctx, "$/cancelRequest", map[string]any{"id": p.rawID}); err != nil {
		p.e.T.Fatalf("cancel: %v", err)
	}
}

// Wait waits for the answer.
func (p *Pending) Wait(timeout time.Duration) (json.RawMessage, *CallError) {
	p.e.T.Helper()
	msgs := p.e.Await(timeout, ResponseTo(p.ID))
	for _, m := range msgs {
		if m.Kind == KindResponse && m.ID == p.ID {
			return m.Result, toCallError(m.Err)
		}
	}
	panic("unreachable")
}

// CallContext sends a request with an id of its own and waits for the answer. When ctx
// ends first it sends $/cancelRequest and still waits (up to answerTimeout) for the
// cancelled answer: every request must be answered. A JSON-RPC error comes back as
// *CallError.
func (e *Env) CallContext(ctx context.Context, method string, params any, answerTimeout time.Duration) (json.RawMessage, error) {
	n := e.nextID.Add(1)
	v := int32(1<<30) + n
	id := lsp.NewNumberID(v)
	call, err := lsp.NewCall(id, method, params)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%q", id)
	ch := make(chan Msg, 1)
	e.mu.Lock()
	if e.waiters == nil {
		e.waiters = map[string]chan Msg{}
	}
	e.waiters[key] = ch
	e.mu.Unlock()
	if _, err := e.stream.Write(e.ctx, call); err != nil {
		return nil, fmt.Errorf("send %s: %w", method, err)
	}
	overall := time.NewTimer(answerTimeout)
	defer overall.Stop()
	var m Msg
	select {
	case m = <-ch:
	case <-ctx.Done():
		if err := e.Conn.Notify(e.ctx, "$/cancelRequest", map[string]any{"id": v}); err != nil {
			return nil, fmt.Errorf("cancel %s: %w", method, err)
		}
		select {
		case m = <-ch:
		case <-overall.C:
			return nil, fmt.Errorf("%s (id %d) was never answered after its cancellation", method, v)
		}
	case <-overall.C:
		return nil, fmt.Errorf("%s (id %d) was not answered within %v", method, v, answerTimeout)
	}
	if m.Err != nil {
		return nil, toCallError(m.Err)
	}
	return m.Result, nil
}

// Notifications are the recorded notifications of method ("" for all).
func (e *Env) Notifications(method string) []Msg {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Msg
	for _, m := range e.msgs {
		if m.Kind == KindNotification && (method == "" || m.Method == method) {
			out = append(out, m)
		}
	}
	return out
}

// Logs is the server's log so far (the spawned server's stderr).
func (e *Env) Logs() string { return e.logs.String() }

// wireTee copies what is read from the server to w.
type wireTee struct {
	io.ReadWriteCloser
	w io.Writer
}

func (c wireTee) Read(p []byte) (int, error) {
	n, err := c.ReadWriteCloser.Read(p)
	if n > 0 {
		_, _ = c.w.Write(p[:n])
	}
	return n, err
}

// Notify sends a notification.
func (e *Env) Notify(method string, params any) {
	e.T.Helper()
	if err := e.Conn.Notify(e.ctx, method, params); err != nil {
		e.T.Fatalf("notify %s: %v", method, err)
	}
}

// WriteRaw writes bytes to the server as they are, between framed messages.
func (e *Env) WriteRaw(b []byte) {
	e.T.Helper()
	if err := e.stream.writeRaw(b); err != nil {
		e.T.Fatalf("raw write: %v", err)
	}
}

// ExitCode returns Serve's return value (the spawned server's exit status).
func (e *Env) ExitCode(timeout time.Duration) int {
	e.T.Helper()
	if e.code != nil {
		return *e.code
	}
	select {
	case c := <-e.exitCode:
		e.code = &c
		return c
	case <-time.After(timeout):
		e.T.Fatalf("the server did not return within %v", timeout)
		return -1
	}
}

// Close closes the client end of the connection and waits (up to 5 s) for the server
// to return.
func (e *Env) Close() {
	_ = e.Conn.Close()
	if e.code == nil {
		select {
		case c := <-e.exitCode:
			e.code = &c
		case <-time.After(e.closeTimeout):
			e.T.Errorf("the server did not return within %v after the client closed", e.closeTimeout)
		}
	}
	e.cancel()
	<-e.Conn.Done()
}

// ---- expectations ----

// Verdict is the state of an expectation on the messages so far.
type Verdict int

const (
	Unmet Verdict = iota
	Met
	Unmeetable
)

// Expectation is a predicate over the recorded messages.
type Expectation struct {
	Desc  string
	Check func(msgs []Msg) Verdict
}

// Await waits until every expectation is met, re-evaluating on each new message. It
// fails the test when one becomes unmeetable or the timeout passes, and returns the
// messages it last evaluated.
func (e *Env) Await(timeout time.Duration, exps ...Expectation) []Msg {
	e.T.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		msgs := append([]Msg(nil), e.msgs...)
		changed, ferr := e.changed, e.framingErr
		e.mu.Unlock()
		if ferr != nil {
			e.T.Fatalf("server framing error: %v", ferr)
		}
		var unmet []string
		for _, x := range exps {
			switch x.Check(msgs) {
			case Unmeetable:
				e.T.Fatalf("expectation can no longer be met: %s", x.Desc)
			case Unmet:
				unmet = append(unmet, x.Desc)
			}
		}
		if len(unmet) == 0 {
			return msgs
		}
		select {
		case <-changed:
		case <-deadline.C:
			e.T.Fatalf("timed out after %v waiting for: %s", timeout, strings.Join(unmet, "; "))
		}
	}
}

// Since restricts an expectation to the messages recorded from mark on.
func Since(mark int, x Expectation) Expectation {
	return Expectation{Desc: x.Desc + fmt.Sprintf(" (since #%d)", mark), Check: func(msgs []Msg) Verdict {
		if mark > len(msgs) {
			return Unmet
		}
		return x.Check(msgs[mark:])
	}}
}

// OnceMet: once pre is met, every post must already be met on the same messages (else
// the combination is unmeetable), as gopls's OnceMet.
func OnceMet(pre Expectation, post ...Expectation) Expectation {
	descs := []string{}
	for _, p := range post {
		descs = append(descs, p.Desc)
	}
	return Expectation{Desc: fmt.Sprintf("once %s: %s", pre.Desc, strings.Join(descs, ", ")), Check: func(msgs []Msg) Verdict {
		switch pre.Check(msgs) {
		case Unmeetable:
			return Unmeetable
		case Unmet:
			return Unmet
		}
		for _, p := range post {
			if p.Check(msgs) != Met {
				return Unmeetable
			}
		}
		return Met
	}}
}

// AnyOf is met when one of its expectations is.
func AnyOf(xs ...Expectation) Expectation {
	descs := []string{}
	for _, x := range xs {
		descs = append(descs, x.Desc)
	}
	return Expectation{Desc: "any of (" + strings.Join(descs, " | ") + ")", Check: func(msgs []Msg) Verdict {
		all := Unmeetable
		for _, x := range xs {
			switch x.Check(msgs) {
			case Met:
				return Met
			case Unmet:
				all = Unmet
			}
		}
		return all
	}}
}

// NotificationMatching is met by a notification of method whose params satisfy pred
// (nil: any).
func NotificationMatching(method string, desc string, pred func(params json.RawMessage) bool) Expectation {
	return messageSeen(method+" "+desc, func(m Msg) bool { return isNotification(m, method, pred) })
}

// NoNotification is met as long as no matching notification was seen.
func NoNotification(method string, pred func(params json.RawMessage) bool) Expectation {
	return Expectation{Desc: "no " + method, Check: func(msgs []Msg) Verdict {
		for _, m := range msgs {
			if isNotification(m, method, pred) {
				return Unmeetable
			}
		}
		return Met
	}}
}

// isNotification reports whether m is a notification of method whose params satisfy
// pred (nil: any).
func isNotification(m Msg, method string, pred func(params json.RawMessage) bool) bool {
	return m.Kind == KindNotification && m.Method == method && (pred == nil || pred(m.Params))
}

// messageSeen is met once a recorded message matches.
func messageSeen(desc string, match func(Msg) bool) Expectation {
	return Expectation{Desc: desc, Check: func(msgs []Msg) Verdict {
		for _, m := range msgs {
			if match(m) {
				return Met
			}
		}
		return Unmet
	}}
}

// ServerCall is met by a server→client request of method.
func ServerCall(method string) Expectation {
	return messageSeen("server request "+method, func(m Msg) bool { return m.Kind == KindCall && m.Method == method })
}

// ResponseTo is met by the answer to the request with that id.
func ResponseTo(id string) Expectation {
	return messageSeen("response to "+id, func(m Msg) bool { return m.Kind == KindResponse && m.ID == id })
}

// Progress is one $/progress notification, decoded.
type Progress struct {
	Seq   int
	Token string // raw JSON of the token
	Kind  string
	Title string
	Msg   string
	Pct   *float64
	Canc  bool
}

// Progresses decodes every $/progress notification.
func Progresses(msgs []Msg) []Progress {
	var out []Progress
	for _, m := range msgs {
		if m.Kind != KindNotification || m.Method != "$/progress" {
			continue
		}
		var p struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind        string   `json:"kind"`
				Title       string   `json:"title"`
				Message     string   `json:"message"`
				Percentage  *float64 `json:"percentage"`
				Cancellable bool     `json:"cancellable"`
			} `json:"value"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			continue
		}
		out = append(out, Progress{Seq: m.Seq, Token: string(p.Token), Kind: p.Value.Kind, Title: p.Value.Title,
			Msg: p.Value.Message, Pct: p.Value.Percentage, Canc: p.Value.Cancellable})
	}
	return out
}

// ProgressOf returns the progress messages of the first job titled title: begin,
// reports, and end (if sent).
func ProgressOf(msgs []Msg, title string) []Progress {
	ps := Progresses(msgs)
	token := ""
	var out []Progress
	for _, p := range ps {
		if token == "" && p.Kind == "begin" && p.Title == title {
			token = p.Token
		}
		if token != "" && p.Token == token {
			out = append(out, p)
		}
	}
	return out
}

// CompletedProgress is met when a job titled title has begun and ended.
func CompletedProgress(title string) Expectation {
	return Expectation{Desc: "completed progress " + title, Check: func(msgs []Msg) Verdict {
		ps := ProgressOf(msgs, title)
		if len(ps) > 0 && ps[len(ps)-1].Kind == "end" {
			return Met
		}
		return Unmet
	}}
}

// ProgressBeginAtZero is met when the begin of title carries percentage 0 (not
// omitted, or VS Code shows an infinite bar).
func ProgressBeginAtZero(title string) Expectation {
	return Expectation{Desc: "progress " + title + " begins at 0%", Check: func(msgs []Msg) Verdict {
		ps := ProgressOf(msgs, title)
		if len(ps) == 0 {
			return Unmet
		}
		if ps[0].Pct == nil || *ps[0].Pct != 0 {
			return Unmeetable
		}
		return Met
	}}
}

// ProgressReportMatching is met by a report of title whose message contains substr.
func ProgressReportMatching(title, substr string) Expectation {
	return Expectation{Desc: fmt.Sprintf("progress %s report containing %q", title, substr), Check: func(msgs []Msg) Verdict {
		for _, p := range ProgressOf(msgs, title) {
			if p.Kind == "report" && strings.Contains(p.Msg, substr) {
				return Met
			}
		}
		return Unmet
	}}
}

// ---- JSON helpers ----

// Decode decodes raw into a T or fails the test.
func Decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", Trunc(raw), err)
	}
	return v
}

// Fields decodes a JSON object into a map (nil when it is not one).
func Fields[B ~[]byte](raw B) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(raw), &m) != nil {
		return nil
	}
	return m
}

// Has returns a params predicate matching the given top-level fields.
func Has(want map[string]any) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		m := Fields(raw)
		if m == nil {
			return false
		}
		for k, v := range want {
			got, ok := m[k]
			if !ok {
				if v == nil {
					continue // absent counts as null/undefined
				}
				return false
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(v)
			if !bytes.Equal(gb, wb) {
				return false
			}
		}
		return true
	}
}

// ---- misc ----

// Session is the corpus name's copy (see Config.Corpus); it fails the test when the
// Env holds no such copy.
func (e *Env) Session(name string) string {
	e.T.Helper()
	p, ok := e.Sessions[name]
	if !ok {
		e.T.Fatalf("no corpus session %q in this Env", name)
	}
	return p
}

// SyncBuffer is a bytes.Buffer that a server's log writer and the test may use at once.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Merge returns a new map with the entries of all maps.
func Merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
