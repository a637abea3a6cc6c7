package service

import (
	"context"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Sessions is how a job reads the session it works on and keeps other jobs of its
// process off it. The server reads its followed index (nothing is parsed again for a
// job) and serializes the jobs of a session on one lock; the CLI (a nil Config.Sessions)
// reads the file: the header line alone to decide where a write goes, then one snapshot.
type Sessions interface {
	// Cwd is the cwd of the session's header ("" when it has none).
	Cwd(path string) string
	// Snapshot is the session as the job computes on it and appends with it.
	Snapshot(path string) (*session.Snapshot, error)
	// Lock waits for the session's job lock unless ctx ends first.
	Lock(ctx context.Context, path string) (unlock func(), err error)
}

// files is Sessions over the files themselves, with no lock of its own (a session's
// appends are serialized by the file lock of session.Snapshot.Append).
type files struct{}

func (files) Cwd(path string) string                          { return session.HeaderCwd(path) }
func (files) Snapshot(path string) (*session.Snapshot, error) { return session.LoadSnapshot(path) }
func (files) Lock(context.Context, string) (func(), error)    { return func() {}, nil }

func (c Config) sessions() Sessions {
	if c.Sessions != nil {
		return c.Sessions
	}
	return files{}
}

// Via says who wrote a job's entries.
type Via string

const (
	// ViaFile: pi-lsp appended them to the file.
	ViaFile Via = ""
	// ViaPi: the live pi that holds the session wrote them, asked through pi-lsp's bridge.
	ViaPi Via = "pi"
)

// leafOr is leaf, or the session's leaf when leaf is "".
func leafOr(ix *session.Index, leaf string) string {
	if leaf == "" {
		return ix.LeafID()
	}
	return leaf
}

// begin is the first step of every job that writes: where the write goes (RouteWrite;
// bridged: the job can be handed to a live pi) and, when it is written here, the
// session's job lock, which done releases.
func (c Config) begin(ctx context.Context, path string, force, bridged bool) (r Route, done func(), err error) {
	if r, err = c.RouteWrite(ctx, path, c.sessions().Cwd(path), force, bridged); err != nil || r.Bridge != nil {
		return r, func() {}, err
	}
	done, err = c.sessions().Lock(ctx, path)
	return r, done, err
}
