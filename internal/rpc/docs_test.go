package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProtocolDocMatchesCommandTable fails when docs/protocol.md's generated command
// section is not what the command table renders (regenerate it with
// `pi-lsp commands --markdown`).
func TestProtocolDocMatchesCommandTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, DocsBegin), strings.Index(doc, DocsEnd)
	if i < 0 || j < i {
		t.Fatal("docs/protocol.md has no generated command section")
	}
	got := doc[i : j+len(DocsEnd)]
	want := strings.TrimSuffix(CommandsMarkdown(), "\n")
	if got != want {
		t.Errorf("docs/protocol.md is out of date with the command table; regenerate the section with `pi-lsp commands --markdown`")
	}
	for _, m := range append(MethodNames(), serverNotifications...) {
		if !strings.Contains(doc, "`"+m+"`") {
			t.Errorf("docs/protocol.md does not document %s", m)
		}
	}
}
