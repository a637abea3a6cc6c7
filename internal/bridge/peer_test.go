//go:build linux

package bridge

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperForeignListener is the listener of another user (run by
// TestDialSendsNoTokenToAnotherUsersSocket as uid 65534): it listens at the socket named
// by PI_LSP_FOREIGN_SOCKET, and writes what its one client sends to
// PI_LSP_FOREIGN_GOT.
func TestHelperForeignListener(t *testing.T) {
	sock := os.Getenv("PI_LSP_FOREIGN_SOCKET")
	if sock == "" {
		t.Skip("a helper process")
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("listening\n")
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(3 * time.Second))
	got, _ := io.ReadAll(nc)
	_ = os.WriteFile(os.Getenv("PI_LSP_FOREIGN_GOT"), got, 0o666)
}

// A registration whose socket another user listens on gets no token: Dial refuses it
// (ErrForeignPeer) from the socket's peer credentials before the hello, and the listener
// receives nothing. (It used to receive the hello with the token.)
func TestDialSendsNoTokenToAnotherUsersSocket(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run a listener as another user")
	}
	dir, err := os.MkdirTemp("", "plpeer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	sock, got := filepath.Join(dir, "foreign.sock"), filepath.Join(dir, "got")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	bin := filepath.Join(dir, "helper")
	exe, err := os.ReadFile(os.Args[0]) // the test binary, where the other user may run it
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestHelperForeignListener$")
	cmd.Env = append(os.Environ(), "PI_LSP_FOREIGN_SOCKET="+sock, "PI_LSP_FOREIGN_GOT="+got)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}, Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot run a process as uid 65534: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	buf := make([]byte, 10)
	if n, _ := io.ReadAtLeast(out, buf, len("listening")); n == 0 {
		t.Fatal("the helper did not listen")
	}
	_, err = Dial(ctx, Registration{Protocol: 1, PID: cmd.Process.Pid, Socket: sock, SessionFile: "s", Token: "secret-token"})
	if !errors.Is(err, ErrForeignPeer) {
		t.Errorf("Dial to another user's socket: %v, want ErrForeignPeer", err)
	}
	_ = cmd.Wait()
	data, _ := os.ReadFile(got)
	if strings.Contains(string(data), "secret-token") || len(data) != 0 {
		t.Errorf("the foreign listener received %q", data)
	}
	t.Logf("RESULT bridge peer check: Dial to a uid-65534 listener refused (%v); it received %d bytes", err, len(data))
}

// The check itself, as any user: a listener that is not ownUID's is refused before the
// hello.
func TestDialChecksThePeerBeforeTheHello(t *testing.T) {
	reg := fakeBridge(t, func(map[string]any, func(any)) bool { return true })
	if _, err := Dial(context.Background(), reg); err != nil {
		t.Fatalf("Dial to our own listener: %v", err)
	}
	me := ownUID()
	ownUID = func() int { return me + 1 }
	t.Cleanup(func() { ownUID = os.Getuid })
	reg = fakeBridge(t, func(map[string]any, func(any)) bool { return true })
	if _, err := Dial(context.Background(), reg); !errors.Is(err, ErrForeignPeer) {
		t.Fatalf("Dial to a listener of uid %d as uid %d: %v, want ErrForeignPeer", me, me+1, err)
	}
}

// A registration whose socket path is longer than sun_path (108 bytes) is reached
// through a short link: Find counts it as live and Dial says hello through it. (Its
// connect used to fail with EINVAL while Find counted it live, so writes failed instead
// of falling back.)
func TestLongSocketPathIsReached(t *testing.T) {
	dir := privateTemp(t)
	short := filepath.Join(dir, "s")
	if err := os.Mkdir(short, 0o700); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, strings.Repeat("d", 120))
	if err := os.Symlink(short, long); err != nil {
		t.Fatal(err)
	}
	reg := fakeBridge(t, func(map[string]any, func(any)) bool { return true })
	// fakeBridge listens in its own dir: put a link to its socket at the long path.
	if err := os.Symlink(reg.Socket, filepath.Join(short, "b.sock")); err != nil {
		t.Fatal(err)
	}
	reg.Socket = filepath.Join(long, "b.sock")
	if len(reg.Socket) < maxSunPath {
		t.Fatalf("the path %q is not long enough", reg.Socket)
	}
	c, err := Dial(context.Background(), reg)
	if err != nil {
		t.Fatalf("Dial through a %d-byte socket path: %v", len(reg.Socket), err)
	}
	c.Close()
	listen(t, filepath.Join(short, "h.sock"))
	if !accepts(context.Background(), Registration{Socket: filepath.Join(long, "h.sock")}) {
		t.Error("a listening socket at a long path is not live")
	}
	// No one listening at a long path: not live, so that a write falls back.
	dead := Registration{Socket: filepath.Join(long, "none.sock")}
	if accepts(context.Background(), dead) {
		t.Error("a long path with no socket is live")
	}
	t.Logf("RESULT bridge long path: a %d-byte socket path (sun_path %d) reached through a short link", len(reg.Socket), maxSunPath)
}
