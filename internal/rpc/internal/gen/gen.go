// Package gen renders the files generated from the wire's Go types: internal/rpc's
// command, notification and hook tables and their params and results, the client's
// settings, the session entries the results carry (internal/session), and the bridge
// protocol (internal/bridge). internal/rpc/generate.go (`go generate ./internal/rpc`)
// writes them; a test of internal/rpc fails while a file on disk differs from what
// Generate renders.
//
// It reads the Go doc comments of the types with go/parser, which is why it lives
// here and not in internal/rpc: nothing the server runs links it.
package gen

import (
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
)

// The files generated, relative to the repository. Generate rewrites only the parts
// between markers in the first three, and the whole of the others.
const (
	ProtocolDoc  = "docs/protocol.md"
	ReadmeFile   = "README.md"
	VSCodeTypes  = "editors/vscode/src/protocol.ts"
	NeovimTables = "editors/neovim/lua/pi_lsp/protocol.lua"
	BridgeTypes  = "editors/pi/protocol.ts"
	// CommandsGo holds the commands section of docs/protocol.md for `pi-lsp commands
	// --markdown` (rpc.CommandsMarkdown), so the server needs no generator to print it.
	CommandsGo = "internal/rpc/commands_markdown.go"
)

// Generate renders every generated file from the checked-in files under root (the
// repository root): path -> new content.
func Generate(root string) (map[string]string, error) {
	docs, err := parseDocs(root, documentedTypes())
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	load := func(p string) (string, error) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		return string(b), err
	}

	doc, err := load(ProtocolDoc)
	if err != nil {
		return nil, err
	}
	if doc, err = protocolDoc(doc, docs); err != nil {
		return nil, fmt.Errorf("%s: %w", ProtocolDoc, err)
	}
	out[ProtocolDoc] = doc

	readme, err := load(ReadmeFile)
	if err != nil {
		return nil, err
	}
	if out[ReadmeFile], err = spliceMD(readme, "COMMAND TABLE", readmeTable()); err != nil {
		return nil, fmt.Errorf("%s: %w", ReadmeFile, err)
	}

	ts, err := load(VSCodeTypes)
	if err != nil {
		return nil, err
	}
	if out[VSCodeTypes], err = splice(ts, tsBegin, tsEnd, typeScript(docs)); err != nil {
		return nil, fmt.Errorf("%s: %w", VSCodeTypes, err)
	}
	out[NeovimTables] = lua()
	out[BridgeTypes] = bridgeTypeScript(docs)
	if out[CommandsGo], err = commandsGo(); err != nil {
		return nil, err
	}
	return out, nil
}

