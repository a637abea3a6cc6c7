#!/usr/bin/env bash
# Release artifacts in dist/ (what `make dist` runs), for the version in VERSION:
#   pi-lsp_<version>_<os>_<arch>.tar.gz   linux and darwin, amd64 and arm64
#   pi-lsp_<version>_windows_<arch>.zip   windows, amd64 and arm64
#       each: pi-lsp (pi-lsp.exe), LICENSE, README.md, CHANGELOG.md. The binary is static
#       (CGO_ENABLED=0), stripped (-s -w) and reproducible (-trimpath, -buildid=, the version
#       stamped with -X main.Version); the archive's entries all have the commit's time
#       (SOURCE_DATE_EPOCH, default the last commit's) and fixed owners and modes
#       (tools/archive), so the same commit gives the same bytes.
#   pi-lsp-<target>-<version>.vsix        the VS Code package of each target (linux-x64,
#       linux-arm64, darwin-x64, darwin-arm64, win32-x64, win32-arm64), built with
#       vsce package --target, holding only that target's binary (scripts/vsix-lib.sh)
#   pi-lsp-pi-<version>.tgz               the Pi package: npm pack of editors/pi with the
#       repository's LICENSE and CHANGELOG.md (pi install npm:pi-lsp-bridge installs it)
#   SHA256SUMS                            sha256sum of every file above
#
#   bash scripts/dist.sh
#   PI_LSP_DIST_DIR=/tmp/out bash scripts/dist.sh     # somewhere else than dist/
#   PI_LSP_DIST_ONLY=archives bash scripts/dist.sh    # only the binaries' archives
#   PI_LSP_DIST_TARGETS=linux/amd64 PI_LSP_DIST_ONLY=archives bash scripts/dist.sh
# Needs Go 1.26, Node 20 and npm (the extension's npm ci installs esbuild and vsce).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
source "$REPO/scripts/vsix-lib.sh"
log() { printf 'dist: %s\n' "$*" >&2; }

for tool in go node npm sha256sum timeout; do
  command -v "$tool" >/dev/null 2>&1 || { log "missing required tool: $tool"; exit 1; }
done
VERSION="$(cat VERSION)"
OUT="${PI_LSP_DIST_DIR:-$REPO/dist}"
ONLY="${PI_LSP_DIST_ONLY:-all}"
EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
GO_TARGETS="${PI_LSP_DIST_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"
start=$(date +%s)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-dist.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export npm_config_cache="${npm_config_cache:-$REPO/.tools/npm-cache}"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

rm -rf "$OUT"
mkdir -p "$OUT"
timeout 300 go build -o "$WORK/archive" ./tools/archive

# ---- binaries and their archives ------------------------------------------------------------
# Two builds at a time (PI_LSP_DIST_JOBS): the compiler type-checks a large package on one
# core, so a second target keeps the other busy.
build_target() { # GOOS GOARCH DIR EXE
  CGO_ENABLED=0 GOOS=$1 GOARCH=$2 timeout 1800 go build -trimpath \
    -ldflags "-s -w -buildid= -X main.Version=$VERSION" -o "$3/$4" ./cmd/pi-lsp >"$3.log" 2>&1
}
jobs_max="${PI_LSP_DIST_JOBS:-2}" pids=()
for t in $GO_TARGETS; do
  goos=${t%/*} goarch=${t#*/} exe=pi-lsp
  [ "$goos" = windows ] && exe=pi-lsp.exe
  dir="$WORK/bin/pi-lsp_${VERSION}_${goos}_${goarch}"
  mkdir -p "$dir"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 0.2; done
  log "go build $goos/$goarch"
  build_target "$goos" "$goarch" "$dir" "$exe" &
  pids+=("$!:$t")
done
for p in "${pids[@]}"; do
  if ! wait "${p%%:*}"; then
    t=${p#*:}
    log "go build ${t} failed:"; cat "$WORK/bin/pi-lsp_${VERSION}_${t%/*}_${t#*/}.log" >&2
    exit 1
  fi
done
for t in $GO_TARGETS; do
  goos=${t%/*} goarch=${t#*/} exe=pi-lsp
  [ "$goos" = windows ] && exe=pi-lsp.exe
  name="pi-lsp_${VERSION}_${goos}_${goarch}"
  dir="$WORK/bin/$name"
  cp LICENSE README.md CHANGELOG.md "$dir/"
  chmod 755 "$dir/$exe"
  chmod 644 "$dir/LICENSE" "$dir/README.md" "$dir/CHANGELOG.md"
  ext=tar.gz
  [ "$goos" = windows ] && ext=zip
  "$WORK/archive" -o "$OUT/$name.$ext" -epoch "$EPOCH" -C "$dir" "$exe" LICENSE README.md CHANGELOG.md
done
log "binaries and archives after $(( $(date +%s) - start ))s"

if [ "$ONLY" != archives ]; then
  # ---- VS Code packages -----------------------------------------------------------------------
  vsix_prepare "$WORK"
  pids=()
  for target in $VSIX_TARGETS; do
    read -r goos goarch < <(vsix_goos_goarch "$target")
    exe=pi-lsp
    [ "$goos" = windows ] && exe=pi-lsp.exe
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 0.2; done
    log "vsce package --target $target"
    vsix_package "$target" "$WORK/bin/pi-lsp_${VERSION}_${goos}_${goarch}/$exe" "$OUT/pi-lsp-$target-$VERSION.vsix" >"$WORK/vsce-$target.log" 2>&1 &
    pids+=("$!:$target")
  done
  for p in "${pids[@]}"; do
    wait "${p%%:*}" || { log "vsce package --target ${p#*:} failed:"; cat "$WORK/vsce-${p#*:}.log" >&2; exit 1; }
  done
  log "VS Code packages after $(( $(date +%s) - start ))s"

  # ---- the Pi package -------------------------------------------------------------------------
  pkg="$WORK/pi-package"
  mkdir -p "$pkg" "$WORK/pack"
  cp editors/pi/package.json editors/pi/extension.ts editors/pi/README.md LICENSE CHANGELOG.md "$pkg/"
  (cd "$pkg" && timeout 120 npm pack --pack-destination "$WORK/pack" --loglevel=error >/dev/null)
  packed=("$WORK"/pack/*.tgz)
  [ "${#packed[@]}" = 1 ] && [ -s "${packed[0]}" ] || { log "npm pack wrote ${packed[*]}"; exit 1; }
  mv "${packed[0]}" "$OUT/pi-lsp-pi-$VERSION.tgz"
fi

# ---- checksums ----------------------------------------------------------------------------------
(cd "$OUT" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
log "wrote $(ls "$OUT" | wc -l) files in ${OUT#"$REPO"/} in $(( $(date +%s) - start ))s"
ls -l "$OUT" >&2
