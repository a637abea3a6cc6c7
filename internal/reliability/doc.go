// Package reliability holds pi-lsp's cross-cutting reliability tests (no production
// code): crash safety under SIGKILL, concurrent writers with a real pi process,
// cancellation at every phase, path and network boundaries, secrets, and load. The
// figures of one full run are in docs/RELIABILITY.md.
package reliability
