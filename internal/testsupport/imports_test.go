package testsupport_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Production code never imports the test-support tree: it is built into no binary, so
// a helper can fail a test (testing.TB) or start httptest servers freely.
func TestOnlyTestsImportTestSupport(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)
	root := filepath.Join(here, "..", "..")
	const prefix = "github.com/pi-lsp/pi-lsp/internal/testsupport"
	checked := 0
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
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == prefix || strings.HasPrefix(p, prefix+"/") {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s imports %s: only _test.go files may", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked only %d files: the walk did not reach the module", checked)
	}
}

// The shipped binary links no Go source parser of this module's making: the generator
// of the docs and the editors' types (internal/rpc/internal/gen, run by `go generate
// ./internal/rpc`), which reads Go comments with go/parser, and the shape checks of the
// tests stay out of it, and no package the binary links, the module's or a dependency's,
// imports go/parser, go/ast or their kin.
func TestBinaryLinksNoGoParser(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	const module = "github.com/pi-lsp/pi-lsp"
	cmd := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/cmd/pi-lsp")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/pi-lsp: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 50 || !strings.Contains(string(out), "\n"+module+"/internal/rpc ") {
		t.Fatalf("go list -deps ./cmd/pi-lsp listed %d packages, not the server's: %.200s", len(lines), out)
	}
	parsers := map[string]bool{"go/parser": true, "go/ast": true, "go/types": true, "go/format": true, "go/printer": true}
	for _, line := range lines {
		f := strings.Fields(line)
		pkg := f[0]
		if strings.HasSuffix(pkg, "/internal/rpc/internal/gen") || strings.HasPrefix(pkg, module+"/internal/testsupport") {
			t.Errorf("the binary links %s", pkg)
		}
		if !strings.Contains(strings.Split(pkg, "/")[0], ".") {
			continue // the standard library's go/* import each other
		}
		for _, imp := range f[1:] {
			if parsers[imp] {
				t.Errorf("the binary links %s through %s", imp, pkg)
			}
		}
	}
}
