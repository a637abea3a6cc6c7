# shellcheck shell=bash
# Sourced (not run) by the test scripts, so that nothing a test runs writes under the
# real $HOME:
#
#   source "$REPO/scripts/isolate.sh"
#   keep_caches            # before HOME moves
#   isolated_home "$T"     # HOME, XDG_* and PI_CODING_AGENT_DIR inside $T
#
# Needs $REPO (the checkout) set by the caller.

# keep_caches pins the Go caches where they are now and npm's cache inside .tools, so the
# builds keep their caches once HOME points elsewhere; npm's notices are turned off.
keep_caches() {
  export GOCACHE="${GOCACHE:-$(go env GOCACHE)}" GOMODCACHE="${GOMODCACHE:-$(go env GOMODCACHE)}" GOPATH="${GOPATH:-$(go env GOPATH)}"
  export npm_config_cache="${npm_config_cache:-$REPO/.tools/npm-cache}"
  export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
}

# isolated_home DIR points HOME, the XDG base dirs and PI_CODING_AGENT_DIR into DIR
# (home, xdg/{config,data,cache,state}, agent) and creates them.
isolated_home() {
  local dir=$1
  export HOME="$dir/home" XDG_CONFIG_HOME="$dir/xdg/config" XDG_DATA_HOME="$dir/xdg/data" \
    XDG_CACHE_HOME="$dir/xdg/cache" XDG_STATE_HOME="$dir/xdg/state" PI_CODING_AGENT_DIR="$dir/agent"
  mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME" "$PI_CODING_AGENT_DIR"
}
