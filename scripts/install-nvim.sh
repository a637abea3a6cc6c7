#!/usr/bin/env bash
# Fetch Neovim 0.10 (Debian trixie) and 0.12 (Debian forky) without changing
# the system: a PRIVATE apt configuration under .tools/nvim-apt downloads the
# .debs (apt-get download, never apt-get install), dpkg-deb -x unpacks them
# into .tools/nvim-0.10 and .tools/nvim-0.12, and wrappers in .tools/bin run
# the unpacked nvim through the unpacked glibc loader.
#
#   bash scripts/install-nvim.sh              # both versions (0.12 is best effort)
#   bash scripts/install-nvim.sh 0.10         # only one version
#   PI_LSP_FORCE_INSTALL=1 bash scripts/install-nvim.sh   # refetch
#
# Results: .tools/bin/nvim-0.10, .tools/bin/nvim-0.12 and, per version, a
# status file .tools/nvim-<v>.status holding "ok" or "skipped: <reason>".
# Exit status: non-zero only when 0.10 cannot be installed; forky is Debian
# testing (package names move), so a failure there is reported, not fatal.
#
# The Debian mirror is the one the system's apt already uses (first deb URI
# ending in /debian in /etc/apt/sources.list{,.d}); override it with
# PI_LSP_DEBIAN_MIRROR=<url>.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$REPO/.tools"
APT_ROOT="$TOOLS/nvim-apt"
BIN_DIR="$TOOLS/bin"
ARCH="$(dpkg --print-architecture 2>/dev/null || echo amd64)"
case "$ARCH" in
  amd64) TRIPLET=x86_64-linux-gnu; LOADER=ld-linux-x86-64.so.2 ;;
  arm64) TRIPLET=aarch64-linux-gnu; LOADER=ld-linux-aarch64.so.1 ;;
  *) echo "install-nvim: unsupported architecture $ARCH" >&2; exit 1 ;;
esac

log() { printf 'install-nvim: %s\n' "$*" >&2; }

# The checks below run nvim: its state, data and cache go to a temp dir, never
# under the real $HOME.
NVIM_XDG="$(mktemp -d "${TMPDIR:-/tmp}/install-nvim.XXXXXX")"
trap 'rm -rf "$NVIM_XDG"' EXIT
export XDG_STATE_HOME="$NVIM_XDG/state" XDG_DATA_HOME="$NVIM_XDG/data" \
  XDG_CACHE_HOME="$NVIM_XDG/cache" XDG_CONFIG_HOME="$NVIM_XDG/config"
REASON=""
# fail MESSAGE: logs it, keeps it as the reason a version is skipped, returns 1.
fail() { REASON="$*"; log "$*"; return 1; }

for tool in apt-get apt-cache dpkg-deb timeout sed awk sort; do
  command -v "$tool" >/dev/null 2>&1 || { log "missing required tool: $tool"; exit 1; }
done

# Packages never worth unpacking for running nvim from the unpacked tree:
# they are essential system packages, scripts or data the binary does not load.
SKIP_RE='^(debconf|debconf-2\.0|dpkg|perl-base|base-files|tar|coreutils|bash|dash|libc-bin|libc-dev-bin|locales|tzdata|sensible-utils|install-info|gcc-[0-9]+-base|libcrypt1|xxd|usrmerge|usr-is-merged|init-system-helpers|lua5\.1|luajit|luajit2)$'

mirror() {
  if [ -n "${PI_LSP_DEBIAN_MIRROR:-}" ]; then printf '%s\n' "$PI_LSP_DEBIAN_MIRROR"; return; fi
  local m=""
  # deb822 sources first, then one-line sources.
  m="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | awk 'tolower($1)=="uris:" { for (i = 2; i <= NF; i++) print $i }' \
        | grep -E '/debian/?$' | head -n1 || true)"
  if [ -z "$m" ]; then
    m="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
          | awk '$1=="deb" { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) { print $i; break } }' \
          | grep -E '/debian/?$' | head -n1 || true)"
  fi
  [ -n "$m" ] || { log "cannot find a Debian mirror in /etc/apt; set PI_LSP_DEBIAN_MIRROR"; return 1; }
  printf '%s\n' "${m%/}"
}

keyring() {
  local k
  for k in /usr/share/keyrings/debian-archive-keyring.gpg /etc/apt/trusted.gpg.d/debian-archive-keyring.gpg; do
    [ -f "$k" ] && { printf '%s\n' "$k"; return; }
  done
  printf '\n'
}

