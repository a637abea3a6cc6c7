#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server 4.100.3 + Debian's
# chromium driven by playwright-core). Installs what it needs (scripts/install-code-server.sh,
# scripts/install-pi.sh), builds the .vsix (scripts/build-vsix.sh: server, tsc, unit tests),
# then runs test/vscode/e2e.mjs with HOME, XDG_* and PI_CODING_AGENT_DIR in a temp dir.
# Screenshots: test-artifacts/vscode/. Last line: "N passed, M failed"; non-zero exit on failure.
#
#   bash scripts/test-vscode.sh
#   PI_LSP_UPDATE_DOCS=1 bash scripts/test-vscode.sh   # also refresh docs/img/vscode-views.png
#   PI_LSP_E2E_SUMMARIZER=extractive bash scripts/test-vscode.sh   # no fake LLM, no Cancel step
#   PI_LSP_KEEP_TMP=1 ...                              # keep the temp dir on failure
#   PI_VSCODE_TEST=context-panel bash scripts/test-vscode.sh   # another driver: test/vscode/<name>.mjs
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ART="$REPO/test-artifacts/vscode"
log() { printf 'test-vscode: %s\n' "$*" >&2; }
start=$(date +%s)

T="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-test-vscode.XXXXXX")"
PGID=""
cleanup() {
  local rc=$?
  if [ -n "$PGID" ]; then
    kill -TERM -- "-$PGID" 2>/dev/null || true
    sleep 1
    kill -KILL -- "-$PGID" 2>/dev/null || true
  fi
  if [ "$rc" = 0 ] || [ "${PI_LSP_KEEP_TMP:-0}" != 1 ]; then rm -rf "$T"; else log "kept $T"; fi
  exit "$rc"
}
trap cleanup EXIT INT TERM
fail_early() { log "$1"; echo "0 passed, 1 failed"; exit 1; }

# 1. Tools (idempotent; apt for chromium/ripgrep only when missing).
bash "$REPO/scripts/install-code-server.sh" || fail_early "install-code-server.sh failed"
bash "$REPO/scripts/install-pi.sh" || fail_early "install-pi.sh failed"
# 2. Server, extension, unit tests, .vsix (the command table test must see the server).
PI_LSP_REQUIRE_SERVER=1 bash "$REPO/scripts/build-vsix.sh" || fail_early "build-vsix.sh failed"
log "tools and .vsix ready after $(( $(date +%s) - start ))s"

# 3. The test, in its own process group with a time bound; nothing under the real $HOME.
source "$REPO/scripts/isolate.sh"
isolated_home "$T"
export XDG_RUNTIME_DIR="$T/xdg/run" TMPDIR="$T/tmp"
mkdir -p "$XDG_RUNTIME_DIR" "$TMPDIR" "$ART"
chmod 700 "$XDG_RUNTIME_DIR"
unset VSCODE_IPC_HOOK_CLI DISPLAY || true

docs_args=()
if [ "${PI_LSP_UPDATE_DOCS:-0}" = 1 ]; then
  mkdir -p "$REPO/docs/img"
  docs_args=(--docs-screenshot "$REPO/docs/img/vscode-views.png")
fi

setsid timeout -k 10 460 node "$REPO/test/vscode/${PI_VSCODE_TEST:-e2e}.mjs" \
  --vsix "$REPO/editors/vscode/pi-lsp.vsix" --tmp "$T" --artifacts "$ART" "${docs_args[@]}" "$@" &
PGID=$!
set +e
wait "$PGID"
rc=$?
set -e
kill -TERM -- "-$PGID" 2>/dev/null || true
sleep 0.5
kill -KILL -- "-$PGID" 2>/dev/null || true
PGID=""
log "finished in $(( $(date +%s) - start ))s (exit $rc)"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  log "e2e.mjs timed out"
  echo "0 passed, 1 failed"
fi
exit "$rc"
