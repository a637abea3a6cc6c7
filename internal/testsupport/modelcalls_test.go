package testsupport_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// productionFiles parses every non-test Go file of the module outside the test-support
// tree (and testdata, node_modules, hidden directories), with its path relative to the
// module root.
func productionFiles(t *testing.T, mode parser.Mode) map[string]*ast.File {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)
	root := filepath.Join(here, "..", "..")
	out := map[string]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path == here || name == "node_modules" || name == "testdata" || (strings.HasPrefix(name, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, mode)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("found only %d files: the walk did not reach the module", len(out))
	}
	return out
}

func importsOf(f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		out = append(out, p)
	}
	return out
}

// Model calls are made in one package: only internal/llm imports net/http or a model
// provider's client library, so one HTTP policy (no redirect followed, answers bounded,
// no credential in an error) covers every call.
func TestOnlyLLMMakesModelCalls(t *testing.T) {
	clients := []string{"net/http", "github.com/anthropics/", "github.com/openai/", "github.com/sashabaranov/", "google.golang.org/genai"}
	for rel, f := range productionFiles(t, parser.ImportsOnly) {
		if strings.HasPrefix(rel, "internal/llm/") {
			continue
		}
		for _, p := range importsOf(f) {
			for _, c := range clients {
				if p == c || strings.HasPrefix(p, c+"/") || (strings.HasSuffix(c, "/") && strings.HasPrefix(p, c)) {
					t.Errorf("%s imports %s: model calls belong to internal/llm", rel, p)
				}
			}
		}
	}
}

// Compaction is Pi's algorithm and its summarizers: it chooses no model (no catalog) and
// reads no settings file (session.LoadSettings is the one reader, called by the service).
func TestCompactionChoosesNoModelAndReadsNoSettings(t *testing.T) {
	for rel, f := range productionFiles(t, parser.SkipObjectResolution) {
		if !strings.HasPrefix(rel, "internal/compaction/") {
			continue
		}
		for _, p := range importsOf(f) {
			if p == "github.com/pi-lsp/pi-lsp/internal/catalog" {
				t.Errorf("%s imports %s", rel, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "session" && (sel.Sel.Name == "LoadSettings" || sel.Sel.Name == "ProjectTrusted") {
					t.Errorf("%s calls session.%s", rel, sel.Sel.Name)
				}
			}
			return true
		})
	}
}
