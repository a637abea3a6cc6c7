package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// TestCommandTableInSync keeps the command table, the VS Code package.json, the Neovim
// user commands and docs/protocol.md in agreement (rust-analyzer's lsp-extensions hash
// test, in spirit): a row added or renamed in one place and not the others fails here.
func TestCommandTableInSync(t *testing.T) {
	table := rpc.Commands()
	if len(table) == 0 {
		t.Fatal("empty command table")
	}

	t.Run("vscode package.json", func(t *testing.T) {
		data := testfile.ReadRepo(t, "editors/vscode/package.json")
		var pkg struct {
			Contributes struct {
				Commands []struct {
					Command  string `json:"command"`
					Title    string `json:"title"`
					Category string `json:"category"`
				} `json:"commands"`
			} `json:"contributes"`
		}
		if err := json.Unmarshal(data, &pkg); err != nil {
			t.Fatal(err)
		}
		titles := map[string]string{}
		for _, c := range pkg.Contributes.Commands {
			titles[c.Command] = c.Title
			// One prefix and one category for every command; the palette shows "Pi: <title>".
			if !strings.HasPrefix(c.Command, "pi.") || c.Category != "Pi" || strings.HasPrefix(c.Title, "Pi:") {
				t.Errorf("%s: want a pi.* id in category \"Pi\" with a title without \"Pi:\", got category %q, title %q", c.Command, c.Category, c.Title)
			}
		}
		// The extension's own commands (models/commands.ts EXTENSION_COMMANDS) share the
		// prefix and must never be a server command.
		own := map[string]bool{}
		src := testfile.ReadRepo(t, "editors/vscode/src/models/commands.ts")
		block := regexp.MustCompile(`(?s)EXTENSION_COMMANDS = \{(.*?)\}`).FindSubmatch(src)
		if block == nil {
			t.Fatal("no EXTENSION_COMMANDS in editors/vscode/src/models/commands.ts")
		}
		for _, m := range regexp.MustCompile(`"(pi\.[A-Za-z.]+)"`).FindAllSubmatch(block[1], -1) {
			own[string(m[1])] = true
		}
		ids := map[string]bool{}
		for _, c := range table {
			ids[c.ID] = true
			if own[c.ID] {
				t.Errorf("%s is both a server command and one of the extension's own", c.ID)
			}
			got, ok := titles[c.ID]
			switch {
			case !ok:
				t.Errorf("%s is not in contributes.commands", c.ID)
			case got != c.Title:
				t.Errorf("%s: package.json title %q, table title %q", c.ID, got, c.Title)
			}
		}
		// A pi.* palette entry that neither the server nor the extension registers would
		// be a dead command.
		for id := range titles {
			if !ids[id] && !own[id] {
				t.Errorf("package.json contributes %s, which is neither in the command table nor one of the extension's commands", id)
			}
		}
		// vscode-languageclient registers every server command itself; the extension
		// registering one too makes VS Code throw on activation.
		reg := regexp.MustCompile(`registerCommand\(\s*['"\x60](pi\.[A-Za-z]+)['"\x60]`)
		_ = filepath.WalkDir(testfile.Repo("editors/vscode/src"), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".ts") {
				return nil
			}
			src, _ := os.ReadFile(p)
			for _, m := range reg.FindAllStringSubmatch(string(src), -1) {
				if ids[m[1]] {
					t.Errorf("%s registers server command %s itself", p, m[1])
				}
			}
			return nil
		})
	})

	t.Run("neovim user commands", func(t *testing.T) {
		defined := map[string]bool{}
		direct := regexp.MustCompile(`nvim_create_user_command\(\s*['"](Pi[A-Za-z]+)['"]`)
		tableKey := regexp.MustCompile(`(?m)^\s*(Pi[A-Za-z]+)\s*=\s*\{`)
		root := testfile.Repo("editors/neovim")
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".lua") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range direct.FindAllStringSubmatch(string(src), -1) {
				defined[m[1]] = true
			}
			// A table of definitions registered by a loop in the same file.
			if strings.Contains(string(src), "nvim_create_user_command(") {
				for _, m := range tableKey.FindAllStringSubmatch(string(src), -1) {
					defined[m[1]] = true
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(defined) == 0 {
			t.Fatalf("no Neovim user commands found under %s", root)
		}
		for _, c := range table {
			if !defined[c.Neovim] {
				t.Errorf("%s: Neovim command :%s is not defined under editors/neovim", c.ID, c.Neovim)
			}
		}
	})

	t.Run("docs/protocol.md", func(t *testing.T) {
		doc := string(testfile.ReadRepo(t, "docs/protocol.md"))
		for _, c := range table {
			for _, name := range []string{c.ID, c.Method} {
				if !strings.Contains(doc, "`"+name+"`") {
					t.Errorf("docs/protocol.md does not document %s", name)
				}
			}
		}
		for _, m := range rpc.MethodNames() {
			if !strings.Contains(doc, "`"+m+"`") {
				t.Errorf("docs/protocol.md does not document request %s", m)
			}
		}
		for _, n := range []string{"pi/sessionChanged", "pi/compactionStart", "pi/compactionEnd", "pi/compactionFailed", "pi/fileOps", "pi/contextUsage", "pi/beforeCompact", "pi/beforeTree"} {
			if !strings.Contains(doc, n) {
				t.Errorf("docs/protocol.md does not document %s", n)
			}
		}
		// The generated section is exactly what the table renders today.
		begin, end := strings.Index(doc, rpc.DocsBegin), strings.Index(doc, rpc.DocsEnd)
		if begin < 0 || end < begin {
			t.Fatalf("docs/protocol.md lacks the generated-commands markers")
		}
		if got, want := doc[begin:end+len(rpc.DocsEnd)]+"\n", rpc.CommandsMarkdown(); got != want {
			t.Errorf("the generated commands section of docs/protocol.md is stale; regenerate it from the table (pi-lsp commands --markdown)")
		}
	})
}
