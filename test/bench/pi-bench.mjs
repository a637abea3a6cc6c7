// Measures real Pi 1.6.0 (its library from npm; run it with Node 22) on one session file,
// the way pi-lsp's
// benchmark measures itself: open + build context + prepare compaction, tree, file lists,
// and peak RSS. One measurement per process, so peak RSS belongs to this file alone.
//
//   node test/bench/pi-bench.mjs FILE.jsonl     → one JSON line on stdout
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..");
const PI = process.env.PI_LSP_PI_DIR || path.join(REPO, ".tools", "pi-current", "node_modules", "@earendil-works", "pi-coding-agent");
const pi = await import(pathToFileURL(path.join(PI, "dist", "index.js")).href);
const comp = await import(pathToFileURL(path.join(PI, "dist", "core", "compaction", "index.js")).href);

const file = process.argv[2];
if (!file) {
  console.error("usage: node pi-bench.mjs FILE.jsonl");
  process.exit(2);
}
// SessionManager.open may rewrite an old-format file: work on a private copy.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-bench-"));
const copy = path.join(tmp, path.basename(file));
fs.copyFileSync(file, copy);
const ms = (a, b) => Number(b - a) / 1e6;
try {
  const t0 = process.hrtime.bigint();
  const sm = pi.SessionManager.open(copy, tmp);
  const t1 = process.hrtime.bigint();
  const ctx = sm.buildSessionContext();
  const t2 = process.hrtime.bigint();
  const branch = sm.getBranch();
  const prep = comp.prepareCompaction(branch, pi.DEFAULT_COMPACTION_SETTINGS);
  const t3 = process.hrtime.bigint();
  const tree = sm.getTree();
  const t4 = process.hrtime.bigint();
  const ops = comp.createFileOps();
  for (const e of branch) if (e.type === "message") comp.extractFileOpsFromMessage(e.message, ops);
  const lists = comp.computeFileLists(ops);
  const t5 = process.hrtime.bigint();
  console.log(JSON.stringify({
    tool: "pi",
    piVersion: pi.VERSION,
    node: process.version,
    file,
    bytes: fs.statSync(file).size,
    entries: sm.getEntries().length,
    openMs: ms(t0, t1),
    contextMs: ms(t1, t2),
    prepareMs: ms(t2, t3),
    treeMs: ms(t3, t4),
    filesMs: ms(t4, t5),
    messages: ctx.messages.length,
    tokensBefore: prep ? prep.tokensBefore : null,
    roots: tree.length,
    readFiles: lists.readFiles.length,
    maxRssKB: process.resourceUsage().maxRSS,
  }));
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
