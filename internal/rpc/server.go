package rpc

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Options configure a server.
type Options struct {
	Version string
	Logger  *slog.Logger // stderr logs; nil discards
	// AgentDir overrides Pi's agent directory (default: PI_CODING_AGENT_DIR or ~/.pi/agent).
	AgentDir string
	// HookTimeout bounds how long a client hook may take (default 10s).
	HookTimeout time.Duration
	// Debounce is the shortest interval between two pi/sessionChanged of one session
	// (default 100ms): a change is pushed at once, changes within the interval after it
	// together at its end.
	Debounce time.Duration
	// WatchInterval is the rescan safety net of the session folder watcher (default 2s);
	// files the agent read are checked for changes at the same interval.
	WatchInterval time.Duration
	// DraftDir is where background drafts are cached ("" keeps them in memory only;
	// the pi-lsp command uses compaction.DefaultDraftDir()).
	DraftDir string
	// SoftThreshold is the share of the compaction trigger past which drafts are made
	// (default DefaultSoftThreshold; a negative value disables drafts).
	SoftThreshold float64
	// DraftDelay debounces drafting after a session change (default 1s).
	DraftDelay time.Duration
	// MaxFrameBytes bounds one incoming message (default MaxFrameBytes).
	MaxFrameBytes int
	// BridgeDir is where pi-lsp's Pi extension registers live pi processes (default
	// bridge.DefaultDir(): $XDG_RUNTIME_DIR/pi-lsp).
	BridgeDir string
	// ParentInterval is how often the client's process (initialize's processId) is
	// checked; the server exits once it is gone (default 5s).
	ParentInterval time.Duration
}

type lifecycle int

const (
	stateNew lifecycle = iota
	stateInitialized
	stateShutdown
)

// Server is one LSP connection.
type Server struct {
	opt     Options
	log     *slog.Logger
	conn    *conn
	stream  *stream
	tracker *Tracker
	host    *host
	drafts  *drafter

	mu        sync.Mutex
	state     lifecycle
	params    initializeParams
	jobs      map[string]context.CancelFunc // by request id
	jobsWG    sync.WaitGroup
	baseCtx   context.Context
	cancelAll context.CancelFunc
	bgCtx     context.Context // server-initiated jobs; shutdown cancels it
	cancelBG  context.CancelFunc
	exitCode  int
	exited    chan struct{}
	exitOnce  sync.Once
	// ready is closed once conn is set: the connection's read loop starts inside
	// newConn, before the assignment.
	ready chan struct{}
	// closing is set (under mu) when Serve stops accepting jobs, before it waits for
	// the running ones.
	closing     bool
	watchOnce   sync.Once
	initialized bool
}

