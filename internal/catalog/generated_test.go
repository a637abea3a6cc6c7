package catalog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

// The embedded catalog is what scripts/gen-pi-catalog.mjs writes from the pinned Pi 1.6.0
// (data generated from the npm package, never edited by hand).
func TestEmbeddedCatalogIsGenerated(t *testing.T) {
	oracle.NeedPiCLI(t, "the check of the embedded model catalog")
	ai := filepath.Join(filepath.Dir(oracle.PiDir()), "pi-ai")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := isolate.GroupCmd(ctx, oracle.Node(), filepath.Join(oracle.RepoRoot(), "scripts", "gen-pi-catalog.mjs"), ai)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gen-pi-catalog.mjs: %v", err)
	}
	if !bytes.Equal(out, embedded) {
		t.Errorf("internal/catalog/pi-catalog.json is not what scripts/gen-pi-catalog.mjs writes from %s: regenerate it (node scripts/gen-pi-catalog.mjs > internal/catalog/pi-catalog.json)", ai)
	}
	if v := EmbeddedVersion(); v != "1.6.0" {
		t.Errorf("embedded catalog of pi-ai %s, want 1.6.0", v)
	}
}
