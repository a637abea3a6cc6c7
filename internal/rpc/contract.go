package rpc

import (
	"reflect"

	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The wire as the generator (internal/rpc/internal/gen, run by `go generate
// ./internal/rpc`) and the shape tests read it, beyond the tables of commands.go: the
// client's settings, the session entries the results carry, and the named TypeScript
// types that no Go struct declares. Nothing here is used to serve; it only describes.

// Alias is a named type of the wire that no Go struct declares (a ts tag names it).
type Alias struct {
	Name string
	Doc  string
	// Values make it a union of these string literals; TS is its TypeScript otherwise.
	Values []string
	TS     string
}

// Aliases lists the named types the ts tags of the wire types use.
func Aliases() []Alias {
	return []Alias{
		{Name: "ProgressToken", Doc: "LSP's work-done progress token.", TS: "number | string"},
		{Name: "AgentMessage", Doc: "One of Pi's AgentMessages (user, assistant, toolResult, custom ...), exactly as the session file stores it.",
			TS: "{ role: string; [key: string]: unknown }"},
		{Name: "EntryType", Doc: "The type of a session entry of Pi 1.6.0 (a tree node passes the file's on).",
			Values: []string{session.TypeMessage, session.TypeThinkingLevelChange, session.TypeModelChange, session.TypeUsage,
				session.TypeCompaction, session.TypeBranchSummary, session.TypeCustom, session.TypeCustomMessage,
				session.TypeContextEdit, session.TypeLabel, session.TypeSessionInfo}},
		{Name: "MessageRole", Doc: "The role of a message of Pi 1.6.0 (a tree node passes the file's on).",
			Values: []string{session.RoleUser, session.RoleAssistant, session.RoleToolResult, session.RoleBashExecution,
				session.RoleCustom, session.RoleBranchSummary, session.RoleCompactionSummary, session.RoleSystem}},
		{Name: "ContextEditState", Doc: "How the latest context_edit of an entry changes its content in the context: hidden, or replaced.",
			Values: []string{string(contextedit.Omitted), string(contextedit.Replaced)}},
	}
}

// Settings are the types of the client's settings: initializationOptions, which is
// also the flat form of didChangeConfiguration's settings, and the nested form VS Code
// sends there.
func Settings() (flat, nested reflect.Type) {
	return reflect.TypeFor[config](), reflect.TypeFor[settingsTree]()
}

// Entries are the session entries pi-lsp writes (the results carry some as the file
// holds them), in the docs' order.
func Entries() []reflect.Type {
	return []reflect.Type{
		reflect.TypeFor[session.MessageEntry](), reflect.TypeFor[session.CompactionEntry](),
		reflect.TypeFor[session.BranchSummaryEntry](), reflect.TypeFor[session.ContextEditEntry](),
		reflect.TypeFor[session.LabelEntry](), reflect.TypeFor[session.CustomEntry](),
	}
}
