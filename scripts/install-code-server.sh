#!/usr/bin/env bash
# Install what the VS Code end-to-end test needs, pinned and idempotent:
#   .tools/code-server   code-server 4.100.3 (VS Code 1.100.3, the last release for Node 20)
#   .tools/playwright    playwright-core 1.65.1 (drives Debian's chromium; no browser download)
#   chromium, ripgrep    from apt (only when missing; needs root)
#
#   bash scripts/install-code-server.sh                         # install or verify
#   PI_LSP_FORCE_INSTALL=1 bash scripts/install-code-server.sh  # reinstall
#
# code-server's own postinstall.sh cannot run here (it insists on --unsafe-perm, its nested
# npm install trips over npm 11's allowScripts, node-pty runs an interactive npx, ripgrep and
# argon2 download from github.com), so this script does its steps by hand:
#   1. npm ci of code-server with "allowScripts": {argon2: true, code-server: false}; argon2
#      falls back to a source build against /usr/include/node (npm_config_nodedir=/usr);
#   2. lib/vscode: allow the five native modules' scripts and npm install --omit=dev;
#   3. node_modules.asar + bin symlinks, npm install --omit=dev in lib/vscode/extensions;
#   4. @vscode/ripgrep's binary is Debian's /usr/bin/rg (symlinked).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CS_SRC="$REPO/test/vscode/code-server"
PW_SRC="$REPO/test/vscode/playwright"
CS_DEST="$REPO/.tools/code-server"
PW_DEST="$REPO/.tools/playwright"
CS_VERSION="4.100.3"
PW_VERSION="1.65.1"
CS_PKG="$CS_DEST/node_modules/code-server"
VSC="$CS_PKG/lib/vscode"

log() { printf 'install-code-server: %s\n' "$*" >&2; }

# Keep npm's cache and logs inside .tools so nothing lands under $HOME.
export npm_config_cache="${npm_config_cache:-$REPO/.tools/npm-cache}"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export npm_config_nodedir=/usr npm_config_yes=true PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

pkg_version() { # path/to/package.json -> version or empty
  [ -f "$1" ] || return 0
  node -e 'try{process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).version||""))}catch(e){}' "$1"
}

# ---- apt: chromium and ripgrep -------------------------------------------------------------
need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v rg >/dev/null 2>&1 || need_apt+=(ripgrep)
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    log "missing ${need_apt[*]}: run 'sudo apt-get install -y ${need_apt[*]}'"
    exit 1
  fi
  log "apt-get install -y ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! timeout 600 apt-get install -y "${need_apt[@]}" >&2; then
    timeout 300 apt-get update >&2
    timeout 900 apt-get install -y "${need_apt[@]}" >&2
  fi
fi
for tool in node npm sha256sum timeout chromium rg make g++ python3; do
  command -v "$tool" >/dev/null 2>&1 || { log "missing required tool: $tool"; exit 1; }
done
[ -f /usr/include/node/node_api.h ] || { log "missing Node headers (/usr/include/node): apt-get install -y libnode-dev"; exit 1; }

# ---- code-server ---------------------------------------------------------------------------
cs_stamp_want="$(cat "$CS_SRC/package.json" "$CS_SRC/package-lock.json" "$0" | sha256sum | cut -d' ' -f1)"
cs_ok() {
  [ -f "$CS_DEST/.install-stamp" ] && [ "$(cat "$CS_DEST/.install-stamp")" = "$cs_stamp_want" ] \
    && [ "$(pkg_version "$CS_PKG/package.json")" = "$CS_VERSION" ] \
    && [ -e "$VSC/node_modules/@vscode/ripgrep/bin/rg" ] \
    && [ -e "$VSC/node_modules.asar" ]
}
if [ "${PI_LSP_FORCE_INSTALL:-0}" != 1 ] && cs_ok; then
  log "code-server $CS_VERSION already installed in .tools/code-server, nothing to do"
else
  start=$(date +%s)
  log "installing code-server $CS_VERSION into .tools/code-server"
  rm -rf "$CS_DEST"
  mkdir -p "$CS_DEST"
  cp "$CS_SRC/package.json" "$CS_SRC/package-lock.json" "$CS_DEST/"
  # 1. code-server itself; argon2's script is allowed (source build), code-server's is not.
  timeout 900 npm ci --prefix "$CS_DEST" --no-audit --no-fund --loglevel=error >&2
  if ! node -e 'require(process.argv[1])' "$CS_DEST/node_modules/argon2" 2>/dev/null; then
    log "building argon2 from source"
    (cd "$CS_DEST" && timeout 600 npm rebuild argon2 >&2)
  fi
  # 2. VS Code's own dependencies with the native modules it needs on Linux.
  node - "$VSC/package.json" <<'EOF'
const fs = require("fs");
const file = process.argv[2];
const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
pkg.allowScripts = {
  "node-pty": true, "@vscode/spdlog": true, "native-watchdog": true,
  "@vscode/deviceid": true, "@parcel/watcher": true,
  "kerberos": false, "@vscode/ripgrep": false,
  "@vscode/windows-process-tree": false, "@vscode/windows-registry": false,
  "windows-foreground-love": false,
};
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
EOF
  (cd "$VSC" && timeout 1200 npm install --omit=dev --no-audit --no-fund --loglevel=error >&2)
  # 3. The rest of postinstall.sh.
  (cd "$VSC" && rm -rf node_modules.asar && ln -s node_modules node_modules.asar)
  (cd "$VSC/bin/remote-cli" && rm -f code-server && ln -s code-linux.sh code-server)
  (cd "$VSC/bin/helpers" && rm -f browser.sh && ln -s browser-linux.sh browser.sh)
  (cd "$VSC/extensions" && timeout 900 npm install --omit=dev --no-audit --no-fund --loglevel=error >&2)
  # 4. ripgrep from Debian instead of a github.com download.
  mkdir -p "$VSC/node_modules/@vscode/ripgrep/bin"
  ln -sf "$(command -v rg)" "$VSC/node_modules/@vscode/ripgrep/bin/rg"
  for m in node-pty @vscode/spdlog @parcel/watcher native-watchdog; do
    (cd "$VSC" && node -e 'require(process.argv[1])' "$m") \
      || { log "native module $m does not load"; exit 1; }
  done
  printf '%s\n' "$cs_stamp_want" >"$CS_DEST/.install-stamp"
  log "code-server $CS_VERSION installed in $(( $(date +%s) - start ))s"
fi

# ---- playwright-core -----------------------------------------------------------------------
pw_stamp_want="$(cat "$PW_SRC/package.json" "$PW_SRC/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ "${PI_LSP_FORCE_INSTALL:-0}" != 1 ] && [ -f "$PW_DEST/.install-stamp" ] \
  && [ "$(cat "$PW_DEST/.install-stamp")" = "$pw_stamp_want" ] \
  && [ "$(pkg_version "$PW_DEST/node_modules/playwright-core/package.json")" = "$PW_VERSION" ]; then
  log "playwright-core $PW_VERSION already installed in .tools/playwright, nothing to do"
else
  log "installing playwright-core $PW_VERSION into .tools/playwright"
  rm -rf "$PW_DEST"
  mkdir -p "$PW_DEST"
  cp "$PW_SRC/package.json" "$PW_SRC/package-lock.json" "$PW_DEST/"
  timeout 600 npm ci --prefix "$PW_DEST" --no-audit --no-fund --loglevel=error >&2
  printf '%s\n' "$pw_stamp_want" >"$PW_DEST/.install-stamp"
fi
log "ready: node .tools/code-server/node_modules/code-server/out/node/entry.js, /usr/bin/chromium, .tools/playwright"
