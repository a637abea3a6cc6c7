// Package session reads, indexes and appends to Pi session files (JSONL trees of
// entries) exactly as Pi 1.6.0 does (older files as 1.6.0 reads them).
//
// Invariants:
//   - a session file is never rewritten, truncated or edited in place: the only write is
//     an append of whole, newline-terminated lines (see Writer);
//   - every entry gives back the exact bytes it was read from (Entry.Raw), so unknown
//     entry types and unknown fields survive untouched. A loaded file is not held in
//     memory: an entry keeps its envelope, its message's metadata and its position, and
//     its bytes are read again on demand from the same file, checked to be still there
//     (a file rewritten behind pi-lsp's back is reported as ErrRewritten, never misread);
//   - no walk over parent links can loop: cycles and self-parented entries are detected
//     and reported, never followed twice;
//   - a loaded Entry and its Message may be read from several goroutines: what is decoded
//     lazily (a message, its content, a preview) is decoded once under a sync.Once or an
//     atomic. An Index is not safe for concurrent mutation (Append) while it is read;
//   - a job (a compaction, a navigation) computes on a Snapshot and appends with it: the
//     append refuses (ErrChanged, nothing written) unless the file is still the one the
//     snapshot read, at the size it read. A snapshot never changes and may be read from
//     several goroutines, also while the Live it was taken from is refreshed: Live then
//     never changes an entry the snapshot shares (see Live.Refresh).
//
// The package knows nothing about editors or JSON-RPC; it exposes plain Go values.
package session
