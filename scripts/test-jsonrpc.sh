#!/usr/bin/env bash
# Protocol conformance of bin/pi-lsp with vscode-jsonrpc 10 (the transport VS Code uses):
# builds the server, installs the pinned client (test/jsonrpc/package-lock.json), runs
# test/jsonrpc/conformance.mjs on a temp copy of a genuine Pi session.
# Last line: "N passed, M failed"; exit status non-zero on any failure.
#
#   bash scripts/test-jsonrpc.sh [--session FILE.jsonl] [--verbose]
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$REPO/test/jsonrpc"
log() { printf 'test-jsonrpc: %s\n' "$*" >&2; }

T="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-test-jsonrpc.XXXXXX")"
PGID=""
cleanup() {
  local rc=$?
  if [ -n "$PGID" ]; then kill -TERM -- "-$PGID" 2>/dev/null || true; sleep 0.2; kill -KILL -- "-$PGID" 2>/dev/null || true; fi
  if [ "$rc" = 0 ] || [ "${PI_LSP_KEEP_TMP:-0}" != 1 ]; then rm -rf "$T"; else log "kept $T"; fi
  exit $rc
}
trap cleanup EXIT INT TERM

fail_early() { log "$1"; echo "0 passed, 1 failed"; exit 1; }

# Build with the developer's own Go caches, before HOME moves to the temp dir.
(cd "$REPO" && timeout 600 go build -o bin/pi-lsp ./cmd/pi-lsp) || fail_early "go build ./cmd/pi-lsp failed"

# Nothing under the real $HOME for the test processes: npm, node and the server.
source "$REPO/scripts/isolate.sh"
keep_caches
isolated_home "$T"
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"

stamp="$DIR/node_modules/.pi-lsp-stamp"
want="$(cat "$DIR/package.json" "$DIR/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  (cd "$DIR" && timeout 300 npm ci --no-audit --no-fund --loglevel=error >&2) || fail_early "npm ci in test/jsonrpc failed"
  printf '%s\n' "$want" >"$stamp"
fi

# Own process group (setsid), bounded in time; the trap kills the whole group.
setsid timeout -k 5 180 node "$DIR/conformance.mjs" --server "$REPO/bin/pi-lsp" "$@" &
PGID=$!
set +e
wait "$PGID"
rc=$?
set -e
PGID_DONE="$PGID"
kill -KILL -- "-$PGID_DONE" 2>/dev/null || true
PGID=""
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  log "conformance.mjs timed out"
  echo "0 passed, 1 failed"
fi
exit "$rc"
