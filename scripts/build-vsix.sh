#!/usr/bin/env bash
# Build the VS Code package of this machine's platform, editors/vscode/pi-lsp.vsix (what
# `make vsix` runs; `make dist` builds the package of every platform):
#   1. the server binary as make dist builds it (static, stripped, the VERSION stamped)
#   2. npm ci in editors/vscode when its lock changed (vscode-languageclient 9.0.1,
#      typescript, esbuild, @vscode/vsce 3.9.2), tsc (strict) and the extension's unit tests
#      (node --test)
#   3. esbuild: the extension and its dependencies in one file
#   4. vsce package --target <this platform>, with only that platform's binary in bin/
#      (scripts/vsix-lib.sh says what goes in)
#
#   bash scripts/build-vsix.sh                       # everything
#   PI_LSP_SKIP_UNIT=1 bash scripts/build-vsix.sh    # skip the unit tests
# Install it: code --install-extension editors/vscode/pi-lsp.vsix
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$REPO/editors/vscode/pi-lsp.vsix"
log() { printf 'build-vsix: %s\n' "$*" >&2; }
source "$REPO/scripts/vsix-lib.sh"

for tool in go node npm sha256sum timeout; do
  command -v "$tool" >/dev/null 2>&1 || { log "missing required tool: $tool"; exit 1; }
done
start=$(date +%s)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-build-vsix.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

target="$(vsix_host_target)" || { log "no VS Code target for $(uname -s) $(uname -m)"; exit 1; }
version="$(cat "$REPO/VERSION")"
log "go build (static, stripped, version $version) for $target"
(cd "$REPO" && CGO_ENABLED=0 timeout 600 go build -trimpath -ldflags "-s -w -buildid= -X main.Version=$version" -o "$WORK/pi-lsp" ./cmd/pi-lsp)
mkdir -p "$REPO/bin"
cp "$WORK/pi-lsp" "$REPO/bin/pi-lsp" # the unit tests' and the e2e test's server

vsix_prepare "$WORK"
if [ "${PI_LSP_SKIP_UNIT:-0}" != 1 ]; then
  log "unit tests (node --test out/test/)"
  (cd "$VSIX_EXT" && PI_LSP_BIN="$REPO/bin/pi-lsp" timeout 300 node --test out/test/ >&2)
fi
vsix_package "$target" "$WORK/pi-lsp" "$OUT"
log "built $OUT ($target) in $(( $(date +%s) - start ))s"
