#!/usr/bin/env bash
# The dist layer of scripts/test.sh (make test-dist): `make dist`, then every artifact
# checked and every install path of docs/install.md tried, as a user without the repository's
# toolchain would:
#   dist        scripts/dist.sh, timed
#   repro       the linux/amd64 archive built again is byte-identical
#   artifacts   test/dist/check.mjs: the file list, SHA256SUMS, each archive's entries, modes,
#               times and binary (file(1): platform, static on linux, stripped), each VS Code
#               package's files (exactly its binary), manifest and README, the Pi package's
#               manifest
#   archive     the linux/amd64 archive unpacked, pi-lsp put on PATH: version, demo
#   go-install  go install github.com/pi-lsp/pi-lsp/cmd/pi-lsp@v<version> from a module
#               proxy (a local one serving this checkout as that version): it says the version
#   pi-package  test/dist/pi-package.mjs: real Pi 1.6.0 installs the Pi package from a
#               directory and from an npm registry, loads it, the bridge registers and the
#               archive's pi-lsp writes through it
#   vscode      test/vscode/dist-e2e.mjs: the linux-x64 package in code-server with no
#               pi-lsp on PATH runs its bundled binary; a server of another version is named
#   nvim        test/nvim/recipe_init.lua + test_recipe.lua on Neovim 0.10 and 0.12: the
#               lazy.nvim, packages (pack/*/start link), vim.pack (0.12) and vim.lsp.config
#               (0.11+) recipes, and the version handshake
# Installs what it needs (file and unzip from apt when missing, scripts/install-pi.sh,
# install-code-server.sh, install-nvim.sh). HOME, XDG_* and PI_CODING_AGENT_DIR point into
# a temp dir; every process has a time bound. Last line: "N passed, M failed".
#
#   bash scripts/test-dist.sh
#   PI_LSP_DIST_STEPS="artifacts nvim" bash scripts/test-dist.sh   # reuse dist/ for some steps
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
STEPS="${PI_LSP_DIST_STEPS:-dist repro artifacts archive go-install pi-package vscode nvim}"
VERSION="$(cat VERSION)"
ART="$REPO/test-artifacts/dist"
log() { printf 'test-dist: %s\n' "$*" >&2; }

source "$REPO/scripts/isolate.sh"
keep_caches
REAL_GOMODCACHE="$GOMODCACHE"
T="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-test-dist.XXXXXX")"
T="$(cd "$T" && pwd -P)"
PGIDS=()
cleanup() {
  for g in "${PGIDS[@]}"; do kill -KILL -- "-$g" 2>/dev/null || true; done
  chmod -R u+w "$T" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
isolated_home "$T"
export XDG_RUNTIME_DIR="$T/xdg/run" TMPDIR="$T/tmp"
mkdir -p "$XDG_RUNTIME_DIR" "$TMPDIR" "$ART"
chmod 700 "$XDG_RUNTIME_DIR"

passed=0 failed=0 failures=()
# step NAME COMMAND...: runs a step that is in STEPS and counts it.
step() {
  local name=$1; shift
  case " $STEPS " in *" $name "*) ;; *) return 0 ;; esac
  local start=$SECONDS
  printf -- '--- %s\n' "$name"
  if "$@"; then
    passed=$((passed + 1)); printf -- '--- %s: PASS (%ss)\n' "$name" $((SECONDS - start))
  else
    failed=$((failed + 1)); failures+=("$name"); printf -- '--- %s: FAIL (%ss)\n' "$name" $((SECONDS - start))
  fi
}
# bounded SECONDS COMMAND...: COMMAND in its own process group, killed with it after SECONDS.
bounded() {
  local secs=$1; shift
  setsid timeout -k 10 "$secs" "$@" &
  local pid=$!
  PGIDS+=("$pid")
  wait "$pid"
}

# ---- tools ----------------------------------------------------------------------------------
need_apt=()
command -v file >/dev/null 2>&1 || need_apt+=(file)
command -v unzip >/dev/null 2>&1 || need_apt+=(unzip)
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    log "apt-get install -y ${need_apt[*]}"
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y "${need_apt[@]}" >&2 \
      || { timeout 300 apt-get update >&2 && DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y "${need_apt[@]}" >&2; }
  else
    log "missing ${need_apt[*]}: run 'sudo apt-get install -y ${need_apt[*]}'"
  fi