// Serve runs an LSP server over r/w until the client sends exit or closes the input. It
// returns the process exit code: 0 after shutdown and exit, 1 otherwise.
func Serve(ctx context.Context, r io.Reader, w io.Writer, closer io.Closer, opt Options) int {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	opt.HookTimeout = cmp.Or(opt.HookTimeout, 10*time.Second)
	opt.Debounce = cmp.Or(opt.Debounce, 100*time.Millisecond)
	opt.WatchInterval = cmp.Or(opt.WatchInterval, 2*time.Second)
	opt.SoftThreshold = cmp.Or(opt.SoftThreshold, DefaultSoftThreshold)
	opt.DraftDelay = cmp.Or(opt.DraftDelay, time.Second)
	opt.ParentInterval = cmp.Or(opt.ParentInterval, 5*time.Second)
	s := &Server{opt: opt, log: opt.Logger, jobs: map[string]context.CancelFunc{}, exited: make(chan struct{}), exitCode: 1, ready: make(chan struct{})}
	s.baseCtx, s.cancelAll = context.WithCancel(ctx)
	s.bgCtx, s.cancelBG = context.WithCancel(s.baseCtx)
	defer s.cancelAll()
	s.tracker = newTracker(s)
	s.drafts = newDrafter(s, opt.DraftDir)
	s.host = newHost(s)
	st := newStream(r, w, closer, opt.MaxFrameBytes)
	st.onBadFrame = func(err error) { s.log.Warn("skipped bad message", "err", err) }
	s.stream = st
	s.conn = newConn(s.baseCtx, st, s.Handle)
	close(s.ready)
	select {
	case <-s.conn.disconnected():
	case <-s.exited:
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.closing = true // no job starts after this, so jobsWG.Wait below is not raced by Add
	s.mu.Unlock()
	s.cancelAll()
	s.host.stop()
	done := make(chan struct{})
	go func() { s.jobsWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	_ = s.conn.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode
}

func (s *Server) logf(format string, args ...any) { s.log.Info(fmt.Sprintf(format, args...)) }

// notify sends a notification on a context that is never cancelled, so progress ends and
// end events still go out after a job was cancelled.
func (s *Server) notify(method string, params any) {
	if err := s.conn.notify(method, params); err != nil {
		s.log.Debug("notify failed", "method", method, "err", err)
	}
}

// call sends a request to the client. It must not be used from the read loop.
func (s *Server) call(ctx context.Context, method string, params, result any) error {
	return s.conn.call(ctx, method, params, result)
}

// logMessage mirrors a log line to the client's output channel.
func (s *Server) logMessage(typ int, msg string) {
	s.notify("window/logMessage", showMessageParams{Type: typ, Message: msg})
}

func (s *Server) clientProgress() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.params.Capabilities.Window.WorkDoneProgress
}

func (s *Server) clientHooks() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.params.Capabilities.Experimental.Pi.Hooks
}

// rawIDKey is the job key of an id as $/cancelRequest sends it ("" for one that is
// neither a non-negative integer nor a string).
func rawIDKey(raw json.RawMessage) string {
	var id ID
	if json.Unmarshal(raw, &id.Num) == nil {
		return id.key()
	}
	if json.Unmarshal(raw, &id.Str) == nil {
		id.IsString = true
		return id.key()
	}
	return ""
}

// Handle handles one message from the client. It runs on the read loop: lifecycle and
// notifications are handled here, in wire order; other requests are dispatched to
// their own goroutine.
func (s *Server) Handle(ctx context.Context, req *request) {
	<-s.ready
	s.mu.Lock()
	state, closing := s.state, s.closing
	s.mu.Unlock()
	if req.Notif {
		s.handleNotification(req, state)
		return
	}
	switch {
	case req.Method == "initialize":
		if state != stateNew {
			s.replyErr(req.ID, errorf(CodeInvalidRequest, KindInvalidParams, "initialize was already received"))
			return
		}
		s.reply(req.ID, s.initialize(req))
		return
	case closing:
		s.replyErr(req.ID, errorf(CodeInvalidRequest, KindShutdown, "server is exiting"))
		return
	case req.Method == "shutdown" && state == stateNew:
		s.replyErr(req.ID, errorf(CodeServerNotInitialized, KindInvalidParams, "server not initialized"))
		return
	case req.Method == "shutdown":
		s.mu.Lock()
		s.state = stateShutdown
		for _, cancel := range s.jobs {
			cancel()
		}
		s.mu.Unlock()
		s.cancelBG()
		s.reply(req.ID, nil)
		return
	case state == stateNew:
		s.replyErr(req.ID, errorf(CodeServerNotInitialized, KindInvalidParams, "server not initialized"))
		return
	case state == stateShutdown:
		s.replyErr(req.ID, errorf(CodeInvalidRequest, KindShutdown, "server is shutting down"))
		return
	}
	m := s.method(req.Method)
	if m == nil {
		s.replyErr(req.ID, errorf(CodeMethodNotFound, KindInvalidParams, "method not found: "+req.Method))
		return
	}
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	jctx, cancel := context.WithCancel(s.baseCtx)
	key := req.ID.key()
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		cancel()
		s.replyErr(req.ID, errorf(CodeInvalidRequest, KindShutdown, "server is exiting"))
		return
	}
	if _, dup := s.jobs[key]; dup {
		s.mu.Unlock()
		cancel()
		s.replyErr(req.ID, errorf(CodeInvalidRequest, KindInvalidParams, fmt.Sprintf("request id %s is already in use by a running request", req.ID)))
		return
	}
	s.jobs[key] = cancel
	s.jobsWG.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.jobsWG.Done()
		defer func() {
			s.mu.Lock()
			delete(s.jobs, key)
			s.mu.Unlock()
			cancel()
		}()
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("handler panic", "method", req.Method, "panic", r)
				s.replyErr(req.ID, errorf(CodeInternalError, KindInternal, fmt.Sprintf("internal error in %s", req.Method)))
			}
		}()
		res, err := m(jctx, params)
		if err != nil {
			if jctx.Err() != nil {
				err = fmt.Errorf("%w", context.Canceled)
			}
			s.replyErr(req.ID, err)
			return
		}
		s.reply(req.ID, res)
	}()
}

