package gen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
)

// genDecls calls fn for every declaration of kind tok (token.TYPE, token.CONST, ...) in
// the Go files of dir but its tests, parsed with mode: the generator reads the doc
// comments of the wire types this way, and its tests the constants the unions list.
func genDecls(dir string, mode parser.Mode, tok token.Token, fn func(*ast.GenDecl)) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, mode)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == tok {
				fn(g)
			}
		}
	}
	return nil
}
