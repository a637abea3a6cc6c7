package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFilesAreCurrent fails when a file generated from the command table and
// the wire types (docs/protocol.md, README.md, the VS Code protocol.ts, the Neovim
// protocol.lua) differs from what the Go types render now.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v; run `go generate ./internal/rpc`", name, err)
			continue
		}
		if string(got) != want {
			t.Errorf("%s is stale: run `go generate ./internal/rpc`", name)
		}
	}
	doc := files[ProtocolDoc]
	for _, m := range append(append(MethodNames(), NotificationNames()...), HookNames()...) {
		if !strings.Contains(doc, "`"+m+"`") {
			t.Errorf("docs/protocol.md does not document %s", m)
		}
	}
}
