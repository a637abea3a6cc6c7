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

// The shipped binary links no Go source parser: the generator of the docs and the
// editors' types (internal/rpc/internal/gen, run by `go generate ./internal/rpc`), which
// reads Go comments with go/parser, and the shape checks of the tests stay out of it.
func TestBinaryLinksNoGoParser(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(gobin, "list", "-deps", "github.com/pi-lsp/pi-lsp/cmd/pi-lsp")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/pi-lsp: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !containsString(deps, "github.com/pi-lsp/pi-lsp/internal/rpc") {
		t.Fatalf("go list -deps ./cmd/pi-lsp listed %d packages, not the server's: %.200s", len(deps), out)
	}
	for _, p := range deps {
		switch {
		case p == "go/parser", p == "go/ast", p == "go/types", p == "go/format", p == "go/printer":
			t.Errorf("the binary links %s", p)
		case strings.HasSuffix(p, "/internal/rpc/internal/gen"), strings.Contains(p, "/internal/testsupport"):
			t.Errorf("the binary links %s", p)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
