package rpc

import (
	"encoding/json"

	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/fileops"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// memoEntry is a request answer computed for one state of a session.
type memoEntry struct {
	key string
	raw json.RawMessage
}

// stateKey names the state of an index: it changes whenever the index or its leaf does.
func stateKey(ix *session.Index) string {
	return fmt.Sprintf("%p/%d/%s", ix, len(ix.Entries()), ix.LeafID())
}

// readRecords is fileops.LastReads of a session's leaf path in the index state named
// key, computed once per state: the texts it hashes are read back from the session file,
// and the stale-file watcher asks every few seconds.
func (h *host) readRecords(path, key string, leafPath []*session.Entry) []fileops.ReadRecord {
	st := h.state(path)
	h.mu.Lock()
	m := st.reads
	h.mu.Unlock()
	if m.key != "" && m.key == key {
		return m.recs
	}
	recs := fileops.LastReads(leafPath)
	h.mu.Lock()
	st.reads = readsMemo{key: key, recs: recs}
	h.mu.Unlock()
	return recs
}

type readsMemo struct {
	key  string
	recs []fileops.ReadRecord
}

// encodedJSON is an answer encoded by encoding/json once (so valid), sent as it is.
type encodedJSON []byte

// MarshalJSON is the identity: the bytes are valid JSON already.
func (e encodedJSON) MarshalJSON() ([]byte, error) { return e, nil }

// memo returns the JSON answer named name for the session's current state, computing it
// only when the session changed since: concurrent readers of a large, unchanged session
// share one computation and one encoding. Call it with the session locked (withIndex).
func memo[T any](h *host, path, name string, ix *session.Index, compute func() (T, error)) (Encoded[T], error) {
	key := stateKey(ix)
	h.mu.Lock()
	st := h.stateLocked(path)
	m := st.memos[name]
	h.mu.Unlock()
	if m != nil && m.key == key {
		return Encoded[T](m.raw), nil
	}
	v, err := compute()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	st.memos[name] = &memoEntry{key: key, raw: raw}
	h.mu.Unlock()
	return Encoded[T](raw), nil
}

// withIndex runs fn on the session's followed index, first brought up to date with
// the file, under the session's lock. The index and its entries (which cache what they
// decode) are not safe for concurrent use, so they are only ever touched inside fn.
// fn may be nil (refresh only); it must not call back into withIndex.
func (h *host) withIndex(path string, fn func(ix *session.Index) error) error {
	if fn == nil {
		return h.withLive(path, nil)
	}
	return h.withLive(path, func(l *session.Live) error { return fn(l.Index) })
}

// snapshot is the session's followed index, first brought up to date with the file, as
// a snapshot for a job: the job computes on it and appends with it while the followed
// index goes on following the file, and no refresh changes what the job sees (see
// session.Live.Snapshot).
func (h *host) snapshot(path string) (*session.Snapshot, error) {
	var snap *session.Snapshot
	err := h.withLive(path, func(l *session.Live) (err error) {
		snap, err = l.Snapshot()
		return err
	})
	return snap, err
}

// withLive is withIndex with the followed session itself.
func (h *host) withLive(path string, fn func(l *session.Live) error) error {
	st := h.state(path)
	st.indexMu.Lock()
	defer st.indexMu.Unlock()
	h.mu.Lock()
	l := st.live
	h.mu.Unlock()
	if l == nil {
		var err error
		if l, err = session.OpenLive(path); err != nil {
			return err
		}
		h.mu.Lock()
		st.live = l
		h.mu.Unlock()
	} else if _, err := l.Refresh(); err != nil {
		h.mu.Lock()
		st.live = nil
		h.mu.Unlock()
		return err
	}
	if fn == nil {
		return nil
	}
	return fn(l)
}

// refresh brings a session's index up to date with its file.
func (h *host) refresh(path string) error { return h.withIndex(path, nil) }

// cwdOf is the working directory in a session's header ("" if unreadable).
func (h *host) cwdOf(path string) string {
	cwd := ""
	_ = h.withIndex(path, func(ix *session.Index) error { cwd = ix.File.Header.Cwd; return nil })
	return cwd
}
