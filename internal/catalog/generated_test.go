package catalog

import (
	"bytes"
	"context"
	"encoding/json"
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

// The installed pi's catalog (its pi-ai package's model data) is read to the same models
// as the copy generated from it.
func TestInstalledCatalogOfRealPi(t *testing.T) {
	oracle.NeedPiCLI(t, "reading a real pi's catalog")
	bin := filepath.Join(t.TempDir(), "pi")
	if err := os.Symlink(oracle.PiCLI(), bin); err != nil {
		t.Fatal(err)
	}
	inst := Load(t.TempDir(), LoadOptions{PiPath: bin})
	emb := Load(t.TempDir(), LoadOptions{PiPath: "-"})
	if inst.Source == emb.Source {
		t.Fatalf("the installed catalog was not read: %s", inst.Source)
	}
	n, differ := 0, 0
	for _, p := range emb.Providers() {
		for _, m := range p.Models {
			n++
			got := inst.Find(m.Provider, m.ID)
			if got == nil {
				t.Errorf("%s missing from the installed catalog", m.Ref())
				continue
			}
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(m)
			if !bytes.Equal(a, b) {
				differ++
				if differ <= 3 {
					t.Errorf("%s differs:\ninstalled %s\n embedded %s", m.Ref(), a, b)
				}
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d models differ", differ, n)
	}
}
