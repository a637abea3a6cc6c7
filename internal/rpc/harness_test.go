package rpc_test

// The in-process LSP harness, in the style of gopls's integration tests: the server runs
// on one end of a net.Pipe, an independent client (go.lsp.dev/jsonrpc2 v0.10.0, whose
// framing and id code share nothing with the server's sourcegraph/jsonrpc2) on the
// other. The client records every message the server sends, answers the server's
// requests through scriptable hooks, and tests wait with Await for composable
// expectations that are re-evaluated on every new message.
//
// Every test gets its own temp agent dir, XDG dirs, $HOME and workspace; nothing is
// written under the real $HOME.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	lsp "go.lsp.dev/jsonrpc2"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// corpusDir holds genuine sessions written by real Pi 0.73.1.
const corpusDir = "../../testdata/corpus/genuine"

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
		return fmt.Sprintf("%d notify %s %s", m.Seq, m.Method, trunc(m.Params))
	case KindCall:
		return fmt.Sprintf("%d call %s %s %s", m.Seq, m.ID, m.Method, trunc(m.Params))
	case KindResponse:
		if m.Err != nil {
			return fmt.Sprintf("%d response %s error %d %q", m.Seq, m.ID, m.Err.Code, m.Err.Message)
		}
		return fmt.Sprintf("%d response %s %s", m.Seq, m.ID, trunc(m.Result))
	}
	return fmt.Sprintf("%d undecodable: %v", m.Seq, m.Bad)
}

func trunc(b []byte) string {
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
	client   net.Conn
	exitCode chan int
	code     *int
	logs     *syncBuffer

	mu      sync.Mutex
	msgs    []Msg
	raw     []json.RawMessage // every frame body, from the independent raw parser
	changed chan struct{}
	hooks   Hooks
	nextID  atomic.Int32
	// framingErr is set when the server wrote a malformed frame.
	framingErr error
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
	Options        rpc.Options
}

// NewEnv starts a server in process and, unless told otherwise, initializes it.
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
		logs:      &syncBuffer{},
	}
	isolateEnv(t, root, e.AgentDir)
	for _, d := range []string{e.AgentDir, e.Workspace} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.SessionDir = session.SessionDir(e.AgentDir, e.Workspace)
	for i, name := range cfg.Corpus {
		e.Sessions[name] = e.copySession(name, time.Now().Add(time.Duration(i-len(cfg.Corpus))*time.Minute))
	}

	opt := cfg.Options
	opt.AgentDir = e.AgentDir
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opt.HookTimeout == 0 {
		opt.HookTimeout = 5 * time.Second
	}
	if opt.Debounce == 0 {
		opt.Debounce = 20 * time.Millisecond
	}
	if opt.WatchInterval == 0 {
		opt.WatchInterval = 200 * time.Millisecond
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	clientEnd, serverEnd := net.Pipe()
	e.client = clientEnd
	go func() {
		e.exitCode <- rpc.Serve(e.ctx, serverEnd, serverEnd, serverEnd, opt)
	}()
	// The library reads through a tee: a second, strict frame parser records every body
	// as sent (the library cannot decode an error answer whose id is null) and fails
	// the test on any framing error of the server.
	pr, pw := io.Pipe()
	go e.parseRaw(pr)
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

// isolateEnv points every directory Pi or pi-lsp might touch at temp dirs.
func isolateEnv(t testing.TB, root, agentDir string) {
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("PI_CODING_AGENT_DIR", agentDir)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"} {
		t.Setenv(v, filepath.Join(root, "xdg", strings.ToLower(strings.TrimPrefix(v, "XDG_"))))
	}
	for _, v := range []string{"PI_LSP_SUMMARIZER", "PI_LSP_BASE_URL", "PI_LSP_MODEL", "PI_LSP_API_KEY_ENV", "OPENAI_API_KEY"} {
		t.Setenv(v, "")
	}
}

// copySession copies a genuine session into the workspace's session folder under Pi's
// file name, with the given modification time.
func (e *Env) copySession(name string, mtime time.Time) string {
	e.T.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, name+".jsonl"))
	if err != nil {
		e.T.Fatal(err)
	}
	f, err := session.Parse(data)
	if err != nil {
		e.T.Fatal(err)
	}
	if err := os.MkdirAll(e.SessionDir, 0o755); err != nil {
		e.T.Fatal(err)
	}
	base := filepath.Join(e.SessionDir, session.FileName(f.Header.Timestamp, f.Header.ID))
	path := base
	for i := 2; ; i++ {
		if _, err := os.Stat(path); err != nil {
			break
		}
		path = strings.TrimSuffix(base, ".jsonl") + fmt.Sprintf("-%d.jsonl", i)
	}
	e.Paths = append(e.Paths, path)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		e.T.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		e.T.Fatal(err)
	}
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
	net.Conn
	w *io.PipeWriter
}

func (c teeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		_, _ = c.w.Write(p[:n])
	}
	if err != nil {
		_ = c.w.CloseWithError(err)
	}
	return n, err
}

// parseRaw parses the server's output strictly: exactly one Content-Length header in
// the canonical form, a blank line, and a body of that many bytes that is valid JSON.
func (e *Env) parseRaw(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		var n int
		if _, err := fmt.Sscanf(line, "Content-Length: %d\r\n", &n); err != nil || !strings.HasSuffix(line, "\r\n") {
			e.framingError(fmt.Errorf("bad header line %q", line))
			return
		}
		blank, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if blank != "\r\n" {
			e.framingError(fmt.Errorf("header not followed by a blank line: %q", blank))
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		if !json.Valid(body) {
			e.framingError(fmt.Errorf("body is not JSON: %q", trunc(body)))
			return
		}
		e.mu.Lock()
		e.raw = append(e.raw, body)
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

// ExitCode closes the client side if needed and returns Serve's return value.
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
		e.T.Fatalf("Serve did not return within %v", timeout)
		return -1
	}
}

