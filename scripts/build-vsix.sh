#!/usr/bin/env bash
# Build the VS Code extension package editors/vscode/pi-lsp.vsix (what `make vsix` runs):
#   1. go build -o bin/pi-lsp ./cmd/pi-lsp (fresh server binary)
#   2. npm ci in editors/vscode (pinned lock: vscode-languageclient 9.0.1, typescript, @vscode/vsce 3.9.2)
#   3. tsc (strict) and the extension's unit tests (node --test)
#   4. copy bin/pi-lsp into editors/vscode/bin/ so the extension runs the bundled server
#   5. vsce package -> editors/vscode/pi-lsp.vsix
#
#   bash scripts/build-vsix.sh                # everything
#   PI_LSP_SKIP_UNIT=1 bash scripts/build-vsix.sh   # skip step 3's unit tests
# Install it: code --install-extension editors/vscode/pi-lsp.vsix
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXT="$REPO/editors/vscode"
OUT="$EXT/pi-lsp.vsix"
log() { printf 'build-vsix: %s\n' "$*" >&2; }

for tool in go node npm sha256sum timeout; do
  command -v "$tool" >/dev/null 2>&1 || { log "missing required tool: $tool"; exit 1; }
done
export npm_config_cache="${npm_config_cache:-$REPO/.tools/npm-cache}"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

start=$(date +%s)
log "go build -o bin/pi-lsp ./cmd/pi-lsp"
(cd "$REPO" && timeout 600 go build -o bin/pi-lsp ./cmd/pi-lsp)

# npm ci only when the lock changed since the last install (node_modules is git-ignored).
stamp="$EXT/node_modules/.pi-lsp-stamp"
want="$(cat "$EXT/package.json" "$EXT/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "npm ci in editors/vscode"
  (cd "$EXT" && timeout 600 npm ci --no-audit --no-fund --loglevel=error >&2)
  printf '%s\n' "$want" >"$stamp"
fi

log "tsc (strict)"
rm -rf "$EXT/out"
(cd "$EXT" && timeout 300 npx --no-install tsc -p ./)
if [ "${PI_LSP_SKIP_UNIT:-0}" != 1 ]; then
  log "unit tests (node --test out/test/)"
  (cd "$EXT" && PI_LSP_BIN="$REPO/bin/pi-lsp" timeout 300 node --test out/test/ >&2)
fi

rm -rf "$EXT/bin"
mkdir -p "$EXT/bin"
cp "$REPO/bin/pi-lsp" "$EXT/bin/pi-lsp"
chmod 755 "$EXT/bin/pi-lsp"

rm -f "$OUT"
log "vsce package"
# No repository/LICENSE fields: this is a local build, not a Marketplace upload.
(cd "$EXT" && timeout 300 npx --no-install vsce package --out "$OUT" \
  --allow-missing-repository --skip-license --no-rewrite-relative-links >&2)
[ -s "$OUT" ] || { log "vsce produced no $OUT"; exit 1; }
log "built $OUT ($(du -k "$OUT" | cut -f1) KB) in $(( $(date +%s) - start ))s"
