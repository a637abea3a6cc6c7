package main

import (
	"regexp"
	"runtime/debug"
)

// A release build is stamped with the VERSION file (`-ldflags "-X main.Version=..."`, what
// make build and make dist do). `go install github.com/pi-lsp/pi-lsp/cmd/pi-lsp@vX.Y.Z`
// stamps nothing, but the go command records the module version it built: a clean
// release tag is then the version, so that the editors' handshake compares the right one.
func init() {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := releaseVersion(bi.Main.Version); v != "" {
			Version = v
		}
	}
}

var releaseTag = regexp.MustCompile(`^v(\d+\.\d+\.\d+)$`)

// releaseVersion is "X.Y.Z" for the module version "vX.Y.Z", and "" for anything else
// ("(devel)", a pseudo-version, a pre-release, a +dirty build).
func releaseVersion(module string) string {
	if m := releaseTag.FindStringSubmatch(module); m != nil {
		return m[1]
	}
	return ""
}
