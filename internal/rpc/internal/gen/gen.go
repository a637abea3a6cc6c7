package rpc

//go:generate go run ./internal/gen -root ../..

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"unicode"
)

// The files generated from the command table and the wire types, relative to the
// repository. Generate rewrites only the parts between markers in the first three, and
// the whole of the Lua file.
const (
	ProtocolDoc  = "docs/protocol.md"
	ReadmeFile   = "README.md"
	VSCodeTypes  = "editors/vscode/src/protocol.ts"
	NeovimTables = "editors/neovim/lua/pi_lsp/protocol.lua"
)

// Generate renders every generated file from the checked-in files under root (the
// repository root): path -> new content. `go generate ./internal/rpc` writes them; a
// test compares them with the files on disk.
func Generate(root string) (map[string]string, error) {
	docs, err := parseDocs(root)
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
	if doc, err = splice(doc, DocsBegin, DocsEnd, CommandsMarkdown()); err != nil {
		return nil, fmt.Errorf("%s: %w", ProtocolDoc, err)
	}
	s := newShaper()
	for _, c := range requestTable {
		body := fmt.Sprintf("```ts\nparams: %s\nresult: %s\n```\n", s.object(c.Params, read), s.union(c.Result, sent))
		if doc, err = spliceMD(doc, c.Method, body); err != nil {
			return nil, fmt.Errorf("%s: %w", ProtocolDoc, err)
		}
	}
	var b strings.Builder
	for _, n := range notificationTable {
		fmt.Fprintf(&b, "### `%s`\n\n%s\n\n```ts\n// params\n%s```\n\n", n.Method, n.Summary, declare(s, docs, n.Params, sent))
	}
	if doc, err = spliceMD(doc, "NOTIFICATIONS", strings.TrimSuffix(b.String(), "\n")); err != nil {
		return nil, fmt.Errorf("%s: %w", ProtocolDoc, err)
	}
	b.Reset()
	for _, h := range hookTable {
		fmt.Fprintf(&b, "### `%s`\n\n%s\n\n```ts\nparams: %s\nresult: null | %s\n```\n\n", h.Method, h.Summary, s.object(h.Params, sent), s.object(h.Result, read))
	}
	if doc, err = spliceMD(doc, "HOOKS", strings.TrimSuffix(b.String(), "\n")); err != nil {
		return nil, fmt.Errorf("%s: %w", ProtocolDoc, err)
	}
	// The shapes above name these types; the command section names its own too.
	for _, c := range commandTable {
		s.object(c.Params, read)
		s.union(c.Result, sent)
	}
	b.Reset()
	b.WriteString("```ts\n")
	for i, t := range sortedByName(s.order) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(declare(s, docs, t, s.roles[t]))
	}
	b.WriteString("```\n")
	if doc, err = spliceMD(doc, "TYPES", b.String()); err != nil {
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
	return out, nil
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
	for _, c := range commandTable {
		usage := c.NeovimUsage
		if usage == "" {
			usage = ":" + c.Neovim
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` |\n", c.ID, c.Title, strings.ReplaceAll(usage, "|", `\|`))
	}
	return b.String()
}

// typeScript is the generated part of the VS Code extension's protocol.ts.
func typeScript(docs map[string]string) string {
	var b strings.Builder
	b.WriteString(tsBegin + "\n\n")
	b.WriteString("/** The server's commands (workspace/executeCommand ids). */\nexport const Commands = {\n")
	for _, c := range commandTable {
		fmt.Fprintf(&b, "  %s: %q,\n", strings.TrimPrefix(c.ID, "pi."), c.ID)
	}
	b.WriteString("} as const;\n\nexport type CommandId = (typeof Commands)[keyof typeof Commands];\n\n")
	b.WriteString("/** The custom requests: `pi/<name>` mirrors the command `pi.<name>`. */\nexport const Methods = {\n")
	for _, c := range allRequests() {
		fmt.Fprintf(&b, "  %s: %q,\n", strings.TrimPrefix(c.Method, "pi/"), c.Method)
	}
	b.WriteString("} as const;\n\n/** The custom notifications the server sends. */\nexport const Notifications = {\n")
	for _, n := range notificationTable {
		fmt.Fprintf(&b, "  %s: %q,\n", strings.TrimPrefix(n.Method, "pi/"), n.Method)
	}
	b.WriteString("} as const;\n\n/** The requests the server sends a client that declared hooks. */\nexport const Hooks = {\n")
	for _, h := range hookTable {
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
// answers.
func wireShapes() *shaper {
	s := newShaper()
	for _, c := range allRequests() {
		s.ref(c.Params, read)
		for _, t := range c.Result {
			s.ref(t, sent)
		}
	}
	for _, n := range notificationTable {
		s.ref(n.Params, sent)
	}
	for _, h := range hookTable {
		s.ref(h.Params, sent)
		s.ref(h.Result, read)
	}
	return s
}

// declare renders a named struct type as a TypeScript interface, with the Go comments.
func declare(s *shaper, docs map[string]string, t reflect.Type, r role) string {
	var b strings.Builder
	if d := docs[docKey(t, "")]; d != "" {
		fmt.Fprintf(&b, "/** %s */\n", renamed(d, t.Name(), tsName(t)))
	}
	fmt.Fprintf(&b, "export interface %s {\n", tsName(t))
	for _, f := range fieldsOf(t) {
		if d := docs[docKey(f.owner, f.goName)]; d != "" {
			fmt.Fprintf(&b, "  /** %s */\n", renamed(d, f.goName, f.name))
		}
		fmt.Fprintf(&b, "  %s;\n", s.member(f, r))
	}
	b.WriteString("}\n")
	return b.String()
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
	for _, c := range commandTable {
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
	list("methods", MethodNames())
	list("notifications", NotificationNames())
	list("hooks", HookNames())
	b.WriteString("}\n")
	return b.String()
}

func luaString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`)
	return "'" + r.Replace(s) + "'"
}

// docKey names a type ("" field) or a field for its comment.
func docKey(t reflect.Type, field string) string {
	return t.PkgPath() + "." + t.Name() + "." + field
}

// parseDocs reads the doc comments of the struct types and fields in the packages of
// the wire types, keyed by docKey, each as one line.
func parseDocs(root string) (map[string]string, error) {
	module := strings.TrimSuffix(reflect.TypeFor[Command]().PkgPath(), "/internal/rpc")
	pkgs := map[string]bool{}
	s := wireShapes()
	for _, t := range s.order {
		pkgs[t.PkgPath()] = true
		for _, f := range fieldsOf(t) {
			pkgs[f.owner.PkgPath()] = true
		}
	}
	out := map[string]string{}
	for pkg := range pkgs {
		rel, ok := strings.CutPrefix(pkg, module+"/")
		if !ok {
			continue
		}
		dir := filepath.Join(root, filepath.FromSlash(rel))
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return nil, err
		}
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.TYPE {
					continue
				}
				for _, sp := range g.Specs {
					ts := sp.(*ast.TypeSpec)
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					doc := ts.Doc
					if doc == nil && len(g.Specs) == 1 {
						doc = g.Doc
					}
					out[pkg+"."+ts.Name.Name+"."] = oneLine(doc)
					for _, fl := range st.Fields.List {
						text := oneLine(fl.Doc)
						if text == "" {
							text = oneLine(fl.Comment)
						}
						for _, n := range fl.Names {
							out[pkg+"."+ts.Name.Name+"."+n.Name] = text
						}
					}
				}
			}
		}
	}
	return out, nil
}

func oneLine(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}