# apt_private SUITE ARGS...: run apt-get/apt-cache with a configuration that
# reads and writes only under $APT_ROOT/$SUITE (no /etc/apt sources, pins,
# or state of the system).
apt_opts() {
  local d="$APT_ROOT/$1"
  printf '%s\n' \
    -o "Dir::Etc::SourceList=$d/sources.list" \
    -o "Dir::Etc::SourceParts=$d/sources.list.d" \
    -o "Dir::Etc::Preferences=$d/preferences" \
    -o "Dir::Etc::PreferencesParts=$d/preferences.d" \
    -o "Dir::State=$d/state" \
    -o "Dir::State::Lists=$d/lists" \
    -o "Dir::State::status=$d/status" \
    -o "Dir::Cache=$d/cache" \
    -o "Dir::Cache::archives=$d/archives" \
    -o "Debug::NoLocking=1" \
    -o "APT::Sandbox::User=root" \
    -o "APT::Architecture=$ARCH" \
    -o "APT::Architectures=$ARCH" \
    -o "Acquire::Languages=none" \
    -o "APT::Get::List-Cleanup=0"
}

prepare_apt() {
  local suite="$1" d="$APT_ROOT/$1" m k
  m="$(mirror)" || { fail "cannot find a Debian mirror in /etc/apt; set PI_LSP_DEBIAN_MIRROR"; return 1; }
  k="$(keyring)"
  mkdir -p "$d/sources.list.d" "$d/preferences.d" "$d/state" "$d/lists/partial" \
    "$d/cache" "$d/archives/partial" "$d/debs"
  : >"$d/status"
  : >"$d/preferences"
  if [ -n "$k" ]; then
    printf 'deb [arch=%s signed-by=%s] %s %s main\n' "$ARCH" "$k" "$m" "$suite" >"$d/sources.list"
  else
    printf 'deb [arch=%s] %s %s main\n' "$ARCH" "$m" "$suite" >"$d/sources.list"
  fi
}

# deps_closure SUITE: the neovim package and everything it (recursively)
# Depends/PreDepends on in SUITE, resolved by apt-cache so renamed packages
# (libuv1 -> libuv1t64, libtree-sitter0.2x, libutf8proc3, ...) are followed.
deps_closure() {
  local suite="$1"
  local -a opts
  mapfile -t opts < <(apt_opts "$suite")
  apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests \
      --no-conflicts --no-breaks --no-replaces --no-enhances neovim 2>/dev/null \
    | awk '/^[^ <]/ { print $1 } /^ *(Pre)?Depends: [^<]/ { print $2 }' \
    | sed 's/:.*$//' | sort -u | grep -Ev "$SKIP_RE" || true
}

# write_wrapper VERSION SUITE LOADER: .tools/bin/nvim-VERSION runs the unpacked
# nvim through the unpacked loader, with the unpacked runtime, Lua modules and
# tree-sitter parsers (Debian builds the parsers into /usr/lib/nvim, which the
# relocated binary does not know; --cmd adds that folder to 'runtimepath').
write_wrapper() {
  local ver="$1" suite="$2" loader="$3" wrapper="$BIN_DIR/nvim-$1"
  mkdir -p "$BIN_DIR"
  cat >"$wrapper" <<EOF
#!/bin/sh
# Generated by scripts/install-nvim.sh: Neovim $ver from Debian $suite, run
# through its own glibc loader (the system's libraries are not used).
root="\$(cd "\$(dirname "\$0")/../nvim-$ver" && pwd)"
lib="\$root/usr/lib/$TRIPLET:\$root/lib/$TRIPLET"
VIMRUNTIME="\$root/usr/share/nvim/runtime"
LUA_CPATH="\$root/usr/lib/$TRIPLET/lua/5.1/?.so;\$root/usr/lib/$TRIPLET/lua/5.1/?/?.so;;"
LUA_PATH="\$root/usr/share/lua/5.1/?.lua;\$root/usr/share/lua/5.1/?/init.lua;;"
PI_NVIM_DEB_LIBDIR="\$root/usr/lib/nvim"
export VIMRUNTIME LUA_CPATH LUA_PATH PI_NVIM_DEB_LIBDIR
exec "\$root/$loader" --library-path "\$lib" "\$root/usr/bin/nvim" \\
  --cmd 'lua vim.opt.runtimepath:append(vim.env.PI_NVIM_DEB_LIBDIR)' "\$@"
EOF
  chmod +x "$wrapper"
}

