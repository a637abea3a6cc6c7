package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/linepeer"
)

func privateTemp(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "plbt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	dir := filepath.Join(d, "pi-lsp")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeReg(t *testing.T, dir, stem string, r Registration, mode os.FileMode) string {
	t.Helper()
	b, _ := json.Marshal(r)
	p := filepath.Join(dir, stem+".json")
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	return cmd.Process.Pid
}

func TestDiscoverIgnoresAndRemovesStaleRegistrations(t *testing.T) {
	dir := privateTemp(t)
	session := filepath.Join(t.TempDir(), "s.jsonl")
	dead := deadPID(t)
	sock := filepath.Join(dir, "dead.sock")
	if err := os.WriteFile(sock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stale := writeReg(t, dir, "dead", Registration{Protocol: 1, PID: dead, SessionFile: session, Socket: sock, Token: "x"}, 0o600)
	listen(t, filepath.Join(dir, "live.sock"))
	live := writeReg(t, dir, "live", Registration{Protocol: 1, PID: os.Getpid(), SessionFile: session, Socket: filepath.Join(dir, "live.sock"), Token: "y"}, 0o600)
	// A live pid whose socket is gone (a reused pid) is stale too.
	noSock := writeReg(t, dir, "nosock", Registration{Protocol: 1, PID: os.Getpid(), SessionFile: session, Socket: filepath.Join(dir, "gone.sock"), Token: "z"}, 0o600)
	regs, err := Discover(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 1 || regs[0].File != live {
		t.Fatalf("Discover = %+v, want only the live registration", regs)
	}
	for _, p := range []string{stale, sock, noSock} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s was not removed (%v)", p, err)
		}
	}
	if r, err := Find(context.Background(), session, dir); err != nil || r.PID != os.Getpid() {
		t.Errorf("Find = %+v, %v", r, err)
	}
	if _, err := Find(context.Background(), session+".other", dir); !errors.Is(err, ErrNoBridge) {
		t.Errorf("Find of another session: %v, want ErrNoBridge", err)
	}
}

func TestDiscoverRefusesWhatOthersCanTouch(t *testing.T) {
	dir := privateTemp(t)
	session := filepath.Join(t.TempDir(), "s.jsonl")
	// A registry file others may write is not used (someone could point pi-lsp at
	// their own socket).
	if err := os.WriteFile(filepath.Join(dir, "o.sock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	writeReg(t, dir, "open", Registration{Protocol: 1, PID: os.Getpid(), SessionFile: session, Socket: filepath.Join(dir, "o.sock"), Token: "t"}, 0o644)
	if _, err := Find(context.Background(), session, dir); !errors.Is(err, ErrNoBridge) {
		t.Errorf("a 0644 registry file was used: %v", err)
	}
	// A registry directory others may enter is refused as a whole.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Discover(context.Background(), dir); !errors.Is(err, ErrUnsafe) {
		t.Errorf("Discover of a 0755 dir: %v, want ErrUnsafe", err)
	}
	// No directory: no bridge, no error.
	if regs, err := Discover(context.Background(), filepath.Join(dir, "missing")); err != nil || len(regs) != 0 {
		t.Errorf("Discover of a missing dir = %v, %v", regs, err)
	}
}

// listen makes path a socket that accepts (and closes) every connection.
func listen(t *testing.T, path string) { t.Helper(); isolate.HangUpSocket(t, path) }

// A registration whose pid is alive but whose socket nobody listens on (pi was killed
// and its pid reused, or its listener died) is stale: Find removes its files and reports
// no bridge, naming where it searched, instead of a connection error.
func TestFindRemovesARegistrationWhoseSocketRefuses(t *testing.T) {
	dir := privateTemp(t)
	session := filepath.Join(t.TempDir(), "s.jsonl")
	sock := filepath.Join(dir, "refusing.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // the socket file stays; connecting to it is refused
	reg := writeReg(t, dir, "refusing", Registration{Protocol: 1, PID: os.Getpid(), SessionFile: session, Socket: sock, Token: "x"}, 0o600)
	_, err = Find(context.Background(), session, dir)
	var nf *NotFoundError
	if !errors.Is(err, ErrNoBridge) || !errors.As(err, &nf) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Find = %v, want no bridge naming %s", err, dir)
	}
	for _, p := range []string{reg, sock} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s was not removed (%v)", p, err)
		}
	}
}

