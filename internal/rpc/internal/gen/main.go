// Command gen writes the files generated from internal/rpc's command table and wire
// types (docs/protocol.md, README.md, the VS Code protocol.ts and the Neovim
// protocol.lua). Run it with `go generate ./internal/rpc`.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	files, err := rpc.Generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for name, content := range files {
		p := filepath.Join(*root, filepath.FromSlash(name))
		if old, err := os.ReadFile(p); err == nil && string(old) == content {
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", name)
	}
}
