#!/usr/bin/env bash
# Generate genuine Pi 0.73.1 session files with the real `pi --mode rpc` CLI,
# offline, against the fake OpenAI server (test/pi/fake-openai.mjs).
#
#   bash scripts/gen-corpus.sh OUTDIR [scenario ...]
#
# OUTDIR receives <name>.jsonl files, byte for byte as Pi wrote them (see
# testdata/corpus/genuine/README.md). Needs Node and .tools/pi (installed by
# scripts/install-pi.sh, which this script runs first; a no-op when present).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf 'gen-corpus: %s\n' "$*" >&2; }

if [ $# -lt 1 ]; then
  echo "usage: $0 OUTDIR [scenario ...]" >&2
  exit 2
fi
OUT="$1"
shift
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

if [ -z "${PI_LSP_PI_DIR:-}" ]; then
  bash "$REPO/scripts/install-pi.sh"
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-corpus.XXXXXX")"
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
setsid timeout -k 5 300 node "$REPO/test/pi/fake-openai.mjs" 0 "$TMP/requests.jsonl" >"$TMP/port" 2>"$TMP/fake.err" &
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
log "fake OpenAI server on 127.0.0.1:$PORT"

set +e
setsid timeout -k 5 240 node "$REPO/test/pi/rpc-scenarios.mjs" --port "$PORT" --out "$OUT" --work "$TMP/run" "$@" &
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