func (s *Server) reply(id ID, result any) {
	if e, ok := result.(interface{ encoded() encodedJSON }); ok && len(e.encoded()) > 0 && s.stream != nil {
		raw := e.encoded()
		// An answer encoded once (memoized, shared by concurrent readers): framed as it
		// is, not re-validated and re-compacted by encoding/json for every reader.
		if err := s.stream.writeResponse(id, json.RawMessage(raw)); err != nil {
			s.log.Debug("reply failed", "err", err)
		}
		return
	}
	err := s.conn.reply(id, result)
	if err == nil {
		return
	}
	s.log.Debug("reply failed", "err", err)
	if _, merr := json.Marshal(result); merr != nil {
		// The result cannot be encoded (NaN, a bad json.RawMessage): the request must
		// still be answered once.
		s.log.Error("unencodable result", "id", id, "err", merr)
		s.replyErr(id, errorf(CodeInternalError, KindInternal, "internal error: unencodable result"))
	}
}

func (s *Server) replyErr(id ID, err error) {
	if e := s.conn.replyError(id, wireError(err)); e != nil {
		s.log.Debug("reply failed", "err", e)
	}
}

func (s *Server) handleNotification(req *request, state lifecycle) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	switch req.Method {
	case "exit":
		s.mu.Lock()
		if state == stateShutdown {
			s.exitCode = 0
		}
		s.mu.Unlock()
		s.exitOnce.Do(func() { close(s.exited) })
	case "initialized":
		if state == stateInitialized {
			s.watchOnce.Do(s.host.start) // a repeated initialized must not start a second watcher
		}
	case "$/cancelRequest":
		var p cancelParams
		if json.Unmarshal(params, &p) == nil {
			s.mu.Lock()
			cancel := s.jobs[rawIDKey(p.ID)]
			s.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	case "window/workDoneProgress/cancel":
		var p workDoneProgressCancelParams
		if json.Unmarshal(params, &p) == nil {
			s.tracker.Cancel(p.Token)
		}
	case "workspace/didChangeConfiguration":
		var p didChangeConfigurationParams
		if json.Unmarshal(params, &p) == nil {
			s.host.configure(p.Settings)
		}
	default:
		// Unknown notifications are ignored, as LSP requires.
	}
}

func (s *Server) initialize(req *request) any {
	var p initializeParams
	if req.Params != nil {
		if err := json.Unmarshal(*req.Params, &p); err != nil {
			s.log.Warn("initialize params", "err", err)
		}
	}
	s.mu.Lock()
	s.params = p
	s.state = stateInitialized
	s.mu.Unlock()
	s.host.initialize(p)
	if p.ProcessID != nil {
		go s.watchParent(s.baseCtx, *p.ProcessID, s.opt.ParentInterval)
	}
	return initializeResult{
		Capabilities: serverCapabilities{
			ExecuteCommandProvider: executeCommandOptions{Commands: CommandIDs(), WorkDoneProgress: true},
			Experimental: experimentalCapabilities{Pi: piCapabilities{
				Methods:       MethodNames(),
				Notifications: NotificationNames(),
				Hooks:         HookNames(),
			}},
		},
		ServerInfo: serverInfo{Name: "pi-lsp", Version: s.opt.Version},
	}
}
