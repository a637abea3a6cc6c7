# shellcheck shell=bash
# Sourced by scripts/build-vsix.sh (make vsix: this machine's platform) and scripts/dist.sh
# (make dist: every platform) to build the VS Code packages:
#
#   source "$REPO/scripts/vsix-lib.sh"
#   vsix_prepare "$WORK"                     # npm ci when the lock changed, tsc, esbuild bundle
#   vsix_package linux-x64 path/to/pi-lsp out.vsix
#
# A package holds only: package.json (without scripts and dependencies: the JavaScript is
# bundled), README.md (links to repository files made absolute, pinned to the version's
# tag, and its images copied in), CHANGELOG.md and LICENSE (the repository's),
# ThirdPartyNotices.txt (the bundled npm packages' licenses), media/, dist/extension.js
# and bin/pi-lsp (bin/pi-lsp.exe for win32) of its own platform.
# Needs $REPO; vsix_prepare sets VSIX_BUNDLE.

VSIX_EXT="$REPO/editors/vscode"
VSIX_REPO_URL="https://github.com/pi-lsp/pi-lsp"
VSIX_TARGETS="linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64"

vsix_log() { printf 'vsix: %s\n' "$*" >&2; }

# vsix_goos_goarch TARGET -> "GOOS GOARCH"
vsix_goos_goarch() {
  case "$1" in
    linux-x64) echo "linux amd64" ;; linux-arm64) echo "linux arm64" ;;
    darwin-x64) echo "darwin amd64" ;; darwin-arm64) echo "darwin arm64" ;;
    win32-x64) echo "windows amd64" ;; win32-arm64) echo "windows arm64" ;;
    *) return 1 ;;
  esac
}

# vsix_host_target: the VS Code target of this machine.
vsix_host_target() {
  local os arch
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; MINGW*|MSYS*|CYGWIN*) os=win32 ;; *) return 1 ;; esac
  case "$(uname -m)" in x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) return 1 ;; esac
  echo "$os-$arch"
}

# vsix_prepare WORK: the extension's dependencies (npm ci when package.json or the lock
# changed since the last install), the type check (tsc, strict; its out/ is what the unit
# tests run) and the bundle in WORK/bundle (VSIX_BUNDLE).
vsix_prepare() {
  local work=$1
  export npm_config_cache="${npm_config_cache:-$REPO/.tools/npm-cache}"
  export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
  local stamp="$VSIX_EXT/node_modules/.pi-lsp-stamp" want
  want="$(cat "$VSIX_EXT/package.json" "$VSIX_EXT/package-lock.json" | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    vsix_log "npm ci in editors/vscode"
    (cd "$VSIX_EXT" && timeout 600 npm ci --no-audit --no-fund --loglevel=error >&2)
    printf '%s\n' "$want" >"$stamp"
  fi
  vsix_log "tsc (strict)"
  rm -rf "$VSIX_EXT/out"
  (cd "$VSIX_EXT" && timeout 300 npx --no-install tsc -p ./)
  VSIX_BUNDLE="$work/bundle"
  rm -rf "$VSIX_BUNDLE"
  (cd "$VSIX_EXT" && timeout 120 node bundle.mjs --outdir "$VSIX_BUNDLE")
}

# vsix_stage DIR VERSION: the platform-independent files of a package in DIR.
vsix_stage() {
  local dir=$1 version=$2
  mkdir -p "$dir/dist" "$dir/media" "$dir/bin"
  cp "$VSIX_BUNDLE/extension.js" "$dir/dist/extension.js"
  cp "$VSIX_BUNDLE/ThirdPartyNotices.txt" "$dir/ThirdPartyNotices.txt"
  cp "$VSIX_EXT"/media/* "$dir/media/"
  cp "$REPO/LICENSE" "$dir/LICENSE"
  cp "$REPO/CHANGELOG.md" "$dir/CHANGELOG.md"
  node - "$VSIX_EXT/package.json" "$dir/package.json" <<'JS'
const fs = require("fs");
const [src, dst] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(src, "utf8"));
// The package runs the bundle: no npm dependencies to install, nothing to build.
for (const k of ["scripts", "dependencies", "devDependencies", "allowScripts"]) delete pkg[k];
fs.writeFileSync(dst, JSON.stringify(pkg, null, 2) + "\n");
JS
  # README: an image or link to a file of the package stays relative; any other file of
  # the repository becomes an absolute link to it at the version's tag.
  node - "$VSIX_EXT/README.md" "$dir" "$REPO" "$VSIX_REPO_URL/blob/v$version" <<'JS'
const fs = require("fs");
const path = require("path");
const [readme, stage, repo, base] = process.argv.slice(2);
const from = path.dirname(readme);
const shipped = (rel) => fs.existsSync(path.join(stage, rel));
const text = fs.readFileSync(readme, "utf8").replace(/(!?)\[([^\]]*)\]\(([^)\s]+)((?:\s+"[^"]*")?)\)/g, (all, bang, label, target, title) => {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) return all;
  const [file, frag = ""] = target.split("#");
  const abs = path.resolve(from, file);
  const rel = path.relative(repo, abs).split(path.sep).join("/");
  if (rel.startsWith("..") || !fs.existsSync(abs)) throw new Error(`README.md links to ${target}, which is not a file of the repository`);
  const inExt = path.relative(from, abs).split(path.sep).join("/");
  if (!inExt.startsWith("..") && shipped(inExt)) return `${bang}[${label}](${inExt}${frag ? "#" + frag : ""}${title})`;
  if (bang) { // an image from elsewhere in the repository: shipped in media/
    const name = "media/" + path.basename(abs);
    fs.copyFileSync(abs, path.join(stage, name));
    return `${bang}[${label}](${name}${title})`;
  }
  // vsce ships these as extension/LICENSE.txt and extension/changelog.md.
  const top = { "LICENSE": "LICENSE.txt", "CHANGELOG.md": "changelog.md" }[rel];
  if (top) return `[${label}](${top}${frag ? "#" + frag : ""}${title})`;
  return `[${label}](${base}/${rel}${frag ? "#" + frag : ""}${title})`;
});
fs.writeFileSync(path.join(stage, "README.md"), text);
JS
}

# vsix_package TARGET BINARY OUT: the package of TARGET (linux-x64, ..., win32-arm64)
# bundling BINARY, written to OUT.
vsix_package() {
  local target=$1 binary=$2 out=$3 version stage exe=pi-lsp
  version="$(node -p 'require(process.argv[1]).version' "$VSIX_EXT/package.json")"
  stage="$(mktemp -d "${TMPDIR:-/tmp}/pi-lsp-vsix.XXXXXX")"
  vsix_stage "$stage" "$version"
  case "$target" in win32-*) exe=pi-lsp.exe ;; esac
  cp "$binary" "$stage/bin/$exe"
  chmod 755 "$stage/bin/$exe"
  rm -f "$out"
  (cd "$stage" && timeout 300 "$VSIX_EXT/node_modules/.bin/vsce" package --target "$target" \
    --no-dependencies --no-rewrite-relative-links --out "$out" >&2)
  rm -rf "$stage"
  [ -s "$out" ] || { vsix_log "vsce produced no $out"; return 1; }
  vsix_log "$(basename "$out"): $(du -k "$out" | cut -f1) KB"
}
