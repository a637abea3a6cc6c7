// Asks real Pi 1.6.0 which session `pi --session <ref>` and `pi -c` open, for
// internal/session's FindSession and ContinueRecent tests (find_test.go).
//
//   PI_DIR=<pi-coding-agent package> node pi-resolve.mjs < {"cwd": DIR, "queries": [{"session": REF} | {"continue": true}]}
//
// Each query goes through Pi's own createSessionManager (main.ts), which calls
// resolveSessionPath or SessionManager.continueRecent. Pi's side effects are stubbed:
// its yes/no prompt (a session of another project) answers yes, forkFrom reports the
// session it would fork instead of writing one, and process.exit reports its code.
// Pi's own messages go to stderr. Prints one JSON array, an answer per query:
//   {"kind": "open", "path": P, "exists": bool}  the session opened (a new one when !exists)
//   {"kind": "fork", "path": P}                  a session of another project, to fork
//   {"kind": "exit", "code": N}                  Pi exits (no session found)
import fs from "node:fs";
import path from "node:path";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const readline = require("node:readline");
const createInterface = readline.createInterface;
// Pi's promptConfirm reads stdin; its session listing reads files with readline too.
readline.createInterface = (opts, ...rest) =>
  opts?.input === process.stdin ? { question(_q, answer) { answer("y"); }, close() {} } : createInterface(opts, ...rest);
syncBuiltinESMExports();

const dist = path.join(process.env.PI_DIR, "dist");
const { createSessionManager } = await import(pathToFileURL(path.join(dist, "main.js")).href);
const { SessionManager } = await import(pathToFileURL(path.join(dist, "core", "session-manager.js")).href);

class Exit extends Error {
  constructor(code) { super(`exit ${code}`); this.code = code; }
}
let forked;
SessionManager.forkFrom = (source) => { forked = source; return { forked: true }; };
process.exit = (code) => { throw new Exit(code ?? 0); };
console.error = (...a) => process.stderr.write(a.join(" ") + "\n");
console.log = console.error; // Pi's notes, kept off stdout

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const answers = [];
for (const q of input.queries) {
  forked = undefined;
  try {
    const sm = await createSessionManager(q, input.cwd, undefined, undefined);
    if (sm.forked) {
      answers.push({ kind: "fork", path: forked });
    } else {
      const p = sm.getSessionFile();
      answers.push({ kind: "open", path: p, exists: fs.existsSync(p) });
    }
  } catch (e) {
    if (!(e instanceof Exit)) throw e;
    answers.push({ kind: "exit", code: e.code });
  }
}
process.stdout.write(JSON.stringify(answers) + "\n");
