// Helpers of the Node drivers that test pi-lsp as an editor sees it:
// test/jsonrpc/conformance.mjs (the protocol through vscode-jsonrpc) and
// test/vscode/e2e.mjs (the VS Code extension in code-server). No dependencies
// beyond Node.
import fs from "node:fs";
import path from "node:path";

/** A reader of `--name value` options of argv: opt(name, dflt). */
export function cliOptions(argv) {
  return (name, dflt) => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] ? argv[i + 1] : dflt;
  };
}

/** v as JSON, cut to max characters (with an ellipsis), for check details. */
export function clip(v, max) {
  const s = JSON.stringify(v);
  return s && s.length > max ? s.slice(0, max) + "…" : s;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Poll pred (sync or async) every step ms until it returns a truthy value,
 * for at most ms; a throw counts as not yet. Returns pred's last value.
 */
export async function waitFor(pred, ms, step = 100) {
  const end = Date.now() + ms;
  for (;;) {
    let v;
    try {
      v = await pred();
    } catch {
      v = undefined;
    }
    if (v || Date.now() > end) return v;
    await sleep(step);
  }
}

/**
 * The entries of a session file (header first). A line that is not JSON
 * throws, or, with lenient, is left out.
 */
export function readEntries(file, { lenient = false } = {}) {
  const entries = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line));
    } catch (e) {
      if (!lenient) throw e;
    }
  }
  return entries;
}

/**
 * Pi's sessions folder for workspace under agentDir
 * (sessions/--<workspace path, separators as dashes>--), created.
 */
export function sessionsDir(agentDir, workspace) {
  const dir = path.join(agentDir, "sessions", `--${workspace.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
