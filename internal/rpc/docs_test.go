package rpc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/rpc/internal/gen"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// TestGeneratedFilesAreCurrent fails when a file generated from the command table and
// the wire types (docs/protocol.md, README.md, the VS Code protocol.ts, the Neovim
// protocol.lua, the Pi extension's protocol.ts, commands_markdown.go) differs from what
// the Go types render now.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := testfile.Repo("")
	files, err := gen.Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{gen.ProtocolDoc, gen.ReadmeFile, gen.VSCodeTypes, gen.NeovimTables, gen.BridgeTypes, gen.CommandsGo} {
		if _, ok := files[name]; !ok {
			t.Errorf("%s is not generated", name)
		}
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
	doc := files[gen.ProtocolDoc]
	for _, m := range append(append(rpc.MethodNames(), rpc.NotificationNames()...), rpc.HookNames()...) {
		if !strings.Contains(doc, "`"+m+"`") {
			t.Errorf("docs/protocol.md does not document %s", m)
		}
	}
	if got, want := rpc.CommandsMarkdown(), gen.CommandsMarkdown(); got != want {
		t.Error("rpc.CommandsMarkdown (pi-lsp commands --markdown) is stale: run `go generate ./internal/rpc`")
	}
}
