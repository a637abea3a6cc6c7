#!/usr/bin/env bash
# Compares two commits on this machine in one run, since absolute figures here move with
# the load: both are built from scratch in temp worktrees, then measured in turns, run for
# run, so that a slow spell of the machine falls on both:
#   - the Go benchmarks of the load path (PI_LSP_COMPARE_BENCH, default
#     'LoadIndex|LiveRefresh|LiveSnapshot' in ./internal/session), -count PI_LSP_COMPARE_COUNT
#     (default 8) each, compared by benchstat;
#   - `pi-lsp bench-file` on one core (taskset -c 0, GOMAXPROCS=1) on generated sessions of
#     PI_LSP_COMPARE_MB megabytes (default "16 100"), best and median of PI_LSP_BENCH_RUNS
#     (default 9).
# A benchmark, not a test: it prints the comparison and asserts nothing.
#
#   make bench-compare A=main~1 B=main     (= bash scripts/bench-compare.sh A B)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
[ $# -eq 2 ] || { echo "usage: bench-compare.sh COMMIT_A COMMIT_B" >&2; exit 2; }
A="$(git rev-parse --verify "$1^{commit}")" B="$(git rev-parse --verify "$2^{commit}")"
BENCH="${PI_LSP_COMPARE_BENCH:-LoadIndex|LiveRefresh|LiveSnapshot}"
PKG="${PI_LSP_COMPARE_PKG:-./internal/session}"
COUNT="${PI_LSP_COMPARE_COUNT:-8}"
RUNS="${PI_LSP_BENCH_RUNS:-9}"
SIZES_MB="${PI_LSP_COMPARE_MB:-16 100}"

source "$REPO/scripts/isolate.sh"
keep_caches
T="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-compare.XXXXXX")"
cleanup() { git worktree remove --force "$T/a" 2>/dev/null || true; git worktree remove --force "$T/b" 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
isolated_home "$T/home"

mkdir -p "$REPO/.tools/bin"
BENCHSTAT="$REPO/.tools/bin/benchstat"
[ -x "$BENCHSTAT" ] || GOBIN="$REPO/.tools/bin" GOFLAGS=-mod=mod go install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

for side in a b; do
  c=$([ $side = a ] && echo "$A" || echo "$B")
  git worktree add --detach -q "$T/$side" "$c"
  (cd "$T/$side" && go build -o "$T/$side.bin" ./cmd/pi-lsp && go test -c -o "$T/$side.test" "$PKG")
done
echo "A = $(git log -1 --format='%h %s' "$A")"
echo "B = $(git log -1 --format='%h %s' "$B")"

# The test binaries run in their own package dirs (testdata is relative), in turns.
pkgdir="${PKG#./}"
: >"$T/a.bench"; : >"$T/b.bench"
for _ in $(seq "$COUNT"); do
  for side in a b; do
    (cd "$T/$side/$pkgdir" && "$T/$side.test" -test.run '^$' -test.bench "$BENCH" -test.benchmem -test.count 1) >>"$T/$side.bench"
  done
done
"$BENCHSTAT" A="$T/a.bench" B="$T/b.bench"

echo
echo "one core (taskset -c 0, GOMAXPROCS=1): open + context + prepare, ms"
printf '%-8s %-10s %-10s %-10s %-10s %s\n' size "A best" "B best" "A median" "B median" "B/A (median)"
for mb in $SIZES_MB; do
  f="$T/s-$mb.jsonl"
  "$T/b.bin" gen --entries $((mb * 1000 * 1000 / 1650)) --seed "$mb" -o "$f"
  cat "$f" >/dev/null
  : >"$T/a.ms"; : >"$T/b.ms"
  for _ in $(seq "$RUNS"); do
    for side in a b; do
      taskset -c 0 env GOMAXPROCS=1 "$T/$side.bin" bench-file "$f" |
        node -e 'const r = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log((r.openMs + r.contextMs + r.prepareMs).toFixed(2))' >>"$T/$side.ms"
    done
  done
  node -e '
    const fs = require("fs");
    const [mb, a, b] = process.argv.slice(1);
    const read = (p) => fs.readFileSync(p, "utf8").trim().split("\n").map(Number).sort((x, y) => x - y);
    const A = read(a), B = read(b), med = (x) => x[Math.floor(x.length / 2)];
    console.log([mb + " MB", A[0], B[0], med(A), med(B), (med(B) / med(A)).toFixed(3)].map(String).map((s) => s.padEnd(10)).join(" "));
  ' "$mb" "$T/a.ms" "$T/b.ms"
  rm -f "$f"
done