fi

DIST="$REPO/dist"
ARC="$T/archive" # the linux/amd64 archive, unpacked: the pi-lsp a user puts on PATH
EPOCH="$(git log -1 --format=%ct)"

do_dist() {
  bounded 1700 bash scripts/dist.sh
}

do_repro() {
  local again="$T/again" name="pi-lsp_${VERSION}_linux_amd64.tar.gz"
  PI_LSP_DIST_ONLY=archives PI_LSP_DIST_TARGETS=linux/amd64 PI_LSP_DIST_DIR="$again" bounded 600 bash scripts/dist.sh 2>/dev/null || return 1
  if cmp -s "$DIST/$name" "$again/$name"; then
    echo "ok   $name rebuilt is byte-identical ($(sha256sum "$again/$name" | cut -c1-16)…)"
  else
    echo "FAIL $name rebuilt differs"; return 1
  fi
}

do_artifacts() {
  bounded 300 node test/dist/check.mjs --dist "$DIST" --epoch "$EPOCH"
}

unpack_archive() {
  [ -x "$ARC/pi-lsp" ] && return 0
  mkdir -p "$ARC" && tar -xzf "$DIST/pi-lsp_${VERSION}_linux_amd64.tar.gz" -C "$ARC"
}

do_archive() {
  unpack_archive || return 1
  local out
  out="$(PATH="$ARC:$PATH" bounded 30 pi-lsp version)" && [ "$out" = "pi-lsp $VERSION" ] \
    || { echo "FAIL pi-lsp on PATH says '$out', want 'pi-lsp $VERSION'"; return 1; }
  echo "ok   pi-lsp from the archive on PATH: $out"
  out="$(cd "$T" && PATH="$ARC:$PATH" bounded 60 pi-lsp demo 2>&1)" || { echo "FAIL pi-lsp demo: $out"; return 1; }
  printf '%s\n' "$out" | grep -q "tokens" || { echo "FAIL pi-lsp demo printed no token figures: ${out:0:300}"; return 1; }
  echo "ok   pi-lsp demo compacts the embedded session offline"
}

# go install MODULE/cmd/pi-lsp@vVERSION, as a Go user would, from a module proxy that serves
# this checkout as that version (the Go module proxy itself has not seen it); the other
# modules come from the local module cache, laid out as a proxy.
do_go_install() {
  local mod=github.com/pi-lsp/pi-lsp proxy="$T/goproxy" v="v$VERSION"
  local at="$proxy/$mod/@v"
  mkdir -p "$at"
  [ "$(head -1 go.mod)" = "module $mod" ] || { echo "FAIL go.mod is not module $mod"; return 1; }
  echo "$v" >"$at/list"
  printf '{"Version":"%s","Time":"%s"}\n' "$v" "$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ)" >"$at/$v.info"
  cp go.mod "$at/$v.mod"
  # The module's files: what git tracks or would track, as regular files.
  git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do [ -f "$f" ] && [ ! -L "$f" ] && printf '%s\n' "$f"; done >"$T/modfiles"
  timeout 120 go run ./tools/archive -o "$at/$v.zip" -epoch "$EPOCH" -prefix "$mod@$v/" $(cat "$T/modfiles") || return 1
  # -trimpath and CGO_ENABLED=0: the settings make dist compiled with, so the packages come
  # from the build cache.
  local out
  CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-trimpath -modcacherw" GOPROXY="file://$proxy,file://$REAL_GOMODCACHE/cache/download" \
    GOSUMDB=off GOMODCACHE="$T/gomodcache" GOBIN="$T/gobin" bounded 600 go install "$mod/cmd/pi-lsp@$v" || { echo "FAIL go install $mod/cmd/pi-lsp@$v"; return 1; }
  out="$("$T/gobin/pi-lsp" version)"
  [ "$out" = "pi-lsp $VERSION" ] || { echo "FAIL the go-installed pi-lsp says '$out', want 'pi-lsp $VERSION'"; return 1; }
  echo "ok   go install $mod/cmd/pi-lsp@$v: $out"
}

