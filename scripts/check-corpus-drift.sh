#!/usr/bin/env bash
# Regenerate the genuine corpora with real Pi into temp dirs and compare their
# STRUCTURE (entry types, message roles, stop reasons, parent/reference shape;
# not ids, timestamps, uuids or paths) with the checked-in files:
#   Pi 0.73.1 -> testdata/corpus/genuine/
#   Pi 1.6.0  -> testdata/corpus/genuine-1.6/
# Exit 1 on drift (e.g. a different Pi version writes other entries).
#
#   bash scripts/check-corpus-drift.sh                  # check both
#   bash scripts/check-corpus-drift.sh --pi 1.6.0       # check one (0.73.1 or 1.6.0)
#   bash scripts/check-corpus-drift.sh --update [--pi V] # check, then replace the checked-in files
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf 'check-corpus-drift: %s\n' "$*" >&2; }

update=0
versions="0.73.1 1.6.0"
while [ $# -gt 0 ]; do
  case "$1" in
    --update) update=1; shift ;;
    --pi)
      case "${2:-}" in
        0.73.1|1.6.0) versions="$2" ;;
        *) echo "$0: --pi takes 0.73.1 or 1.6.0" >&2; exit 2 ;;
      esac
      shift 2 ;;
    *) echo "usage: $0 [--update] [--pi 0.73.1|1.6.0]" >&2; exit 2 ;;
  esac
done

genuine_dir() {
  case "$1" in
    0.73.1) echo "$REPO/testdata/corpus/genuine" ;;
    1.6.0) echo "$REPO/testdata/corpus/genuine-1.6" ;;
  esac
}

TMP="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-drift.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

drifted=""
for v in $versions; do
  dir="$(genuine_dir "$v")"
  out="$TMP/generated-$v"
  log "Pi $v: regenerating into a temp dir and comparing with ${dir#$REPO/}"
  PI_LSP_PI_VERSION="$v" timeout -k 10 400 bash "$REPO/scripts/gen-corpus.sh" "$out"
  set +e
  timeout -k 5 60 node "$REPO/test/pi/corpus-structure.mjs" --compare "$dir" "$out"
  rc=$?
  set -e
  if [ "$update" = 1 ]; then
    mkdir -p "$dir"
    cp "$out"/*.jsonl "$dir"/
    log "Pi $v: replaced the checked-in files in ${dir#$REPO/} with the fresh generation"
  elif [ "$rc" -ne 0 ]; then
    drifted="$drifted $v"
  fi
done

[ "$update" = 1 ] && exit 0
if [ -n "$drifted" ]; then
  log "drift for Pi$drifted: the genuine corpus differs from what real Pi writes now (see above); if intended, rerun with --update and review the diff"
  exit 1
fi
log "genuine corpus matches real Pi's output structurally (Pi $(echo $versions | sed 's/ /, /'))"