// Close closes the client end of the pipe and waits (up to 5 s) for Serve to return.
func (e *Env) Close() {
	_ = e.Conn.Close()
	if e.code == nil {
		select {
		case c := <-e.exitCode:
			e.code = &c
		case <-time.After(5 * time.Second):
			e.T.Errorf("Serve did not return within 5s after the client closed")
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
	return Expectation{Desc: method + " " + desc, Check: func(msgs []Msg) Verdict {
		for _, m := range msgs {
			if m.Kind == KindNotification && m.Method == method && (pred == nil || pred(m.Params)) {
				return Met
			}
		}
		return Unmet
	}}
}

// NoNotification is met as long as no matching notification was seen.
func NoNotification(method string, pred func(params json.RawMessage) bool) Expectation {
	return Expectation{Desc: "no " + method, Check: func(msgs []Msg) Verdict {
		for _, m := range msgs {
			if m.Kind == KindNotification && m.Method == method && (pred == nil || pred(m.Params)) {
				return Unmeetable
			}
		}
		return Met
	}}
}

// ServerCall is met by a server→client request of method.
func ServerCall(method string) Expectation {
	return Expectation{Desc: "server request " + method, Check: func(msgs []Msg) Verdict {
		for _, m := range msgs {
			if m.Kind == KindCall && m.Method == method {
				return Met
			}
		}
		return Unmet
	}}
}

// ResponseTo is met by the answer to the request with that id.
func ResponseTo(id string) Expectation {
	return Expectation{Desc: "response to " + id, Check: func(msgs []Msg) Verdict {
		for _, m := range msgs {
			if m.Kind == KindResponse && m.ID == id {
				return Met
			}
		}
		return Unmet
	}}
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

func decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", trunc(raw), err)
	}
	return v
}

// fields decodes a JSON object into a map (nil when it is not one).
func fields(raw json.RawMessage) map[string]any {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// has returns a params predicate matching the given top-level fields.
func has(want map[string]any) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		m := fields(raw)
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

// ---- the fake OpenAI-compatible summarizer endpoint ----

// FakeLLM is an httptest server speaking the OpenAI chat-completions streaming format.
type FakeLLM struct {
	URL string
	srv *httptest.Server

	mu     sync.Mutex
	Chunks int           // content chunks per answer
	Delay  time.Duration // before each chunk
	// Hold makes every answer stop after its first chunk until Release or the request
	// is cancelled.
	Hold      bool
	Text      string
	release   chan struct{}
	quit      chan struct{}
	closeOnce sync.Once

	Requests atomic.Int32
	// Started receives one value per request (dropped when full).
	Started   chan struct{}
	Cancelled atomic.Int32
}

// NewFakeLLM starts the endpoint; base URL (with /v1) in URL.
func NewFakeLLM(t testing.TB) *FakeLLM {
	f := &FakeLLM{Chunks: 4, Text: "## Goal\nFake summary from the test endpoint.", release: make(chan struct{}),
		quit: make(chan struct{}), Started: make(chan struct{}, 64)}
	f.srv = httptest.NewServer(f)
	f.URL = f.srv.URL + "/v1"
	t.Cleanup(f.Close)
	return f
}

// Close stops the endpoint (idempotent).
func (f *FakeLLM) Close() {
	f.closeOnce.Do(func() {
		close(f.quit)
		f.srv.CloseClientConnections()
		f.srv.Close()
		if tr, ok := http.DefaultTransport.(*http.Transport); ok {
			tr.CloseIdleConnections()
		}
	})
}

// Release lets held answers finish.
func (f *FakeLLM) Release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.release:
	default:
		close(f.release)
	}
}

// Set changes the script under the lock.
func (f *FakeLLM) Set(fn func(f *FakeLLM)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// Config is the initializationOptions fragment that selects this endpoint.
func (f *FakeLLM) Config() map[string]any {
	return map[string]any{"summarizer": "openai", "baseUrl": f.URL, "model": "fake-summarizer", "apiKeyEnv": "PI_LSP_TEST_KEY"}
}

func (f *FakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	f.Requests.Add(1)
	select {
	case f.Started <- struct{}{}:
	default:
	}
	f.mu.Lock()
	chunks, delay, hold, text, release := f.Chunks, f.Delay, f.Hold, f.Text, f.release
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "fake-summarizer",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	wait := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-r.Context().Done():
			f.Cancelled.Add(1)
			return false
		case <-f.quit:
			return false
		}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	words := strings.SplitAfter(text, " ")
	per := (len(words) + chunks - 1) / max(chunks, 1)
	for i := 0; i < chunks; i++ {
		if !wait(delay) {
			return
		}
		lo, hi := min(i*per, len(words)), min((i+1)*per, len(words))
		send(chunk(map[string]any{"content": strings.Join(words[lo:hi], "")}, nil))
		if hold && i == 0 {
			select {
			case <-release:
			case <-r.Context().Done():
				f.Cancelled.Add(1)
				return
			case <-f.quit:
				return
			}
		}
	}
	send(chunk(map[string]any{}, "stop"))
	send(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "fake-summarizer",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

// ---- misc ----

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// mustRead reads a file.
func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// merge returns a new map with the entries of all maps.
func merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
