package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// One version everywhere: the VERSION file is the version of the binary (stamped by
// make build and make dist), the VS Code package, the Pi package (its package.json and
// the version the extension registers) and the Neovim plugin, and CHANGELOG.md has its
// section. scripts/set-version.sh writes them all.
func TestOneVersionEverywhere(t *testing.T) {
	read := func(p string) string { t.Helper(); return string(testfile.ReadRepo(t, p)) }
	version := strings.TrimSpace(read("VERSION"))
	if releaseVersion("v"+version) != version {
		t.Fatalf("VERSION %q is not X.Y.Z", version)
	}
	for _, p := range []string{"editors/vscode/package.json", "editors/pi/package.json"} {
		var pkg struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal([]byte(read(p)), &pkg); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if pkg.Version != version {
			t.Errorf("%s: version %q, VERSION %q", p, pkg.Version, version)
		}
	}
	for p, re := range map[string]string{
		"editors/pi/extension.ts":               `(?m)^const VERSION = "([^"]+)";`,
		"editors/neovim/lua/pi_lsp/version.lua": `(?m)^return '([^']+)'`,
		"CHANGELOG.md":                          `(?m)^## \[([^\]]+)\]`,
		"Makefile":                              `(?m)^VERSION := \$\(shell cat (VERSION)\)`,
	} {
		m := regexp.MustCompile(re).FindStringSubmatch(read(p))
		want := version
		if p == "Makefile" {
			want = "VERSION"
		}
		if m == nil || m[1] != want {
			t.Errorf("%s: %v, want %s (the first match of %s)", p, m, want, re)
		}
	}
	if !strings.Contains(read("Makefile"), "-X main.Version=$(VERSION)") {
		t.Error("the Makefile does not stamp main.Version")
	}
}

func TestReleaseVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v0.2.0": "0.2.0", "v10.20.30": "10.20.30",
		"(devel)": "", "": "", "v0.2.0-rc1": "", "v0.2.1-0.20261201120000-abcdefabcdef": "", "v0.2.0+dirty": "", "0.2.0": "",
	} {
		if got := releaseVersion(in); got != want {
			t.Errorf("releaseVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
