#!/usr/bin/env bash
# Install the pinned real Pi coding agent (@mariozechner/pi-coding-agent, see
# test/pi/package.json and its lock file) into .tools/pi. Idempotent: a fast
# no-op when the installed tree matches the committed lock file.
#
#   bash scripts/install-pi.sh          # install or verify
#   PI_LSP_FORCE_INSTALL=1 bash scripts/install-pi.sh   # reinstall
#
# Result: .tools/pi/node_modules/@mariozechner/pi-coding-agent and
#         .tools/pi/node_modules/.bin/pi
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$REPO/test/pi"
DEST="$REPO/.tools/pi"
WANT_VERSION="0.73.1"
PKG_DIR="$DEST/node_modules/@mariozechner/pi-coding-agent"
STAMP="$DEST/.install-stamp"

log() { printf 'install-pi: %s\n' "$*" >&2; }

for tool in node npm sha256sum timeout; do
  command -v "$tool" >/dev/null 2>&1 || { log "missing required tool: $tool"; exit 1; }
done

want_stamp="$(cat "$SRC/package.json" "$SRC/package-lock.json" | sha256sum | cut -d' ' -f1)"

installed_version() {
  [ -f "$PKG_DIR/package.json" ] || return 0
  node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).version||""))' \
    "$PKG_DIR/package.json" 2>/dev/null || true
}

if [ "${PI_LSP_FORCE_INSTALL:-0}" != "1" ] \
  && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want_stamp" ] \
  && [ -x "$DEST/node_modules/.bin/pi" ] \
  && [ "$(installed_version)" = "$WANT_VERSION" ]; then
  log "pi $WANT_VERSION already installed in .tools/pi (lock unchanged), nothing to do"
  exit 0
fi

log "installing @mariozechner/pi-coding-agent@$WANT_VERSION into .tools/pi (npm ci, pinned lock file)"
mkdir -p "$DEST"
cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
rm -f "$STAMP"

# Keep npm's cache and logs inside .tools so nothing lands under $HOME.
export npm_config_cache="${npm_config_cache:-$REPO/.tools/npm-cache}"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
start=$(date +%s)
# npm >= 11 skips dependency install scripts by default; Pi does not need them.
timeout 900 npm ci --prefix "$DEST" --no-audit --no-fund --loglevel=error >&2
log "npm ci finished in $(( $(date +%s) - start ))s"

got="$(installed_version)"
if [ "$got" != "$WANT_VERSION" ]; then
  log "expected pi $WANT_VERSION, found '${got:-nothing}' in $PKG_DIR"
  exit 1
fi
if [ ! -x "$DEST/node_modules/.bin/pi" ]; then
  log "missing $DEST/node_modules/.bin/pi"
  exit 1
fi
printf '%s\n' "$want_stamp" >"$STAMP"
log "pi $WANT_VERSION installed: .tools/pi/node_modules/.bin/pi"
