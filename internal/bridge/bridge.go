// Package bridge talks to a running pi that loaded pi-lsp's Pi extension
// (editors/pi/extension.ts): it finds the extension's registry files, connects to the
// Unix socket of the one that holds a session, and runs typed requests (compact,
// navigate, label, status) through it, with Pi's events streamed back.
//
// Invariant: a bridge is only ever used when its registry file and directory belong to
// this user, the registry's pid is a live process of this user that started no later
// than the registry was written (not a reused pid), its socket accepts, and the
// connection was accepted with the registry's token; every write then happens inside
// that pi, through Pi's own API, so the session file holds only entries the live pi
// wrote. A registration that fails any of these is stale: its files are removed and it
// is as if there were no bridge.
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
	"slices"
	"sort"
	"strconv"
	"strings"
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

// Error is a refusal or failure the bridge answered (ErrorResponse's error).
type Error struct {
	// Code says why (one of ErrorCodes).
	Code    string `json:"code" ts:"ErrorCode"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("pi: %s (%s)", e.Message, e.Code) }

// IsCode reports whether err is a bridge *Error with this code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Registration is one registry file of a running extension.
type Registration struct {
	Protocol int `json:"protocol"`
	// Version is the version of pi-lsp's Pi extension that registered ("" before 0.2.0).
	Version     string `json:"version,omitempty"`
	PID         int    `json:"pid"`
	SessionFile string `json:"sessionFile"`
	Socket      string `json:"socket"`
	PiVersion   string `json:"piVersion"`
	Token       string `json:"token"`
	Cwd         string `json:"cwd"`
	StartedAt   string `json:"startedAt"`
	// ProcStart is the start time of the registering process as /proc/PID/stat gives it
	// (clock ticks since boot; Linux only): a process with the same pid and another
	// start time is not the one that registered.
	ProcStart string `json:"procStart,omitempty"`
	// File is the registry file itself.
	File string `json:"-"`
	// written is the registry file's modification time.
	written time.Time
}

// DefaultDir is where the extension registers when the user's runtime dir is known:
// $XDG_RUNTIME_DIR/pi-lsp, or <tmpdir>/pi-lsp-<uid> without one (the extension computes
// the same). Dirs lists every place a registration may be.
func DefaultDir() string {
	if d := runtimeDir(); d != "" {
		return d
	}
	return tempDir()
}

func runtimeDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "pi-lsp")
	}
	return ""
}

func tempDir() string {
	return filepath.Join(os.TempDir(), "pi-lsp-"+strconv.Itoa(os.Getuid()))
}

// StateDir is the private fallback the extension registers in when <tmpdir>/pi-lsp-<uid>
// belongs to someone else (another local user can create it first):
// $XDG_STATE_HOME/pi-lsp/bridge, or ~/.local/state/pi-lsp/bridge.
func StateDir() string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "pi-lsp", "bridge")
}

// Dirs are the directories searched for registrations, in order: the runtime dir, the
// temp dir and the state dir. A pi started without XDG_RUNTIME_DIR (tmux, ssh, some
// terminals) registers in one of the last two while this process may have a runtime
// dir, so all three are searched.
func Dirs() []string {
	var out []string
	for _, d := range []string{runtimeDir(), tempDir(), StateDir()} {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// Alive reports whether pid is a live process of this user (not a zombie). Another
// user's process with that pid is not: it cannot be a pi of ours.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if st, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
		if uid, ok := fileUID(st); ok && uid != os.Getuid() {
			return false
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				return false // exited, not yet reaped
			}
		}
		return true
	}
	// No /proc (macOS): signal 0 tells whether the pid exists and whether it is ours
	// to signal; EPERM is another user's process.
	return signalZero(pid)
}

// sameProcess reports whether the live process pid is the one that wrote reg: its
// start time is the one the registration recorded, or (for an extension that did not
// record it) no later than the registry file was written. Without /proc it is assumed.
func sameProcess(reg Registration) bool {
	start, ok := procStart(reg.PID)
	if !ok {
		return true
	}
	if reg.ProcStart != "" {
		return reg.ProcStart == strconv.FormatUint(start, 10)
	}
	boot, ok := bootTime()
	if !ok || reg.written.IsZero() {
		return true
	}
	// USER_HZ is 100 on every Linux; the boot time is whole seconds, hence the slack.
	started := boot.Add(time.Duration(start) * 10 * time.Millisecond)
	return !started.After(reg.written.Add(2 * time.Second))
}

// procStart is field 22 of /proc/PID/stat: the process's start, in clock ticks since boot.
func procStart(pid int) (uint64, bool) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	// After the command: state is field 3, starttime field 22.
	if len(fields) < 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(fields[19], 10, 64)
	return v, err == nil
}

func bootTime() (time.Time, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			if sec, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64); err == nil {
				return time.Unix(sec, 0), true
			}
		}
	}
	return time.Time{}, false
}

// accepts reports whether something listens on the registration's socket; false means
// the socket is missing or refuses (its pi is gone, or the pid was reused), or its path
// is too long to reach (see dialSocket).
func accepts(ctx context.Context, reg Registration) bool {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := dialSocket(dctx, reg.Socket)
	if err != nil {
		// A slow accept (a busy pi) is not staleness; a refusal, a missing file or a
		// path no connect can take is.
		return !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ENOTSOCK) &&
			!errors.Is(err, ErrPathTooLong) && !errors.Is(err, syscall.EINVAL)
	}
	_ = c.Close()
	return true
}

// remove deletes a stale registration's files.
func remove(reg Registration) {
	_ = os.Remove(reg.File)
	if reg.Socket != "" && filepath.Dir(reg.Socket) == filepath.Dir(reg.File) {
		_ = os.Remove(reg.Socket)
	}
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
		if !Alive(r.PID) || !sameProcess(r) || errors.Is(serr, os.ErrNotExist) {
			remove(r)
			continue
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt > out[j].StartedAt })
	return out, nil
}

func private(st os.FileInfo) error {
	uid, ok := fileUID(st)
	if !ok {
		return nil
	}
	if uid != os.Getuid() {
		return fmt.Errorf("%w (owned by uid %d)", ErrUnsafe, uid)
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
	r.written = st.ModTime()
	return r, nil
}

// NotFoundError is ErrNoBridge with the directories that were searched.
type NotFoundError struct {
	Dirs []string
	// Skipped says why a directory was not read (not private to this user, ...).
	Skipped []string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("%v (searched %s)", ErrNoBridge, strings.Join(e.Dirs, ", "))
	if len(e.Skipped) > 0 {
		msg += "; skipped: " + strings.Join(e.Skipped, "; ")
	}
	return msg
}

func (e *NotFoundError) Unwrap() error { return ErrNoBridge }

// ProtocolError is a live pi holding the session whose bridge speaks another protocol
// than this pi-lsp: the two must be updated to match before pi-lsp can drive that pi.
type ProtocolError struct {
	PID     int
	Theirs  int    // the bridge's protocol
	Version string // the bridge's (pi-lsp's Pi extension's) version, when it registered one
}

func (e *ProtocolError) Error() string {
	ext := "pi-lsp's Pi extension"
	if e.Version != "" {
		ext += " " + e.Version
	}
	return fmt.Sprintf("the pi (pid %d) holding this session loaded %s, which speaks bridge protocol %d; this pi-lsp speaks bridge protocol %d: update one of them so they match", e.PID, ext, e.Theirs, Protocol)
}

// Find returns the live registration of the pi that holds sessionFile, searching dirs
// in order, or an error that is ErrNoBridge (a *NotFoundError naming the dirs). A
// registration whose socket is missing or refuses is stale: its files are removed and
// the search goes on. A live registration of the session with another protocol is a
// *ProtocolError naming both, unless another registration matches.
func Find(ctx context.Context, sessionFile string, dirs ...string) (*Registration, error) {
	want := canonical(sessionFile)
	nf := &NotFoundError{Dirs: dirs}
	var mismatch *ProtocolError
	for _, dir := range dirs {
		regs, err := Discover(ctx, dir)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			nf.Skipped = append(nf.Skipped, err.Error())
			continue
		}
		for i := range regs {
			if canonical(regs[i].SessionFile) != want {
				continue
			}
			if !accepts(ctx, regs[i]) {
				remove(regs[i])
				continue
			}
			if regs[i].Protocol != Protocol {
				if mismatch == nil {
					mismatch = &ProtocolError{PID: regs[i].PID, Theirs: regs[i].Protocol, Version: regs[i].Version}
				}
				continue
			}
			return &regs[i], nil
		}
	}
	if mismatch != nil {
		return nil, mismatch
	}
	return nil, nf
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

// Event is one of Pi's events the bridge streamed during a request (Events): its type,
// and the event to decode as that type.
type Event struct {
	Type string          `json:"type"`
	Raw  json.RawMessage `json:"-"`
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

// frame is any line pi sends: an OKResponse, an ErrorResponse or an EventFrame.
type frame struct {
	Type   string          `json:"type"`
	ID     json.RawMessage `json:"id"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
	Event  json.RawMessage `json:"event"`
}

