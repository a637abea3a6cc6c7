// Package bridge talks to a running pi that loaded pi-lsp's Pi extension
// (editors/pi/extension.ts): it finds the extension's registry files, connects to the
// Unix socket of the one that holds a session, and runs typed requests (compact,
// navigate, label, status) through it, with Pi's events streamed back.
//
// Invariant: a bridge is only ever used when its registry file and directory belong to
// this user, the registry's pid is alive and the connection was accepted with the
// registry's token; every write then happens inside that pi, through Pi's own API, so
// the session file holds only entries the live pi wrote. Stale registry files (their
// pid is gone) are ignored and removed.
package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Protocol is the bridge protocol version pi-lsp speaks.
const Protocol = 1

var (
	// ErrNoBridge: no live pi with the bridge holds the session.
	ErrNoBridge = errors.New("no pi with the pi-lsp bridge holds this session")
	// ErrGone: the connection to pi closed before the request's answer (pi exited).
	ErrGone = errors.New("pi closed the bridge connection before answering (did it exit?)")
	// ErrUnsafe: the registry directory or file is not private to this user.
	ErrUnsafe = errors.New("bridge registry is not private to this user")
)

// Error is a refusal or failure the bridge answered.
type Error struct {
	Code    string // malformed, unauthorized, protocol, unknownType, invalidParams, busy, notFound, unsupported, failed, aborted, nothingToCompact
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("pi: %s (%s)", e.Message, e.Code) }

// IsCode reports whether err is a bridge *Error with this code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Registration is one registry file of a running extension.
type Registration struct {
	Protocol    int    `json:"protocol"`
	PID         int    `json:"pid"`
	SessionFile string `json:"sessionFile"`
	Socket      string `json:"socket"`
	PiVersion   string `json:"piVersion"`
	Token       string `json:"token"`
	Cwd         string `json:"cwd"`
	StartedAt   string `json:"startedAt"`
	// File is the registry file itself.
	File string `json:"-"`
}

// DefaultDir is where the extension registers: $XDG_RUNTIME_DIR/pi-lsp, or
// <tmpdir>/pi-lsp-<uid> without a runtime dir (the extension computes the same).
func DefaultDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "pi-lsp")
	}
	return filepath.Join(os.TempDir(), "pi-lsp-"+strconv.Itoa(os.Getuid()))
}

// Alive reports whether a process with this pid exists.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A zombie (exited, not yet reaped) is gone for our purposes.
	if stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// Discover lists the live registrations in dir, newest first. A missing dir is no
// registration; a dir or file not owned by this user (or open to others) is refused
// or skipped; files whose pid is gone (or whose socket is) are removed with their socket.
func Discover(ctx context.Context, dir string) ([]Registration, error) {
	st, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bridge: %w", err)
	}
	if err := private(st); err != nil {
		return nil, fmt.Errorf("bridge: %s: %w", dir, err)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("bridge: %w", err)
	}
	var out []Registration
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := readRegistration(name)
		if err != nil {
			continue // unreadable, foreign or half-written: not ours to use
		}
		_, serr := os.Lstat(r.Socket)
		if !Alive(r.PID) || errors.Is(serr, os.ErrNotExist) {
			_ = os.Remove(name)
			if r.Socket != "" && filepath.Dir(r.Socket) == filepath.Dir(name) {
				_ = os.Remove(r.Socket)
			}
			continue
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt > out[j].StartedAt })
	return out, nil
}

func private(st os.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("%w (owned by uid %d)", ErrUnsafe, sys.Uid)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w (mode %o)", ErrUnsafe, st.Mode().Perm())
	}
	return nil
}

func readRegistration(name string) (Registration, error) {
	st, err := os.Lstat(name)
	if err != nil {
		return Registration{}, err
	}
	if !st.Mode().IsRegular() {
		return Registration{}, fmt.Errorf("%s is not a regular file", name)
	}
	if err := private(st); err != nil {
		return Registration{}, err
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return Registration{}, err
	}
	var r Registration
	if err := json.Unmarshal(data, &r); err != nil {
		return Registration{}, err
	}
	if r.PID <= 0 || r.Socket == "" || r.SessionFile == "" {
		return Registration{}, fmt.Errorf("%s: incomplete registration", name)
	}
	r.File = name
	return r, nil
}

