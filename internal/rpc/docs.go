package rpc

import (
	"fmt"
	"strings"
)

// Markers around the generated part of docs/protocol.md.
const (
	DocsBegin = "<!-- BEGIN GENERATED COMMANDS (pi-lsp commands --markdown) -->"
	DocsEnd   = "<!-- END GENERATED COMMANDS -->"
)

// CommandsMarkdown renders the command table as the commands section of
// docs/protocol.md, between its markers: the shapes are those of the Go types (the
// types they name are declared in the section between the TYPES markers).
func CommandsMarkdown() string {
	var b strings.Builder
	s := newShaper()
	b.WriteString(DocsBegin + "\n\n")
	b.WriteString("| command | request | VS Code title | Neovim | progress |\n|---|---|---|---|---|\n")
	for _, c := range commandTable {
		long := ""
		if c.Long {
			long = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | `:%s` | %s |\n", c.ID, c.Method, c.Title, c.Neovim, long)
	}
	for _, c := range commandTable {
		fmt.Fprintf(&b, "\n### `%s` / `%s`\n\n%s\n\n", c.ID, c.Method, c.Summary)
		fmt.Fprintf(&b, "```ts\nparams: %s\nresult: %s\n```\n", s.object(c.Params, read), s.union(c.Result, sent))
	}
	b.WriteString("\n" + DocsEnd + "\n")
	return b.String()
}
