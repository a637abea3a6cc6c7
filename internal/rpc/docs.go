package rpc

// Markers around the generated commands section of docs/protocol.md.
const (
	DocsBegin = "<!-- BEGIN GENERATED COMMANDS (pi-lsp commands --markdown) -->"
	DocsEnd   = "<!-- END GENERATED COMMANDS -->"
)

// CommandsMarkdown is the commands section of docs/protocol.md, between its markers:
// the command table and the shapes of each command's params and result (the types they
// name are declared in the section between the TYPES markers). `go generate
// ./internal/rpc` renders it from the Go types (commands_markdown.go).
func CommandsMarkdown() string { return commandsMarkdown }
