#!/usr/bin/env bash
# Every test layer of pi-lsp, in order, each bounded in time:
#   1. static checks (gofmt, go vet)
#   2. real Pi 0.73.1 installed from npm (the differential tests' oracle)
#   3. Go tests with the race detector: unit, differential against real Pi, in-process LSP
#      harness, process level (PI_LSP_REQUIRE_ORACLE=1: a missing oracle fails, never skips).
#      Every fuzz target runs here as an ordinary test over its committed seeds (f.Add and
#      testdata/fuzz/FuzzX/): the gate never explores, so it cannot fail on an input it made
#      up itself. Exploration is `make fuzz`, outside the gate; what it
#      finds is committed as a seed with its fix.
#   4. drift check: genuine sessions regenerated with the real pi CLI keep their structure
#   5. vscode-jsonrpc conformance (the transport VS Code uses)
#   6. real Neovim 0.10 and 0.12, headless
#   7. real VS Code (code-server) driven by real chromium
#   8. dist: make dist, every artifact checked and every install path tried (the archive,
#      go install, the Pi package in real Pi, the linux-x64 VS Code package in code-server,
#      the Neovim recipes, the version handshake): scripts/test-dist.sh
# Nothing is written under the real $HOME: HOME, XDG_* and PI_CODING_AGENT_DIR point into a
# temp dir. The last line is "N passed, M failed" counting layers; the exit status is
# non-zero if any layer failed.
#
#   bash scripts/test.sh                 # everything
#   PI_LSP_LAYERS="go jsonrpc" bash scripts/test.sh
#   PI_LSP_LONG=1 bash scripts/test.sh   # also the long reliability variants
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
LAYERS="${PI_LSP_LAYERS:-static pi go drift jsonrpc nvim vscode dist}"

# Keep the Go caches where they are before HOME moves.
source "$REPO/scripts/isolate.sh"
keep_caches
T="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-test.XXXXXX")"
trap 'rm -rf "$T"' EXIT
isolated_home "$T"

passed=0 failed=0 failures=()
layer() { # name seconds command...
  local name=$1 secs=$2; shift 2
  case " $LAYERS " in *" $name "*) ;; *) return 0 ;; esac
  printf '\n==== layer %s (limit %ss) ====\n' "$name" "$secs"
  local start=$SECONDS
  # Shell functions run in a child bash (exported below) so timeout can bound them.
  timeout --kill-after=30 "$secs" bash -c '"$@"' layer "$@"
  local rc=$?
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1)); printf '==== layer %s: PASS (%ss)\n' "$name" $((SECONDS - start))
  else
    failed=$((failed + 1)); failures+=("$name"); printf '==== layer %s: FAIL (exit %s, %ss)\n' "$name" $rc $((SECONDS - start))
  fi
}

static_checks() {
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go'))
  if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; return 1; fi
  go vet ./...
}

go_tests() {
  PI_LSP_REQUIRE_ORACLE=1 go test -race -count=1 -timeout 25m ./...
}

export -f static_checks go_tests

layer static 300 static_checks
layer pi 600 bash scripts/install-pi.sh
layer go 1800 go_tests
layer drift 300 bash scripts/check-corpus-drift.sh
layer jsonrpc 300 bash scripts/test-jsonrpc.sh
layer nvim 1200 bash scripts/test-nvim.sh
layer vscode 1800 bash scripts/test-vscode.sh
layer dist 1800 bash scripts/test-dist.sh

echo
[ ${#failures[@]} -gt 0 ] && echo "failed layers: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