// Find returns the live registration of the pi that holds sessionFile, or
// ErrNoBridge.
func Find(ctx context.Context, dir, sessionFile string) (*Registration, error) {
	regs, err := Discover(ctx, dir)
	if err != nil {
		return nil, err
	}
	want := canonical(sessionFile)
	for i := range regs {
		if regs[i].Protocol == Protocol && canonical(regs[i].SessionFile) == want {
			return &regs[i], nil
		}
	}
	return nil, ErrNoBridge
}

func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return filepath.Clean(p)
}

// Event is one of Pi's events the bridge streamed during a request.
type Event struct {
	Type string          `json:"type"`
	Raw  json.RawMessage `json:"-"`
}

// Status is the bridge's hello/status answer.
type Status struct {
	Protocol    int    `json:"protocol"`
	PID         int    `json:"pid"`
	SessionFile string `json:"sessionFile"`
	PiVersion   string `json:"piVersion"`
	Idle        bool   `json:"idle"`
	LeafID      string `json:"leafId"`
	Running     *struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"running"`
}

// Conn is one authenticated connection to a bridge. Requests on one Conn may run
// concurrently; the bridge itself runs one write at a time.
type Conn struct {
	nc     net.Conn
	reg    Registration
	Hello  Status
	mu     sync.Mutex // writes
	pmu    sync.Mutex
	next   int
	calls  map[string]*call
	closed chan struct{}
	err    error
}

type call struct {
	events func(Event)
	done   chan frame
}

type frame struct {
	Type   string          `json:"type"`
	ID     json.RawMessage `json:"id"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
	Event  json.RawMessage `json:"event"`
}

// UnmarshalJSON reads the wire's {code, message}.
func (e *Error) UnmarshalJSON(b []byte) error {
	var w struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	e.Code, e.Message = w.Code, w.Message
	return nil
}

// Dial connects to a registration and authenticates with its token.
func Dial(ctx context.Context, reg Registration) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", reg.Socket)
	if err != nil {
		return nil, fmt.Errorf("bridge: connecting to pi %d: %w", reg.PID, err)
	}
	c := &Conn{nc: nc, reg: reg, calls: map[string]*call{}, closed: make(chan struct{})}
	go c.readLoop()
	raw, err := c.do(ctx, map[string]any{"type": "hello", "protocol": Protocol, "token": reg.Token}, nil)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("bridge: hello to pi %d: %w", reg.PID, err)
	}
	if err := json.Unmarshal(raw, &c.Hello); err != nil {
		c.Close()
		return nil, fmt.Errorf("bridge: hello answer: %w", err)
	}
	return c, nil
}

// Registration is what c was dialed with.
func (c *Conn) Registration() Registration { return c.reg }

// Close closes the connection; a request still running in pi is aborted by it.
func (c *Conn) Close() error { return c.nc.Close() }

func (c *Conn) readLoop() {
	r := bufio.NewReaderSize(c.nc, 64<<10)
	var err error
	for {
		var line []byte
		line, err = r.ReadBytes('\n')
		if err != nil {
			break
		}
		var f frame
		if json.Unmarshal(line, &f) != nil {
			continue
		}
		var id string
		if json.Unmarshal(f.ID, &id) != nil {
			continue
		}
		c.pmu.Lock()
		cl := c.calls[id]
		if cl != nil && f.Type == "response" {
			delete(c.calls, id)
		}
		c.pmu.Unlock()
		if cl == nil {
			continue
		}
		switch f.Type {
		case "event":
			if cl.events != nil {
				var ev Event
				_ = json.Unmarshal(f.Event, &ev)
				ev.Raw = append(json.RawMessage(nil), f.Event...)
				cl.events(ev)
			}
		case "response":
			cl.done <- f
		}
	}
	c.pmu.Lock()
	c.err = err
	close(c.closed)
	c.pmu.Unlock()
}

