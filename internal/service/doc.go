// Package service is the application layer between pi-lsp's two front ends, the LSP
// server (internal/rpc) and the terminal commands (cmd/pi-lsp), and the domain packages.
// It holds the policy both of them apply to a session:
//   - the settings and summarizer of a job (Pi's settings files, the front end's own
//     overrides, the environment), resolved for the model of the path being worked on;
//   - where a write goes (Route): into the file here, to a live pi through pi-lsp's
//     bridge, or refused because a running pi holds the session;
//   - the read models both show (the entry tree, the sessions of a project).
//
// Invariant: each rule is decided here once, and neither front end keeps one of its
// own; the package knows nothing of JSON-RPC, LSP or terminals (errors are typed Go
// errors that each front end renders).
package service