// protocolDoc rewrites the generated sections of docs/protocol.md.
func protocolDoc(doc string, docs map[string]string) (string, error) {
	doc, err := splice(doc, rpc.DocsBegin, rpc.DocsEnd, CommandsMarkdown())
	if err != nil {
		return "", err
	}
	s := newShaper(aliasNames()...)
	for _, c := range rpc.Requests() {
		body := fmt.Sprintf("```ts\nparams: %s\nresult: %s\n```\n", s.object(c.Params, read), s.union(c.Result, sent))
		if doc, err = spliceMD(doc, c.Method, body); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	for _, n := range rpc.Notifications() {
		fmt.Fprintf(&b, "### `%s`\n\n%s\n\n```ts\n// params\n%s```\n\n", n.Method, n.Summary, declare(s, docs, n.Params, sent))
	}
	if doc, err = spliceMD(doc, "NOTIFICATIONS", strings.TrimSuffix(b.String(), "\n")); err != nil {
		return "", err
	}
	b.Reset()
	for _, h := range rpc.Hooks() {
		fmt.Fprintf(&b, "### `%s`\n\n%s\n\n```ts\nparams: %s\nresult: null | %s\n```\n\n", h.Method, h.Summary, s.object(h.Params, sent), s.object(h.Result, read))
	}
	if doc, err = spliceMD(doc, "HOOKS", strings.TrimSuffix(b.String(), "\n")); err != nil {
		return "", err
	}

	// The settings, with their own types.
	flat, nested := rpc.Settings()
	set := newShaper()
	set.ref(flat, read)
	set.ref(nested, read)
	b.Reset()
	b.WriteString("```ts\n")
	for i, t := range set.order {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(declare(set, docs, t, read))
	}
	b.WriteString("```\n")
	if doc, err = spliceMD(doc, "SETTINGS", b.String()); err != nil {
		return "", err
	}

	// The shapes above name these types; the command section names its own too, and
	// the entries are declared whether a result names them or not.
	for _, c := range rpc.Commands() {
		s.object(c.Params, read)
		s.union(c.Result, sent)
	}
	for _, t := range rpc.Entries() {
		s.ref(t, sent)
	}
	b.Reset()
	b.WriteString("```ts\n")
	b.WriteString(aliases(s, true))
	b.WriteString("\n" + entryUnion())
	for _, t := range sortedByName(s.order) {
		b.WriteString("\n" + declare(s, docs, t, s.roles[t]))
	}
	b.WriteString("```\n")
	if doc, err = spliceMD(doc, "TYPES", b.String()); err != nil {
		return "", err
	}

	if doc, err = spliceMD(doc, "BRIDGE", bridgeMarkdown(docs)); err != nil {
		return "", err
	}
	if doc, err = spliceMD(doc, "CLI ANSWERS", cliMarkdown(docs)); err != nil {
		return "", err
	}
	return doc, nil
}

// cliShapes registers the types of the CLI's --json answers.
func cliShapes() *shaper {
	s := newShaper(aliasNames()...)
	for _, a := range rpc.CLIAnswers() {
		s.ref(a.Type, sent)
	}
	return s
}

// cliMarkdown is the CLI section of docs/protocol.md: which command answers which
// shape, and the shapes the server does not already declare.
func cliMarkdown(docs map[string]string) string {
	var b strings.Builder
	b.WriteString("| command (`--json`) | answer | what it says |\n|---|---|---|\n")
	for _, a := range rpc.CLIAnswers() {
		fmt.Fprintf(&b, "| `pi-lsp %s` | `%s` | %s |\n", a.Command, tsName(a.Type), a.Summary)
	}
	server := wireShapes()
	for _, c := range rpc.Commands() {
		server.object(c.Params, read)
		server.union(c.Result, sent)
	}
	for _, t := range rpc.Entries() {
		server.ref(t, sent)
	}
	declared := map[string]bool{}
	for _, t := range server.order {
		declared[tsName(t)] = true
	}
	s := cliShapes()
	b.WriteString("\n```ts\n")
	first := true
	for _, t := range s.order {
		if declared[tsName(t)] {
			continue // declared with the server's shapes
		}
		if !first {
			b.WriteString("\n")
		}
		first = false
		b.WriteString(declare(s, docs, t, sent))
	}
	b.WriteString("```\n")
	return b.String()
}

// CommandsMarkdown renders the command table as the commands section of
// docs/protocol.md, between its markers: the shapes are those of the Go types (the
// types they name are declared in the section between the TYPES markers).
func CommandsMarkdown() string {
	var b strings.Builder
	s := newShaper()
	b.WriteString(rpc.DocsBegin + "\n\n")
	b.WriteString("| command | request | VS Code title | Neovim | progress |\n|---|---|---|---|---|\n")
	for _, c := range rpc.Commands() {
		long := ""
		if c.Long {
			long = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | `:%s` | %s |\n", c.ID, c.Method, c.Title, c.Neovim, long)
	}
	for _, c := range rpc.Commands() {
		fmt.Fprintf(&b, "\n### `%s` / `%s`\n\n%s\n\n", c.ID, c.Method, c.Summary)
		fmt.Fprintf(&b, "```ts\nparams: %s\nresult: %s\n```\n", s.object(c.Params, read), s.union(c.Result, sent))
	}
	b.WriteString("\n" + rpc.DocsEnd + "\n")
	return b.String()
}

// commandsGo is internal/rpc's copy of the commands section.
func commandsGo() (string, error) {
	var b strings.Builder
	b.WriteString("// Code generated by `go generate ./internal/rpc` (internal/rpc/internal/gen). DO NOT EDIT.\n\n")
	b.WriteString("package rpc\n\n")
	b.WriteString("// commandsMarkdown is the commands section of docs/protocol.md (CommandsMarkdown).\n")
	b.WriteString("const commandsMarkdown = ")
	lines := strings.SplitAfter(CommandsMarkdown(), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if i > 0 {
			b.WriteString(" +\n\t")
		}
		b.WriteString(strconv.Quote(l))
	}
	b.WriteString("\n")
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return "", fmt.Errorf("%s: %w", CommandsGo, err)
	}
	return string(src), nil
}

const (
	tsBegin = "// BEGIN GENERATED (go generate ./internal/rpc): edit internal/rpc, not below"
	tsEnd   = "// END GENERATED"
)

func mdBegin(name string) string {
	return "<!-- BEGIN GENERATED " + name + " (go generate ./internal/rpc) -->"
}
func mdEnd(name string) string { return "<!-- END GENERATED " + name + " -->" }

func spliceMD(doc, name, body string) (string, error) {
	return splice(doc, mdBegin(name), mdEnd(name), mdBegin(name)+"\n\n"+body+"\n"+mdEnd(name)+"\n")
}

// splice replaces the text from the line begin to the line end (both included) with
// block, which carries the markers itself.
func splice(doc, begin, end, block string) (string, error) {
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %q ... %q markers", begin, end)
	}
	j += len(end)
	if j < len(doc) && doc[j] == '\n' {
		j++
	}
	return doc[:i] + block + doc[j:], nil
}