// A live pid that is not the process that registered (its start time differs, or it
// started after the registry file was written) is a reused pid: stale.
func TestDiscoverSkipsAReusedPid(t *testing.T) {
	if _, ok := procStart(os.Getpid()); !ok {
		t.Skip("no /proc")
	}
	dir := privateTemp(t)
	session := filepath.Join(t.TempDir(), "s.jsonl")
	listen(t, filepath.Join(dir, "a.sock"))
	listen(t, filepath.Join(dir, "b.sock"))
	listen(t, filepath.Join(dir, "c.sock"))
	start, _ := procStart(os.Getpid())
	wrong := writeReg(t, dir, "a", Registration{Protocol: 1, PID: os.Getpid(), ProcStart: strconv.FormatUint(start+1, 10), SessionFile: session, Socket: filepath.Join(dir, "a.sock"), Token: "x"}, 0o600)
	old := writeReg(t, dir, "b", Registration{Protocol: 1, PID: os.Getpid(), SessionFile: session, Socket: filepath.Join(dir, "b.sock"), Token: "x"}, 0o600)
	past := time.Now().Add(-24 * 365 * time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	right := writeReg(t, dir, "c", Registration{Protocol: 1, PID: os.Getpid(), ProcStart: strconv.FormatUint(start, 10), SessionFile: session, Socket: filepath.Join(dir, "c.sock"), Token: "x"}, 0o600)
	regs, err := Discover(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 1 || regs[0].File != right {
		t.Fatalf("Discover = %+v, want only %s", regs, right)
	}
	for _, p := range []string{wrong, old} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was not removed", p)
		}
	}
}

// Another user's process is never taken for a pi of ours, whatever its pid.
func TestAliveCountsOnlyThisUsersProcesses(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	if os.Getuid() != 0 {
		if Alive(1) {
			t.Fatal("init (another user's process) counted as alive")
		}
		return
	}
	// As root: a process of another user.
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start a process as another user:", err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }()
	if Alive(cmd.Process.Pid) {
		t.Fatal("another user's process counted as alive")
	}
}