install_one() {
  local ver="$1" suite="$2"
  local dest="$TOOLS/nvim-$ver" status="$TOOLS/nvim-$ver.status" d="$APT_ROOT/$suite"
  local wrapper="$BIN_DIR/nvim-$ver"
  local -a opts pkgs

  # An installed tree only needs its wrapper (re)written.
  if [ "${PI_LSP_FORCE_INSTALL:-0}" != "1" ] && [ -f "$status" ] && [ "$(cat "$status")" = "ok" ] \
    && [ -f "$dest/.loader" ] && [ -e "$dest/usr/bin/nvim" ]; then
    write_wrapper "$ver" "$suite" "$(cat "$dest/.loader")"
  fi
  if [ "${PI_LSP_FORCE_INSTALL:-0}" != "1" ] && [ -x "$wrapper" ] && [ -f "$status" ] \
    && [ "$(cat "$status")" = "ok" ] && timeout 30 "$wrapper" --version </dev/null 2>/dev/null \
       | head -n1 | grep -q "^NVIM v$ver\."; then
    log "nvim $ver already installed ($(timeout 30 "$wrapper" --version </dev/null | head -n1)), nothing to do"
    return 0
  fi

  log "fetching Neovim $ver from Debian $suite into .tools/nvim-$ver"
  prepare_apt "$suite" || return 1
  mapfile -t opts < <(apt_opts "$suite")
  if ! timeout 300 apt-get "${opts[@]}" -q update >"$d/update.log" 2>&1; then
    fail "apt-get update for $suite failed (see .tools/nvim-apt/$suite/update.log)"
    return 1
  fi
  local cand
  if grep -qE '^(Err:|W: Failed to fetch|E: )' "$d/update.log"; then
    fail "apt-get update could not fetch Debian $suite: $(grep -m1 -E '^(Err:|W: Failed to fetch|E: )' "$d/update.log")"
    return 1
  fi
  cand="$(apt-cache "${opts[@]}" policy neovim 2>/dev/null | awk '/Candidate:/ { print $2 }')"
  if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
    fail "Debian $suite has no neovim package"
    return 1
  fi
  case "$cand" in
    "$ver".*) ;;
    *) fail "Debian $suite offers neovim $cand, not $ver.x"; return 1 ;;
  esac
  mapfile -t pkgs < <(deps_closure "$suite")
  if [ "${#pkgs[@]}" -lt 2 ]; then
    fail "could not resolve neovim's dependencies in $suite"
    return 1
  fi
  log "neovim $cand; ${#pkgs[@]} packages: ${pkgs[*]}"
  rm -f "$d/debs/"*.deb
  if ! (cd "$d/debs" && timeout 600 apt-get "${opts[@]}" -q download "${pkgs[@]}") >"$d/download.log" 2>&1; then
    fail "apt-get download failed (see .tools/nvim-apt/$suite/download.log)"
    return 1
  fi

  rm -rf "$dest.tmp"
  mkdir -p "$dest.tmp"
  local deb
  for deb in "$d/debs/"*.deb; do
    dpkg-deb -x "$deb" "$dest.tmp"
  done

  # The loader and libraries live under usr/lib/<triplet> (merged /usr) or
  # lib/<triplet> (older layouts); find them rather than assume.
  local loader
  loader="$(cd "$dest.tmp" && find . -name "$LOADER" \( -type f -o -type l \) | sort | head -n1)"
  if [ -z "$loader" ] || [ ! -e "$dest.tmp/usr/bin/nvim" ]; then
    fail "unpacked tree lacks $LOADER or usr/bin/nvim"
    return 1
  fi
  loader="${loader#./}"
  printf '%s\n' "$loader" >"$dest.tmp/.loader"
  rm -rf "$dest"
  mv "$dest.tmp" "$dest"

  write_wrapper "$ver" "$suite" "$loader"

  local got
  got="$(timeout 30 "$wrapper" --version </dev/null 2>&1 | head -n1 || true)"
  case "$got" in
    "NVIM v$ver."*) ;;
    *) fail "the unpacked nvim $ver does not run: ${got:-no output}"; return 1 ;;
  esac
  # lpeg and luv must load (vim.treesitter/query and vim.uv need them).
  if ! timeout 30 "$wrapper" --headless -u NONE -i NONE \
      -c 'lua local ok = pcall(require, "lpeg") and vim.uv ~= nil or vim.loop ~= nil; if not ok then vim.cmd("cquit 3") end' \
      -c 'qall!' </dev/null >/dev/null 2>&1; then
    fail "the unpacked nvim $ver cannot load lpeg/luv"
    return 1
  fi
  log "installed $got: .tools/bin/nvim-$ver"
}

want=("$@")
[ "${#want[@]}" -gt 0 ] || want=(0.10 0.12)
mkdir -p "$TOOLS"
rc=0
for v in "${want[@]}"; do
  case "$v" in
    0.10) suite=trixie ;;
    0.12) suite=forky ;;
    *) log "unknown version $v (known: 0.10, 0.12)"; exit 2 ;;
  esac
  start=$(date +%s)
  REASON=""
  if install_one "$v" "$suite"; then
    printf 'ok\n' >"$TOOLS/nvim-$v.status"
  else
    reason="Neovim $v could not be installed from Debian $suite: ${REASON:-see the log above}"
    printf 'skipped: %s\n' "$reason" >"$TOOLS/nvim-$v.status"
    rm -f "$BIN_DIR/nvim-$v"
    if [ "$v" = "0.10" ]; then
      log "ERROR: $reason"
      rc=1
    else
      log "WARNING: $reason; its tests will be reported as skipped"
    fi
  fi
  log "nvim $v: $(cat "$TOOLS/nvim-$v.status") ($(( $(date +%s) - start ))s)"
done
exit "$rc"
