package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// A running pi keeps its session's leaf in memory: an entry another process appends
// becomes a dead branch at pi's next write. So a write to a session a live pi holds is
// either handed to that pi (when it loaded pi-lsp's bridge and the bridge can do the
// operation) or refused unless forced.

// LoadBridgeHint is how a user makes a running pi drivable from pi-lsp.
const LoadBridgeHint = "load pi-lsp's Pi extension in that pi (pi -e <pi-lsp>/editors/pi/extension.ts, or once: pi install <pi-lsp>/editors/pi), close it, or force the write"

// ErrOwned: a running pi holds the session (errors.Is on a *Refusal).
var ErrOwned = errors.New("session is in use by a running pi process")

// Refusal is a write refused because a running pi holds the session.
type Refusal struct {
	PID int
	// Bridge: that pi has pi-lsp's bridge, which cannot do this operation.
	Bridge bool
	// Searched are the registry dirs looked in, when no bridge was found.
	Searched []string
}

func (r *Refusal) Error() string {
	if r.Bridge {
		return fmt.Sprintf("%v (pid %d); its pi-lsp bridge cannot do this (Pi's extension API has no call for it): do it in pi, close it, or force the write", ErrOwned, r.PID)
	}
	return fmt.Sprintf("%v (pid %d) without pi-lsp's bridge (no bridge registration for this session in %s); %s",
		ErrOwned, r.PID, strings.Join(r.Searched, ", "), LoadBridgeHint)
}

func (r *Refusal) Unwrap() error { return ErrOwned }

// Route is where a write goes: Bridge is the live pi to hand it to, or nil to write here.
type Route struct {
	Bridge *bridge.Registration
}

// bridgeDirs are the registry dirs of c.
func (c Config) bridgeDirs() []string {
	if c.BridgeDirs != nil {
		return c.BridgeDirs
	}
	return bridge.Dirs()
}

// Bridge is the live pi with pi-lsp's bridge that holds path, or nil. A stale
// registration (its pi gone, its pid reused, its socket refusing) is removed by the
// lookup and counts as none.
func (c Config) Bridge(ctx context.Context, path string) *bridge.Registration {
	reg, err := bridge.Find(ctx, path, c.bridgeDirs()...)
	if err != nil {
		return nil
	}
	return reg
}

// RouteWrite decides where a write to the session at path (header cwd cwd) goes. A
// session whose format is newer than Pi 1.6.0's is read-only (a
// *session.NewerVersionError), forced or not. With force it is written here. Otherwise
// a live pi with the bridge gets it when bridged is true (the bridge can do the
// operation), and a running pi refuses it (a *Refusal) when it cannot; a live pi whose
// bridge speaks another protocol refuses it with both named (a *bridge.ProtocolError).
func (c Config) RouteWrite(ctx context.Context, path, cwd string, force, bridged bool) (Route, error) {
	if err := session.CheckWritable(path); err != nil {
		return Route{}, err
	}
	if force {
		return Route{}, nil
	}
	reg, err := bridge.Find(ctx, path, c.bridgeDirs()...)
	var pe *bridge.ProtocolError
	if errors.As(err, &pe) {
		return Route{}, err
	}
	if reg != nil {
		if bridged {
			return Route{Bridge: reg}, nil
		}
		return Route{}, &Refusal{PID: reg.PID, Bridge: true}
	}
	if pid := session.OwnerPID(path, cwd); pid > 0 {
		return Route{}, &Refusal{PID: pid, Searched: c.bridgeDirs()}
	}
	return Route{}, nil
}

// Owner is the running pi that holds a session.
type Owner struct {
	PID       int
	Bridge    bool   // it has pi-lsp's bridge
	PiVersion string // with the bridge: the version it registered
}

// OwnerOf is the running pi that holds the session at path, or nil.
func (c Config) OwnerOf(ctx context.Context, path, cwd string) *Owner {
	if reg := c.Bridge(ctx, path); reg != nil {
		return &Owner{PID: reg.PID, Bridge: true, PiVersion: reg.PiVersion}
	}
	if pid := session.OwnerPID(path, cwd); pid > 0 {
		return &Owner{PID: pid}
	}
	return nil
}

// DialBridge connects to the live pi of reg (bounded: a pi that does not answer its
// hello within 10 s is not waited for).
func DialBridge(ctx context.Context, reg *bridge.Registration) (*bridge.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return bridge.Dial(dctx, *reg)
}
