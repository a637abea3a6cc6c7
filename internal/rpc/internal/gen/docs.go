package gen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
)

// docKey names a type ("" field) or a field for its comment.
func docKey(t reflect.Type, field string) string {
	return t.PkgPath() + "." + t.Name() + "." + field
}

// parseDocs reads the doc comments of the struct types and fields in the packages of
// types (and of the structs they embed), keyed by docKey, each as one line.
func parseDocs(root string, types []reflect.Type) (map[string]string, error) {
	module := strings.TrimSuffix(reflect.TypeFor[rpc.Command]().PkgPath(), "/internal/rpc")
	pkgs := map[string]bool{}
	for _, t := range types {
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
		err := genDecls(dir, parser.ParseComments, token.TYPE, func(g *ast.GenDecl) {
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
		})
		if err != nil {
			return nil, err
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