// Dial connects to a registration and, once the socket's listener is known to be this
// user's (checkPeer), authenticates with its token.
func Dial(ctx context.Context, reg Registration) (*Conn, error) {
	nc, err := dialSocket(ctx, reg.Socket)
	if err != nil {
		return nil, fmt.Errorf("bridge: connecting to pi %d: %w", reg.PID, err)
	}
	if err := checkPeer(nc, reg.Socket); err != nil {
		nc.Close()
		return nil, err // the token is not sent
	}
	c := &Conn{nc: nc, reg: reg, calls: map[string]*call{}, closed: make(chan struct{})}
	go c.readLoop()
	raw, err := c.do(ctx, HelloRequest{Protocol: Protocol, Token: reg.Token}, nil)
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
func (c *Conn) do(ctx context.Context, req request, events func(Event)) (json.RawMessage, error) {
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
	if err := c.write(req.withID(id)); err != nil {
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
	_ = c.write(CancelRequest{Target: id}.withID(id + ".cancel"))
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
	return ask[Status](ctx, c, "status", StatusRequest{}, nil)
}

// Compact makes pi compact its session with these instructions.
func (c *Conn) Compact(ctx context.Context, instructions string, events func(Event)) (*CompactResult, error) {
	return ask[CompactResult](ctx, c, "compact", CompactRequest{CustomInstructions: instructions}, events)
}

// Navigate moves pi's leaf (with a branch summary when asked); req's id and type are
// the connection's.
func (c *Conn) Navigate(ctx context.Context, req NavigateRequest, events func(Event)) (*NavigateResult, error) {
	r, err := ask[NavigateResult](ctx, c, "navigate", req, events)
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
	_, err := c.do(ctx, LabelRequest{EntryID: entryID, Label: label}, nil)
	return err
}

// ask sends a request and decodes pi's answer to it as a T; what names the request in
// the error of an answer that does not decode.
func ask[T any](ctx context.Context, c *Conn, what string, req request, events func(Event)) (*T, error) {
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

// Send writes one request given as a map, with the connection's id (tests of the
// bridge's refusals use it), and returns the answer.
func (c *Conn) Send(ctx context.Context, req map[string]any) (json.RawMessage, error) {
	return c.do(ctx, rawRequest(req), nil)
}