do_pi_package() {
  unpack_archive || return 1
  bash scripts/install-pi.sh >/dev/null 2>&1 || { echo "FAIL scripts/install-pi.sh"; return 1; }
  bounded 300 node test/dist/pi-package.mjs --tgz "$DIST/pi-lsp-pi-$VERSION.tgz" --bin "$ARC/pi-lsp" --tmp "$T/pi-package"
}

# A pi-lsp of the next minor version, for the handshake checks.
MISMATCH_VERSION="$(echo "$VERSION" | awk -F. '{print $1"."($2+1)".0"}')"
mismatch_bin() {
  [ -x "$T/mismatch/pi-lsp" ] && return 0
  CGO_ENABLED=0 timeout 600 go build -trimpath -ldflags "-s -w -buildid= -X main.Version=$MISMATCH_VERSION" -o "$T/mismatch/pi-lsp" ./cmd/pi-lsp
}

do_vscode() {
  mismatch_bin || return 1
  bash scripts/install-code-server.sh >/dev/null || { echo "FAIL scripts/install-code-server.sh"; return 1; }
  (unset VSCODE_IPC_HOOK_CLI DISPLAY; bounded 240 node test/vscode/dist-e2e.mjs --vsix "$DIST/pi-lsp-linux-x64-$VERSION.vsix" \
    --mismatch-bin "$T/mismatch/pi-lsp" --mismatch-version "$MISMATCH_VERSION" --tmp "$T/vscode" --artifacts "$ART/vscode")
}

# One Neovim recipe: a workspace with a genuine Pi session, Neovim headless with
# recipe_init.lua as its init, test_recipe.lua's verdict.
nvim_recipe() { # VERSION RECIPE WANT_CMD [VAR=VALUE...]
  local ver=$1 recipe=$2 want=$3; shift 3
  local nvim="$REPO/.tools/bin/nvim-$ver" root="$T/nvim/$ver-$recipe"
  local ws="$root/workspace" agent="$root/agent"
  mkdir -p "$ws/sub" "$agent" "$root/home" "$root/xdg/config" "$root/xdg/data" "$root/xdg/state" "$root/xdg/cache" "$root/xdg/run" "$root/tmp"
  chmod 700 "$root/xdg/run"
  printf '# notes\n' >"$ws/notes.md"
  printf '# other\n' >"$ws/sub/other.md"
  local src="$REPO/testdata/corpus/genuine/full-main.jsonl" enc sdir session
  enc="--$(printf '%s' "${ws#/}" | tr '/\\:' '---')--"
  sdir="$agent/sessions/$enc"
  mkdir -p "$sdir"
  session="$sdir/$(node -e 'const h=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8").split("\n")[0]);process.stdout.write(`${h.timestamp.replace(/[:.]/g,"-")}_${h.id}.jsonl`)' "$src")"
  cp "$src" "$session"
  local rc=0
  (
    cd "$ws" || exit 97
    exec env -u NVIM -u NVIM_APPNAME -u VIMINIT -u MYVIMRC HOME="$root/home" TMPDIR="$root/tmp" \
      XDG_CONFIG_HOME="$root/xdg/config" XDG_DATA_HOME="$root/xdg/data" XDG_STATE_HOME="$root/xdg/state" \
      XDG_CACHE_HOME="$root/xdg/cache" XDG_RUNTIME_DIR="$root/xdg/run" PI_CODING_AGENT_DIR="$agent" \
      PI_RECIPE="$recipe" PI_RECIPE_WANT_CMD="$want" PI_NVIM_TESTS="$REPO/test/nvim" PI_NVIM_RESULT="$root/verdict.json" \
      PI_NVIM_WORKSPACE="$ws" PI_NVIM_SESSION="$session" PI_NVIM_TEST_TIMEOUT_MS=50000 \
      PI_NVIM_INIT_OPTIONS='{"summarizer":"extractive"}' "$@" \
      setsid timeout -k 5 60 "$nvim" --headless -u "$REPO/test/nvim/recipe_init.lua" -i NONE -n notes.md \
        -c "luafile $REPO/test/nvim/test_recipe.lua"
  ) </dev/null >"$root/nvim.log" 2>&1 || rc=$?
  local status
  status="$(node -e 'try{process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).status||"")}catch(e){}' "$root/verdict.json")"
  if [ "$rc" = 0 ] && [ "$status" = PASS ]; then
    echo "ok   nvim $ver: $recipe"
    return 0
  fi
  echo "FAIL nvim $ver: $recipe (exit $rc): $(node -e 'try{const v=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));process.stdout.write(String(v.detail).slice(0,800))}catch(e){process.stdout.write("no verdict")}' "$root/verdict.json")"
  mkdir -p "$ART/nvim-$ver-$recipe" && cp "$root/nvim.log" "$root/verdict.json" "$ART/nvim-$ver-$recipe/" 2>/dev/null
  sed -n '1,40p' "$root/nvim.log" | sed 's/^/    | /'
  return 1
}

