#!/usr/bin/env bash
# Runs the reliability suite (docs/RELIABILITY.md) and prints its figures: every
# "RESULT ..." line the tests log, then "N passed, M failed" counting the steps.
#
#   bash scripts/reliability.sh                 # default variants, fuzz 10s per target
#   PI_LSP_LONG=1 bash scripts/reliability.sh   # also the 60 s load test on a 100 MB session
#   FUZZTIME=1m bash scripts/reliability.sh
#
# Needs Go, Node 20 and real Pi (installed here with scripts/install-pi.sh). Nothing is
# written under the real $HOME. The full log is kept in $PI_LSP_RELIABILITY_LOG
# (default: a temp file, named at the end).
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
source "$REPO/scripts/isolate.sh"
keep_caches
T="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-reliability.XXXXXX")"
trap 'rm -rf "$T"' EXIT
isolated_home "$T"
export PI_LSP_REQUIRE_ORACLE=1
LOG="${PI_LSP_RELIABILITY_LOG:-$(mktemp "${TMPDIR:-/tmp}/pi-lsp-reliability-log.XXXXXX")}"
: >"$LOG"

passed=0 failed=0
run() { # name command...: runs a step, logs it, prints its RESULT lines
  local name=$1; shift
  printf '\n==== %s: %s\n' "$name" "$*" | tee -a "$LOG"
  local out="$T/step.log"
  "$@" >"$out" 2>&1
  local rc=$?
  cat "$out" >>"$LOG"
  grep -a 'RESULT\|^--- FAIL\|^FAIL\|^panic\|passed, .* failed$' "$out" | sed -E 's/^ +[a-z_]+_test\.go:[0-9]+: //'
  if [ $rc -eq 0 ]; then passed=$((passed + 1)); echo "==== $name: PASS"; else failed=$((failed + 1)); echo "==== $name: FAIL (exit $rc)"; fi
}

run install-pi bash scripts/install-pi.sh
run reliability go test -count=1 -v -timeout 30m ./internal/reliability
run llm-faults go test -count=1 -v -timeout 10m -run 'TestNavigateSummaryLLMFaults' ./internal/branch
run stalled-model go test -count=1 -v -timeout 10m -run 'TestOpenAIStall|TestOpenAIKeepAliveBeforeLateAnswer|TestOpenAIBoundStopsKeepAlivesForever|TestOpenAICancelMidStall|TestE2ECompactStalledModel|TestE2ECompactKeepAliveModel|TestE2ECompactInterruptMidStall|TestE2ELSPStalledModel' ./internal/compaction ./cmd/pi-lsp
run hostile-input go test -count=1 -v -timeout 10m -run 'TestHostileInputMemoryBounded|TestTreeWithDuplicateIDsIsAForest' ./internal/session
run hostile-frames go test -count=1 -v -timeout 10m -run 'TestFramingLargeHostileFrames' ./internal/rpc
run load-no-tree env PI_LSP_LOAD_TREE=0 go test -count=1 -v -timeout 30m -run 'TestLoadMixedRequests' ./internal/reliability
run fuzz bash scripts/fuzz.sh "${FUZZTIME:-10s}"

echo
echo "full log: $LOG"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
