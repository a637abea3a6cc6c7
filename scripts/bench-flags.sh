# The command line of the benchmark scripts (bench.sh, bench-budget.sh); source it, then
#   bench_flags DEFAULT_RUNS "$@"
# sets QUICK=1 for --quick (a short run: one run of the small sizes), WRITE=1 for
# --write-docs (rewrite the script's table in docs/BENCHMARKS.md), and RUNS, the runs of
# each measurement: PI_LSP_BENCH_RUNS, else DEFAULT_RUNS, and 1 with --quick. Any other
# flag is refused (exit 2).
bench_flags() {
  RUNS="${PI_LSP_BENCH_RUNS:-$1}"
  shift
  QUICK=0 WRITE=0
  for a in "$@"; do
    case "$a" in --quick) QUICK=1 ;; --write-docs) WRITE=1 ;; *) echo "unknown flag $a" >&2; exit 2 ;; esac
  done
  if [ "$QUICK" = 1 ]; then RUNS=1; fi
}
