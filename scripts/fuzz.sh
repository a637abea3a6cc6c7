#!/usr/bin/env bash
# Runs every Go fuzz target of the repository for DURATION each (default 10s):
#   go test -run '^$' -fuzz '^FuzzX$' -fuzztime DURATION -fuzzminimizetime MIN ./pkg
# This is exploration, outside the CI gate (`make test` runs the committed seeds only).
#
# Minimization is bounded (MIN, default 2s; PI_LSP_FUZZ_MINIMIZE): with Go's default of
# 60s per new interesting input, every worker sits in minimization and the run reports
# 0 execs/s after its first few seconds (golang/go#48820); the stats count no execs made
# while minimizing. A crasher is still minimized, within the same bound.
# Targets are found by scanning *_test.go files for "func FuzzX(", so new ones are picked
# up. A failing input is written by Go to the package's testdata/fuzz/FuzzX/ (commit it
# as a regression seed once fixed). The last line is "N passed, M failed"; the exit
# status is non-zero if any target failed.
#
#   bash scripts/fuzz.sh            # 10s each
#   bash scripts/fuzz.sh 2m         # longer
#   PI_LSP_FUZZ_ONLY=FuzzParse bash scripts/fuzz.sh 30s
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
DURATION="${1:-10s}"
ONLY="${PI_LSP_FUZZ_ONLY:-}"
MINIMIZE="${PI_LSP_FUZZ_MINIMIZE:-2s}"

passed=0 failed=0 failures=()
while IFS= read -r line; do
  file=${line%%:*}
  name=$(sed -E 's/^.*func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
  pkg="./$(dirname "$file")"
  if [ -n "$ONLY" ] && [ "$name" != "$ONLY" ]; then continue; fi
  printf '\n---- %s %s (%s)\n' "$pkg" "$name" "$DURATION"
  # The fuzz time does not include building and the seed run; bound the whole thing.
  out=$(mktemp)
  timeout --kill-after=30 900 go test -run '^$' -fuzz "^${name}\$" -fuzztime "$DURATION" -fuzzminimizetime "$MINIMIZE" "$pkg" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  last=$(grep -a '^fuzz: elapsed' "$out" | tail -1)
  rm -f "$out"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "RESULT fuzz $pkg $name: ${last#fuzz: }"
  else
    failed=$((failed + 1)); failures+=("$pkg $name")
    echo "RESULT fuzz $pkg $name: FAILED (exit $rc) ${last#fuzz: }"
  fi
done < <(grep -rEn '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' --include='*_test.go' internal cmd 2>/dev/null | sort)

echo
[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