// do sends one request and waits for its answer; when ctx ends first it asks the
// bridge to cancel and waits a little for the request to end.
func (c *Conn) do(ctx context.Context, req map[string]any, events func(Event)) (json.RawMessage, error) {
	c.pmu.Lock()
	select {
	case <-c.closed:
		c.pmu.Unlock()
		return nil, ErrGone
	default:
	}
	c.next++
	id := strconv.Itoa(c.next)
	cl := &call{events: events, done: make(chan frame, 1)}
	c.calls[id] = cl
	c.pmu.Unlock()
	req["id"] = id
	if err := c.write(req); err != nil {
		return nil, err
	}
	wait := func(f frame) (json.RawMessage, error) {
		if !f.OK {
			if f.Error == nil {
				f.Error = &Error{Code: "failed", Message: "no error given"}
			}
			return nil, f.Error
		}
		return f.Result, nil
	}
	select {
	case f := <-cl.done:
		return wait(f)
	case <-c.closed:
		// The answer may have come just before the connection closed (a refusal is
		// answered, then the connection dropped): select picks at random among ready
		// cases, so look for it before calling pi gone.
		select {
		case f := <-cl.done:
			return wait(f)
		default:
		}
		return nil, ErrGone
	case <-ctx.Done():
	}
	_ = c.write(map[string]any{"type": "cancel", "id": id + ".cancel", "target": id})
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case f := <-cl.done:
		res, err := wait(f)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return res, nil // it finished before the cancel reached Pi
	case <-c.closed:
	case <-timer.C:
	}
	return nil, ctx.Err()
}

func (c *Conn) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.nc.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("bridge: %w: %w", ErrGone, err)
	}
	return nil
}

// Status asks for pi's state.
func (c *Conn) Status(ctx context.Context) (*Status, error) {
	return ask[Status](ctx, c, "status", map[string]any{"type": "status"}, nil)
}

// CompactResult is Pi's answer to a compaction.
type CompactResult struct {
	// Result is Pi's CompactionResult {summary, firstKeptEntryId, tokensBefore, details}.
	Result json.RawMessage `json:"result"`
	// Entry is the compaction entry Pi appended (session_compact's compactionEntry).
	Entry  json.RawMessage `json:"entry"`
	LeafID string          `json:"leafId"`
}

// Compact makes pi compact its session with these instructions.
func (c *Conn) Compact(ctx context.Context, instructions string, events func(Event)) (*CompactResult, error) {
	return ask[CompactResult](ctx, c, "compact", map[string]any{"type": "compact", "customInstructions": instructions}, events)
}

// NavigateRequest is navigateTree's arguments.
type NavigateRequest struct {
	TargetID            string `json:"targetId"`
	Summarize           bool   `json:"summarize"`
	CustomInstructions  string `json:"customInstructions,omitempty"`
	ReplaceInstructions bool   `json:"replaceInstructions"`
	Label               string `json:"label,omitempty"`
}

// NavigateResult is Pi's answer to a navigation.
type NavigateResult struct {
	Cancelled    bool            `json:"cancelled"`
	LeafID       string          `json:"leafId"`
	OldLeafID    string          `json:"oldLeafId"`
	SummaryEntry json.RawMessage `json:"summaryEntry"`
}

// Navigate moves pi's leaf (with a branch summary when asked).
func (c *Conn) Navigate(ctx context.Context, req NavigateRequest, events func(Event)) (*NavigateResult, error) {
	m := map[string]any{"type": "navigate", "targetId": req.TargetID, "summarize": req.Summarize, "replaceInstructions": req.ReplaceInstructions}
	if req.CustomInstructions != "" {
		m["customInstructions"] = req.CustomInstructions
	}
	if req.Label != "" {
		m["label"] = req.Label
	}
	r, err := ask[NavigateResult](ctx, c, "navigate", m, events)
	if err != nil {
		return nil, err
	}
	if string(r.SummaryEntry) == "null" {
		r.SummaryEntry = nil
	}
	return r, nil
}

// Label sets (or, with "", clears) an entry's label through pi.setLabel.
func (c *Conn) Label(ctx context.Context, entryID, label string) error {
	m := map[string]any{"type": "label", "entryId": entryID}
	if label != "" {
		m["label"] = label
	}
	_, err := c.do(ctx, m, nil)
	return err
}

// ask sends a request and decodes pi's answer to it as a T; what names the request in
// the error of an answer that does not decode.
func ask[T any](ctx context.Context, c *Conn, what string, req map[string]any, events func(Event)) (*T, error) {
	raw, err := c.do(ctx, req, events)
	if err != nil {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("bridge: %s answer: %w", what, err)
	}
	return &v, nil
}

// Send writes one raw request (tests of the bridge's refusals use it) and returns the
// answer.
func (c *Conn) Send(ctx context.Context, req map[string]any) (json.RawMessage, error) {
	return c.do(ctx, req, nil)
}