// readmeTable is the README's command table.
func readmeTable() string {
	var b strings.Builder
	b.WriteString("| command | palette title | Neovim |\n|---|---|---|\n")
	for _, c := range rpc.Commands() {
		usage := c.NeovimUsage
		if usage == "" {
			usage = ":" + c.Neovim
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` |\n", c.ID, c.Title, strings.ReplaceAll(usage, "|", `\|`))
	}
	return b.String()
}

// allRequests is every custom request: the commands', then the others.
func allRequests() []rpc.Command { return append(rpc.Commands(), rpc.Requests()...) }

// typeScript is the generated part of the VS Code extension's protocol.ts.
func typeScript(docs map[string]string) string {
	var b strings.Builder
	b.WriteString(tsBegin + "\n\n")
	b.WriteString("/** The server's commands (workspace/executeCommand ids). */\nexport const Commands = {\n")
	for _, c := range rpc.Commands() {
		fmt.Fprintf(&b, "  %s: %q,\n", strings.TrimPrefix(c.ID, "pi."), c.ID)
	}
	b.WriteString("} as const;\n\nexport type CommandId = (typeof Commands)[keyof typeof Commands];\n\n")
	b.WriteString("/** The custom requests: `pi/<name>` mirrors the command `pi.<name>`. */\nexport const Methods = {\n")
	for _, c := range allRequests() {
		fmt.Fprintf(&b, "  %s: %q,\n", strings.TrimPrefix(c.Method, "pi/"), c.Method)
	}
	b.WriteString("} as const;\n\n/** The custom notifications the server sends. */\nexport const Notifications = {\n")
	for _, n := range rpc.Notifications() {
		fmt.Fprintf(&b, "  %s: %q,\n", strings.TrimPrefix(n.Method, "pi/"), n.Method)
	}
	b.WriteString("} as const;\n\n/** The requests the server sends a client that declared hooks. */\nexport const Hooks = {\n")
	for _, h := range rpc.Hooks() {
		fmt.Fprintf(&b, "  %s: %q,\n", strings.TrimPrefix(h.Method, "pi/"), h.Method)
	}
	b.WriteString("} as const;\n")

	s := wireShapes()
	var unions []string
	for _, c := range allRequests() {
		names := make([]string, len(c.Result))
		for i, t := range c.Result {
			names[i] = tsName(t)
		}
		switch {
		case len(names) > 1:
			// Exclusive: a member reads the others' keys as undefined, so code can test
			// any of them without narrowing first.
			unions = append(unions, fmt.Sprintf("/** %s result. */\nexport type %s = Exclusive<%s>;\n", c.Method, c.ResultName, strings.Join(names, " | ")))
		case c.ResultName != "":
			unions = append(unions, fmt.Sprintf("/** %s result. */\nexport type %s = %s;\n", c.Method, c.ResultName, names[0]))
		}
	}
	b.WriteString("\n" + aliases(s, false))
	b.WriteString("\n" + entryUnion())
	for _, t := range s.order {
		b.WriteString("\n" + declare(s, docs, t, s.roles[t]))
	}
	for _, u := range unions {
		b.WriteString("\n" + u)
	}
	b.WriteString("\n" + tsEnd + "\n")
	return b.String()
}

// wireShapes is a shaper that has registered every shape of the tables, in table order:
// the params and results of the requests, the notifications, the hooks and their
// answers, then the settings and the entries.
func wireShapes() *shaper {
	s := newShaper(aliasNames()...)
	for _, c := range allRequests() {
		s.ref(c.Params, read)
		for _, t := range c.Result {
			s.ref(t, sent)
		}
	}
	for _, n := range rpc.Notifications() {
		s.ref(n.Params, sent)
	}
	for _, h := range rpc.Hooks() {
		s.ref(h.Params, sent)
		s.ref(h.Result, read)
	}
	flat, nested := rpc.Settings()
	s.ref(flat, read)
	s.ref(nested, read)
	for _, t := range rpc.Entries() {
		s.ref(t, sent)
	}
	return s
}

func aliasNames() []string {
	var out []string
	for _, a := range rpc.Aliases() {
		out = append(out, a.Name)
	}
	return out
}

// aliases declares the aliases the shapes of s named, in the order rpc.Aliases lists
// them (all of them with all).
func aliases(s *shaper, all bool) string {
	var b strings.Builder
	for _, a := range rpc.Aliases() {
		if !all && !s.used[a.Name] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(alias(a.Name, a.Doc, a.Values, a.TS))
	}
	return b.String()
}

// alias declares a named TypeScript type: a union of string literals, or ts.
func alias(name, doc string, values []string, ts string) string {
	if len(values) > 0 {
		quoted := make([]string, len(values))
		for i, v := range values {
			quoted[i] = strconv.Quote(v)
		}
		ts = strings.Join(quoted, " | ")
	}
	return fmt.Sprintf("/** %s */\nexport type %s = %s;\n", doc, name, ts)
}

// entryUnion declares Entry, the union of the entries pi-lsp writes.
func entryUnion() string {
	names := make([]string, 0, len(rpc.Entries()))
	for _, t := range rpc.Entries() {
		names = append(names, tsName(t))
	}
	return alias("Entry", "A session entry pi-lsp writes, as Pi 1.6.0 writes it (results carry some as the file holds them).", nil, strings.Join(names, " | "))
}

// declare renders a named struct type as a TypeScript interface, with the Go comments.
func declare(s *shaper, docs map[string]string, t reflect.Type, r role) string {
	var b strings.Builder
	if d := docs[docKey(t, "")]; d != "" {
		fmt.Fprintf(&b, "/** %s */\n", renamed(d, t.Name(), tsName(t)))
	}
	fields := fieldsOf(t)
	if base, ok := embeddedBase(s, t, r); ok {
		fmt.Fprintf(&b, "export interface %s extends %s {\n", tsName(t), extension(base, fields))
		fields = ownFields(base, fields)
	} else {
		fmt.Fprintf(&b, "export interface %s {\n", tsName(t))
	}
	for _, f := range fields {
		if d := docs[docKey(f.owner, f.goName)]; d != "" {
			fmt.Fprintf(&b, "  /** %s */\n", renamed(d, f.goName, f.name))
		}
		fmt.Fprintf(&b, "  %s;\n", s.member(f, r))
	}
	b.WriteString("}\n")
	return b.String()
}

// embeddedBase is the one struct t embeds when s declares it too, for the same way
// (role r): t's interface then extends it, so that the members they share are written
// once.
func embeddedBase(s *shaper, t reflect.Type, r role) (reflect.Type, bool) {
	var base reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.Anonymous || f.Type.Kind() != reflect.Struct || strings.Split(f.Tag.Get("json"), ",")[0] != "" {
			continue
		}
		if base != nil || !s.seen[f.Type] || s.roles[f.Type] != r {
			return nil, false
		}
		base = f.Type
	}
	return base, base != nil
}

// extension is what an interface with members fields extends: base, less the members
// of base that fields hide or declare again (Omit<Base, "a" | "b">).
func extension(base reflect.Type, fields []tsField) string {
	kept := map[string]tsField{}
	for _, f := range fields {
		kept[f.name] = f
	}
	var dropped []string
	for _, f := range fieldsOf(base) {
		if k, ok := kept[f.name]; !ok || k.owner != f.owner || k.goName != f.goName {
			dropped = append(dropped, strconv.Quote(f.name))
		}
	}
	if len(dropped) == 0 {
		return tsName(base)
	}
	return fmt.Sprintf("Omit<%s, %s>", tsName(base), strings.Join(dropped, " | "))
}

// ownFields are the members of fields that base does not give as they are.
func ownFields(base reflect.Type, fields []tsField) []tsField {
	inherited := map[string]tsField{}
	for _, f := range fieldsOf(base) {
		inherited[f.name] = f
	}
	var out []tsField
	for _, f := range fields {
		if b, ok := inherited[f.name]; !ok || b.owner != f.owner || b.goName != f.goName {
			out = append(out, f)
		}
	}
	return out
}

// renamed gives a Go comment, which starts with the Go name, the wire name instead.
func renamed(doc, goName, name string) string {
	rest, ok := strings.CutPrefix(doc, goName)
	if !ok || (rest != "" && (unicode.IsLetter(rune(rest[0])) || unicode.IsDigit(rune(rest[0])))) {
		return doc
	}
	return name + rest
}

func sortedByName(ts []reflect.Type) []reflect.Type {
	out := append([]reflect.Type(nil), ts...)
	sort.Slice(out, func(i, j int) bool { return tsName(out[i]) < tsName(out[j]) })
	return out
}

// lua is the Neovim plugin's editors/neovim/lua/pi_lsp/protocol.lua.
func lua() string {
	var b strings.Builder
	b.WriteString("--- The server's commands, requests, notifications and hooks, generated from\n")
	b.WriteString("--- internal/rpc's command table by `go generate ./internal/rpc`: do not edit.\n")
	b.WriteString("return {\n  commands = {\n")
	for _, c := range rpc.Commands() {
		fmt.Fprintf(&b, "    { id = %s, method = %s, neovim = %s, title = %s, summary = %s },\n",
			luaString(c.ID), luaString(c.Method), luaString(c.Neovim), luaString(c.Title), luaString(c.Summary))
	}
	b.WriteString("  },\n")
	list := func(name string, items []string) {
		fmt.Fprintf(&b, "  %s = {\n", name)
		for _, it := range items {
			fmt.Fprintf(&b, "    %s,\n", luaString(it))
		}
		b.WriteString("  },\n")
	}
	list("methods", rpc.MethodNames())
	list("notifications", rpc.NotificationNames())
	list("hooks", rpc.HookNames())
	b.WriteString("}\n")
	return b.String()
}

func luaString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`)
	return "'" + r.Replace(s) + "'"
}

// --- the bridge --------------------------------------------------------------------

// bridgeAliases are the bridge protocol's named types that no struct declares.
func bridgeAliases() []rpc.Alias {
	var requests, events, frames []string
	for _, m := range bridge.Methods() {
		requests = append(requests, tsName(m.Request))
	}
	for _, t := range bridge.Events() {
		events = append(events, tsName(t))
	}
	for _, t := range bridge.Frames() {
		frames = append(frames, tsName(t))
	}
	return []rpc.Alias{
		{Name: "RequestID", Doc: "A request's id: a number, or a string of 1 to 64 letters, digits, '.', '_', ':' or '-' (any other is refused as malformed).", TS: "number | string"},
		{Name: "ErrorCode", Doc: "Why a request was refused or failed.", Values: bridge.ErrorCodes},
		{Name: "Request", Doc: "A request pi-lsp sends (one line each).", TS: strings.Join(requests, " | ")},
		{Name: "Frame", Doc: "A line pi sends: the one answer to each request, and the events while it runs.", TS: strings.Join(frames, " | ")},
		{Name: "BridgeEvent", Doc: "One of Pi's events, as the bridge forwards it while a request runs.", TS: strings.Join(events, " | ")},
	}
}

// bridgeShapes registers every type of the bridge protocol, in the docs' order.
func bridgeShapes() *shaper {
	var names []string
	for _, a := range bridgeAliases() {
		names = append(names, a.Name)
	}
	s := newShaper(append(names, aliasNames()...)...)
	for _, m := range bridge.Methods() {
		s.ref(m.Request, sent)
	}
	for _, t := range bridge.Frames() {
		s.ref(t, sent)
	}
	for _, m := range bridge.Methods() {
		if m.Result != nil {
			s.ref(m.Result, sent)
		}
	}
	for _, t := range bridge.Events() {
		s.ref(t, sent)
	}
	return s
}

// bridgeDeclarations are the declarations of the bridge protocol's types.
func bridgeDeclarations(docs map[string]string) string {
	s := bridgeShapes()
	var b strings.Builder
	b.WriteString(fmt.Sprintf("/** The protocol version (hello's protocol). */\nexport type ProtocolVersion = %d;\n", bridge.Protocol))
	for _, a := range bridgeAliases() {
		b.WriteString("\n" + alias(a.Name, a.Doc, a.Values, a.TS))
	}
	b.WriteString("\n/** The result type of each request type (contextEdit is always refused). */\nexport interface Results {\n")
	for _, m := range bridge.Methods() {
		r := "never"
		if m.Result != nil {
			r = tsName(m.Result)
		}
		fmt.Fprintf(&b, "  %s: %s;\n", m.Type, r)
	}
	b.WriteString("}\n")
	var decls strings.Builder
	for _, t := range s.order {
		decls.WriteString("\n" + declare(s, docs, t, sent))
	}
	// The rpc aliases the entries name.
	for _, a := range rpc.Aliases() {
		if s.used[a.Name] {
			b.WriteString("\n" + alias(a.Name, a.Doc, a.Values, a.TS))
		}
	}
	b.WriteString(decls.String())
	return b.String()
}

// bridgeTypeScript is editors/pi/protocol.ts, the types of the Pi extension.
func bridgeTypeScript(docs map[string]string) string {
	var b strings.Builder
	b.WriteString("// The bridge protocol between pi-lsp and this extension (protocol 1: newline-delimited\n")
	b.WriteString("// JSON over the bridge's Unix socket), generated from internal/bridge's Go types by\n")
	b.WriteString("// `go generate ./internal/rpc`: do not edit. Types only (extension.ts imports them with\n")
	b.WriteString("// `import type`); docs/protocol.md describes the protocol.\n\n")
	b.WriteString(bridgeDeclarations(docs))
	return b.String()
}

// bridgeMarkdown is the bridge section of docs/protocol.md.
func bridgeMarkdown(docs map[string]string) string {
	var b strings.Builder
	b.WriteString("| request | result | what it does |\n|---|---|---|\n")
	for _, m := range bridge.Methods() {
		r := "(refused: `unsupported`)"
		if m.Result != nil {
			r = "`" + tsName(m.Result) + "`"
		}
		fmt.Fprintf(&b, "| `%s` (`%s`) | %s | %s |\n", m.Type, tsName(m.Request), r, m.Summary)
	}
	b.WriteString("\n```ts\n" + bridgeDeclarations(docs) + "```\n")
	return b.String()
}

// documentedTypes are the struct types whose comments the generated files carry.
func documentedTypes() []reflect.Type {
	out := append([]reflect.Type(nil), wireShapes().order...)
	out = append(out, cliShapes().order...)
	return append(out, bridgeShapes().order...)
}