do_nvim() {
  unpack_archive && mismatch_bin || return 1
  bash scripts/install-nvim.sh 0.10 0.12 >/dev/null 2>&1 || log "install-nvim.sh failed"
  local ok=0 real nopath
  real="$(pwd -P)"
  # No pi-lsp on PATH unless the recipe puts the archive's there.
  nopath="$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do [ -n "$d" ] && [ ! -e "$d/pi-lsp" ] && printf '%s:' "$d"; done)"
  # lazy.nvim's dir for a local checkout: a link to it, as the lazy/ folder would hold a clone.
  mkdir -p "$T/lazy" "$T/site/pack/pi/start"
  ln -sfn "$REPO" "$T/lazy/pi-lsp"
  # The packages recipe: pack/pi/start/pi_lsp links to the checkout's editors/neovim.
  ln -sfn "$REPO/editors/neovim" "$T/site/pack/pi/start/pi_lsp"
  # vim.pack clones a git repository: one holding this checkout's files as they are
  # (committed or not), on a main branch.
  mkdir -p "$T/git/pi-lsp"
  git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do [ -f "$f" ] && [ ! -L "$f" ] && printf '%s\0' "$f"; done \
    | tar --null -T - -cf - | tar -xf - -C "$T/git/pi-lsp"
  (cd "$T/git/pi-lsp" && git init -q -b main && git add . && git -c user.name=test -c user.email=test@localhost commit -q -m snapshot) \
    || { echo "FAIL a git repository of the checkout for vim.pack"; ok=1; }
  for ver in 0.10 0.12; do
    if [ ! -x "$REPO/.tools/bin/nvim-$ver" ]; then
      echo "FAIL nvim $ver is not installed (scripts/install-nvim.sh)"; ok=1; continue
    fi
    PATH="$nopath" nvim_recipe "$ver" lazy "$real/bin/pi-lsp" PI_RECIPE_PLUGIN_DIR="$T/lazy/pi-lsp" PATH="$nopath" || ok=1
    PATH="$nopath" nvim_recipe "$ver" pack "$real/bin/pi-lsp" PI_RECIPE_SITE="$T/site" PATH="$nopath" || ok=1
    nvim_recipe "$ver" handshake "$T/mismatch/pi-lsp" PI_RECIPE_RTP="$REPO/editors/neovim" PI_RECIPE_CMD="$T/mismatch/pi-lsp" \
      PI_RECIPE_SERVER_VERSION="$MISMATCH_VERSION" PATH="$nopath" || ok=1
    [ "$ver" = 0.10 ] && continue
    nvim_recipe "$ver" config "$ARC/pi-lsp" PI_RECIPE_RTP="$REPO/editors/neovim" PATH="$ARC:$nopath" || ok=1
    nvim_recipe "$ver" vimpack "$ARC/pi-lsp" PI_RECIPE_GIT="file://$T/git/pi-lsp" PATH="$ARC:$nopath" || ok=1
  done
  return $ok
}

step dist do_dist
step repro do_repro
step artifacts do_artifacts
step archive do_archive
step go-install do_go_install
step pi-package do_pi_package
step vscode do_vscode
step nvim do_nvim

echo
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
