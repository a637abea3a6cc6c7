// What the Node layer scripts of test/ share (test/dist/*.mjs, test/vscode/*.mjs): the
// repository root and its VERSION, `--name value` options, and the pass/fail tally whose
// last line is "N passed, M failed" (exit 0 only when nothing failed). No dependencies
// beyond Node.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const VERSION = fs.readFileSync(path.join(REPO, "VERSION"), "utf8").trim();

/** The value after `name` in the command line (undefined after a last `name`), or def. */
export function arg(name, def) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : def;
}

/**
 * A tally of checks: check(name, ok, detail) prints "ok  " or "FAIL" (after the elapsed
 * time when timed), the name and the detail (cut to clip characters when clip is set), and
 * returns whether ok; note(s) prints a "#" line; failures are the names that failed.
 */
export function tally({ timed = false, clip = 0 } = {}) {
  const t0 = Date.now();
  const t = { passed: 0, failed: 0, failures: [] };
  t.el = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
  t.stamp = () => (timed ? ` [${t.el()}]` : "");
  t.check = (name, ok, detail = "") => {
    if (ok) t.passed++;
    else {
      t.failed++;
      t.failures.push(name);
    }
    const d = detail ? ` — ${clip ? String(detail).slice(0, clip) : detail}` : "";
    console.log(`${ok ? "ok  " : "FAIL"}${t.stamp()} ${name}${d}`);
    return !!ok;
  };
  t.note = (s) => console.log(`# [${t.el()}] ${s}`);
  t.summary = (more = 0) => `${t.passed} passed, ${t.failed + more} failed`;
  return t;
}

/**
 * Runs main with the tally t: an exception is the failed check "no exception"; a main
 * still running after ms fails as "<what> did not finish in N s". Then after({ timedOut }),
 * when given, cleans up or says more (it runs whatever main left running), and the last
 * line is printed and the process exits.
 */
export function runMain(t, main, { ms, what, after }) {
  const end = (timedOut) => {
    try {
      after?.({ timedOut });
    } catch (e) {
      console.log(`# after: ${e?.stack ?? e}`);
    }
  };
  const watchdog = setTimeout(() => {
    console.log(`FAIL${t.stamp()} ${what} did not finish in ${ms / 1000} s`);
    end(true);
    console.log(t.summary(1));
    process.exit(1);
  }, ms);
  main()
    .catch((e) => t.check("no exception", false, e?.stack ?? String(e)))
    .finally(() => {
      clearTimeout(watchdog);
      end(false);
      console.log(t.summary());
      process.exit(t.failed ? 1 : 0);
    });
}
