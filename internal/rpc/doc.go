// Package rpc is pi-lsp's LSP server: the only package that knows JSON-RPC and LSP.
//
// Invariants:
//   - lifecycle messages and notifications are handled in wire order on the read loop;
//     every other request runs in its own goroutine with a context that $/cancelRequest
//     (string or numeric id), window/workDoneProgress/cancel and shutdown cancel;
//   - every request is answered exactly once, and never with error code 0;
//   - every long job reports through one progress Tracker: begin (at 0%), throttled
//     reports, and an end that is always sent, also after cancellation or failure;
//   - stdout carries only framed JSON-RPC messages; logs go to stderr and
//     window/logMessage.
//
// The domain packages (session, fileops, compaction, branch) are called with plain Go
// values; this package converts at the boundary. What crosses the wire is typed once:
// the command table (commands.go) names the Go type of every request's params and
// result, every notification and every hook (protocol_types.go), and
// `go generate ./internal/rpc` derives docs/protocol.md, the README table and the
// editors' protocol files from them, with the settings, entries and aliases contract.go
// names (the generator is internal/rpc/internal/gen, run from generate.go; the server
// does not link it).
package rpc

//go:generate go run generate.go -root ../..