// Registrations are searched in every directory given, in order: a pi started without
// XDG_RUNTIME_DIR registers in the temp dir while pi-lsp has a runtime dir.
func TestFindSearchesEveryDir(t *testing.T) {
	first, second := privateTemp(t), privateTemp(t)
	session := filepath.Join(t.TempDir(), "s.jsonl")
	listen(t, filepath.Join(second, "p.sock"))
	writeReg(t, second, "p", Registration{Protocol: 1, PID: os.Getpid(), SessionFile: session, Socket: filepath.Join(second, "p.sock"), Token: "x"}, 0o600)
	if r, err := Find(context.Background(), session, first, second); err != nil || r.File != filepath.Join(second, "p.json") {
		t.Fatalf("Find = %+v, %v", r, err)
	}
	// A directory another user could write is skipped, and the error says so.
	if err := os.Chmod(first, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := Find(context.Background(), session+".x", first, second)
	if !errors.Is(err, ErrNoBridge) || !strings.Contains(err.Error(), "skipped") || !strings.Contains(err.Error(), second) {
		t.Fatalf("Find = %v", err)
	}
}

func TestDirsSearchesRuntimeTempAndStateDirs(t *testing.T) {
	rt, tmp, state := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_STATE_HOME", state)
	want := []string{filepath.Join(rt, "pi-lsp"), filepath.Join(tmp, "pi-lsp-"+strconv.Itoa(os.Getuid())), filepath.Join(state, "pi-lsp", "bridge")}
	if got := Dirs(); !slices.Equal(got, want) {
		t.Fatalf("Dirs = %v, want %v", got, want)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	if got := Dirs(); !slices.Equal(got, want[1:]) {
		t.Fatalf("Dirs without a runtime dir = %v", got)
	}
}

// fakeBridge serves its connections with handler, which gets each request but the hello
// (answered here, and refused unless the token is "tok") and a writer.
func fakeBridge(t *testing.T, handler func(req map[string]any, send func(any)) bool) Registration {
	t.Helper()
	sock := filepath.Join(privateTemp(t), "b.sock")
	isolate.ServeSocket(t, sock, func(nc net.Conn) {
		linepeer.Serve(nc, func(req map[string]any, send func(any)) bool {
			if req["type"] != "hello" {
				return handler(req, send)
			}
			if req["token"] != "tok" {
				send(map[string]any{"type": "response", "id": req["id"], "ok": false, "error": map[string]any{"code": "unauthorized", "message": "wrong token"}})
				return false
			}
			send(map[string]any{"type": "response", "id": req["id"], "ok": true, "result": map[string]any{"protocol": 1, "pid": os.Getpid(), "idle": true}})
			return true
		})
	})
	return Registration{Protocol: 1, PID: os.Getpid(), Socket: sock, SessionFile: "s", Token: "tok"}
}

func TestDialNeedsTheToken(t *testing.T) {
	reg := fakeBridge(t, func(map[string]any, func(any)) bool { return true })
	reg.Token = "wrong"
	if _, err := Dial(context.Background(), reg); !IsCode(err, "unauthorized") {
		t.Fatalf("Dial with a wrong token: %v", err)
	}
}

func TestCompactStreamsEventsAndResult(t *testing.T) {
	reg := fakeBridge(t, func(req map[string]any, send func(any)) bool {
		id := req["id"]
		send(map[string]any{"type": "event", "id": id, "event": map[string]any{"type": "compaction_start", "reason": "manual"}})
		send(map[string]any{"type": "event", "id": id, "event": map[string]any{"type": "compaction_end", "reason": "manual", "aborted": false}})
		send(map[string]any{"type": "response", "id": id, "ok": true, "result": map[string]any{"result": map[string]any{"tokensBefore": 10}, "entry": map[string]any{"type": "compaction", "id": "c1"}, "leafId": "c1"}})
		return true
	})
	c, err := Dial(context.Background(), reg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var seen []string
	res, err := c.Compact(context.Background(), "focus", func(ev Event) { seen = append(seen, ev.Type) })
	if err != nil {
		t.Fatal(err)
	}
	if res.LeafID != "c1" || len(seen) != 2 || seen[0] != "compaction_start" || seen[1] != "compaction_end" {
		t.Errorf("Compact = %+v, events %v", res, seen)
	}
}

func TestRequestFailsClearlyWhenPiGoesAway(t *testing.T) {
	reg := fakeBridge(t, func(req map[string]any, send func(any)) bool {
		send(map[string]any{"type": "event", "id": req["id"], "event": map[string]any{"type": "compaction_start"}})
		return false // the connection closes mid-request, as when pi dies
	})
	c, err := Dial(context.Background(), reg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Compact(context.Background(), "", nil); !errors.Is(err, ErrGone) {
		t.Fatalf("Compact when pi went away: %v, want ErrGone", err)
	}
	if _, err := c.Status(context.Background()); !errors.Is(err, ErrGone) {
		t.Errorf("a request after that: %v, want ErrGone", err)
	}
}

func TestCancelAsksTheBridgeToAbort(t *testing.T) {
	cancelled := make(chan string, 1)
	reg := fakeBridge(t, func(req map[string]any, send func(any)) bool {
		switch req["type"] {
		case "compact": // runs until cancelled
		case "cancel":
			target, _ := req["target"].(string)
			cancelled <- target
			send(map[string]any{"type": "response", "id": req["id"], "ok": true, "result": map[string]any{"cancelled": true}})
			send(map[string]any{"type": "response", "id": target, "ok": false, "error": map[string]any{"code": "aborted", "message": "Compaction cancelled"}})
		}
		return true
	})
	c, err := Dial(context.Background(), reg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = c.Compact(ctx, "", nil)
	if !errors.Is(err, context.Canceled) || !IsCode(err, "aborted") {
		t.Fatalf("cancelled Compact: %v, want context.Canceled wrapping the bridge's aborted", err)
	}
	select {
	case target := <-cancelled:
		if _, err := strconv.Atoi(target); err != nil {
			t.Errorf("cancel target %q", target)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no cancel reached the bridge")
	}
}
