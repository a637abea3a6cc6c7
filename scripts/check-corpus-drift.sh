#!/usr/bin/env bash
# Regenerate the genuine corpus with real Pi into a temp dir and compare its
# STRUCTURE (entry types, message roles, stop reasons, parent/reference shape;
# not ids, timestamps, uuids or paths) with testdata/corpus/genuine/.
# Exit 1 on drift (e.g. a different Pi version writes other entries).
#
#   bash scripts/check-corpus-drift.sh            # check
#   bash scripts/check-corpus-drift.sh --update   # check, then replace the checked-in files
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GENUINE="$REPO/testdata/corpus/genuine"
log() { printf 'check-corpus-drift: %s\n' "$*" >&2; }

update=0
if [ "${1:-}" = "--update" ]; then
  update=1
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--update]" >&2
  exit 2
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-drift.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

timeout -k 10 300 bash "$REPO/scripts/gen-corpus.sh" "$TMP/generated"

set +e
timeout -k 5 60 node "$REPO/test/pi/corpus-structure.mjs" --compare "$GENUINE" "$TMP/generated"
rc=$?
set -e

if [ "$update" = 1 ]; then
  cp "$TMP"/generated/*.jsonl "$GENUINE"/
  log "replaced the checked-in genuine corpus with the fresh generation"
  exit 0
fi
if [ "$rc" -ne 0 ]; then
  log "the genuine corpus drifted from what real Pi writes now (see above); if intended, rerun with --update and review the diff"
  exit 1
fi
log "genuine corpus matches real Pi's output structurally"
