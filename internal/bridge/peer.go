package bridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// A registration names a socket; the token goes to whoever listens there. Before the
// hello, the socket's other end must be this user's: its peer credentials (SO_PEERCRED
// on Linux, LOCAL_PEERCRED on darwin and FreeBSD) name the listening process's user.
// Where the system gives no peer credentials, the socket file's owner stands in for
// them (a socket in a directory only this user may enter, as the registry checks).
//
// A socket path longer than the system's sun_path (108 bytes on Linux, 104 on darwin
// and the BSDs) cannot be connected to by name: it is reached through a symlink in a
// private temporary directory (connect follows links), and where even that path is too
// long the registration is not live, so that writes fall back to the file.

// ErrForeignPeer refuses a socket whose listener is another user's.
var ErrForeignPeer = errors.New("the bridge socket is another user's")

// ErrPathTooLong refuses a socket path that cannot be reached even through a short link.
var ErrPathTooLong = errors.New("the bridge socket path is longer than the system allows")

// ownUID is the user a bridge's listener must be (a variable for the tests).
var ownUID = os.Getuid

// checkPeer refuses nc unless the process listening at its other end is this user's.
func checkPeer(nc net.Conn, socket string) error {
	uid, err := peerUID(nc)
	if errors.Is(err, errNoPeerCred) {
		// No peer credentials on this system: the socket file's owner.
		st, serr := os.Lstat(socket)
		if serr != nil {
			return fmt.Errorf("bridge: %s: %w", socket, serr)
		}
		var ok bool
		if uid, ok = fileUID(st); !ok {
			return nil // no owners at all (see sys_other.go)
		}
	} else if err != nil {
		return fmt.Errorf("bridge: peer credentials of %s: %w", socket, err)
	}
	if uid != ownUID() {
		return fmt.Errorf("bridge: %s: %w (uid %d)", socket, ErrForeignPeer, uid)
	}
	return nil
}

// errNoPeerCred: the system gives no peer credentials (see peerUID).
var errNoPeerCred = errors.New("no peer credentials on this system")

// dialSocket connects to the Unix socket at path, through a short link when the path is
// longer than sun_path allows.
func dialSocket(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	if len(path) < maxSunPath {
		return d.DialContext(ctx, "unix", path)
	}
	link, cleanup, err := shortLink(path)
	if err != nil {
		return nil, err
	}
	defer cleanup() // the connection, once made, no longer needs the name
	return d.DialContext(ctx, "unix", link)
}

// shortLink makes a symlink to path in a fresh private directory (mode 0700) under the
// temporary directory, or under /tmp when that one's path is too long itself.
func shortLink(path string) (string, func(), error) {
	for _, base := range []string{os.TempDir(), "/tmp"} {
		if len(base)+len("/pi-lsp-0123456789/s") >= maxSunPath {
			continue
		}
		dir, err := os.MkdirTemp(base, "pi-lsp-")
		if err != nil {
			continue
		}
		link := filepath.Join(dir, "s")
		if err := os.Symlink(path, link); err != nil {
			os.RemoveAll(dir)
			continue
		}
		return link, func() { os.RemoveAll(dir) }, nil
	}
	return "", nil, fmt.Errorf("bridge: %s: %w (%d bytes, %d at most)", path, ErrPathTooLong, len(path), maxSunPath-1)
}
