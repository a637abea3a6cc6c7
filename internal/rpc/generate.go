//go:build ignore

// generate writes the files generated from the wire's Go types (docs/protocol.md,
// README.md's command table, the VS Code protocol.ts, the Neovim protocol.lua, the Pi
// extension's protocol.ts and internal/rpc's commands_markdown.go): run it with
// `go generate ./internal/rpc`. The generator is internal/rpc/internal/gen, kept out of
// the server so that the binary links no go/parser.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/pi-lsp/pi-lsp/internal/rpc/internal/gen"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	files, err := gen.Generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(*root, filepath.FromSlash(name))
		if old, err := os.ReadFile(p); err == nil && string(old) == files[name] {
			continue
		}
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "generate:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", name)
	}
}
