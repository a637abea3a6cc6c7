package gen

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
)

// TestAliasesListEveryConstant keeps the generated string unions complete: EntryType
// lists every entry type constant of internal/session (the header's aside), MessageRole
// every role, and ContextEditState every State but the unedited one, so that a type Pi
// adds there is documented (and sent to the editors) the day it is declared.
func TestAliasesListEveryConstant(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	consts := func(dir string, keep func(name string, typ ast.Expr) bool) []string {
		t.Helper()
		var out []string
		err := genDecls(filepath.Join(root, dir), 0, token.CONST, func(g *ast.GenDecl) {
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) || !keep(n.Name, vs.Type) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						if v != "" {
							out = append(out, v)
						}
					}
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	want := map[string][]string{
		"EntryType": consts("internal/session", func(n string, _ ast.Expr) bool {
			return strings.HasPrefix(n, "Type") && n != "TypeSession"
		}),
		"MessageRole": consts("internal/session", func(n string, _ ast.Expr) bool { return strings.HasPrefix(n, "Role") }),
		"ContextEditState": consts("internal/contextedit", func(_ string, typ ast.Expr) bool {
			id, ok := typ.(*ast.Ident)
			return ok && id.Name == "State"
		}),
	}
	for _, a := range rpc.Aliases() {
		w, ok := want[a.Name]
		if !ok {
			continue
		}
		delete(want, a.Name)
		got := slices.Sorted(slices.Values(a.Values))
		if len(w) < 2 || !slices.Equal(got, w) {
			t.Errorf("%s lists %v; the constants are %v", a.Name, got, w)
		}
	}
	for name := range want {
		t.Errorf("no alias %s", name)
	}
}
