#!/usr/bin/env node
// Self-test of the oracle and the corpus: every op on every corpus file
// (testdata/corpus/genuine and testdata/corpus/synthetic, respecting the
// synthetic manifest's safe leaves) must be answered, in time; unsafe leaves
// must be refused. With --inspect, every genuine file is also opened in the
// real Pi CLI (rpc-inspect.mjs) and the CLI's message roles must equal the
// library's (oracle "context").
//
//   node test/pi/oracle-smoke.mjs [--inspect]
//
// Prints failures and a closing "oracle-smoke: N passed, N failed" line.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { onLines } from "./lines.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..");
const inspect = process.argv.includes("--inspect");
let passed = 0;
let failed = 0;
const fail = (msg) => {
  failed++;
  console.log(`FAIL ${msg}`);
};
const pass = () => passed++;

function startOracle() {
  const child = spawn(process.execPath, [path.join(HERE, "oracle.mjs")], { stdio: ["pipe", "pipe", "inherit"], detached: true });
  const waiting = [];
  onLines(child.stdout, (line) => {
    const w = waiting.shift();
    if (w) w(JSON.parse(line));
  });
  process.on("exit", () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // gone
    }
  });
  const ask = (req, timeoutMs = 30000) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ ok: false, error: `NO ANSWER within ${timeoutMs} ms` }), timeoutMs);
      waiting.push((r) => {
        clearTimeout(timer);
        resolve(r);
      });
      child.stdin.write(JSON.stringify(req) + "\n");
    });
  return { ask, close: () => child.stdin.end() };
}

function corpusFiles() {
  const out = [];
  const genuine = path.join(REPO, "testdata", "corpus", "genuine");
  for (const f of fs.readdirSync(genuine).filter((f) => f.endsWith(".jsonl")).sort()) {
    out.push({ file: path.join(genuine, f), kind: "genuine", safe: "all" });
  }
  const syn = path.join(REPO, "testdata", "corpus", "synthetic");
  const manifest = JSON.parse(fs.readFileSync(path.join(syn, "manifest.json"), "utf8"));
  const listed = new Set();
  for (const rec of manifest.files) {
    listed.add(rec.name);
    out.push({ file: path.join(syn, rec.name), kind: "synthetic", safe: rec.safeLeaves, piErrors: rec.piErrors ?? {} });
  }
  for (const f of fs.readdirSync(syn).filter((f) => f.endsWith(".jsonl"))) {
    if (!listed.has(f)) fail(`synthetic/${f} is not listed in manifest.json`);
  }
  return out;
}

async function main() {
  const oracle = startOracle();
  const ping = await oracle.ask({ op: "ping" }, 60000);
  if (!ping.ok) {
    fail(`oracle ping: ${ping.error}`);
    return;
  }
  for (const req of [{ op: "constants" }, { op: "serialize", messages: [] }, { op: "estimate", message: { role: "user", content: "abcd" } }]) {
    const r = await oracle.ask(req);
    r.ok ? pass() : fail(`${req.op}: ${r.error}`);
  }
  const bad = await oracle.ask({ op: "no-such-op" });
  bad.ok ? fail("an unknown op was accepted") : pass();

  const contextRoles = new Map();
  for (const { file, kind, safe, piErrors = {} } of corpusFiles()) {
    const name = `${kind}/${path.basename(file)}`;
    const first = await oracle.ask({ op: "context", file });
    if (!first.ok) {
      fail(`${name} context: ${first.error}`);
      continue;
    }
    const ids = first.result.ids;
    contextRoles.set(file, first.result.messages.map((m) => m.role));
    const leaves =
      safe === "all"
        ? [...new Set([undefined, 0, Math.floor(ids.length / 2), ids.length - 1])].filter((i) => i === undefined || (i >= 0 && i < ids.length))
        : [undefined, ...safe];
    for (const leafIndex of leaves) {
      const sel = leafIndex === undefined ? {} : { leafIndex };
      const reqs = [
        { op: "context", file, ...sel },
        { op: "tree", file, ...sel },
        { op: "files", file, ...sel },
        { op: "cut", file, keep: 150, ...sel },
        { op: "prepare", file, keep: 150, ...sel },
      ];
      if (ids.length) reqs.push({ op: "collect", file, targetIndex: 0, ...sel }, { op: "collect", file, targetIndex: ids.length - 1, budget: 200, ...sel });
      for (const req of reqs) {
        const r = await oracle.ask(req);
        // An error Pi itself throws on the file (the manifest's piErrors) is its answer.
        if (!r.ok && piErrors[req.op] === r.error) pass();
        else if (!r.ok) fail(`${name} ${JSON.stringify({ ...req, file: undefined })}: ${r.error}`);
        else if (!Array.isArray(r.result.ids) || r.result.ids.length !== ids.length) fail(`${name} ${req.op}: ids missing or inconsistent`);
        else if (JSON.stringify(r.result.ids) !== JSON.stringify(ids)) fail(`${name} ${req.op}: ids changed between requests`);
        else pass();
      }
    }
    const pl = await oracle.ask({ op: "piload", file });
    pl.ok ? pass() : fail(`${name} piload: ${pl.error}`);
    if (safe !== "all") {
      const unsafe = [...Array(ids.length).keys()].filter((i) => !safe.includes(i));
      for (const leafIndex of unsafe) {
        for (const op of ["context", "tree", "files", "cut", "prepare"]) {
          const r = await oracle.ask({ op, file, leafIndex, keep: 150 });
          r.ok || !/cycle/.test(r.error) ? fail(`${name} ${op} leafIndex ${leafIndex}: an unsafe leaf was not refused`) : pass();
        }
      }
    }
  }
  oracle.close();

  if (inspect) {
    const genuine = [...contextRoles.keys()].filter((f) => f.includes(`${path.sep}genuine${path.sep}`));
    const queue = [...genuine];
    await Promise.all(
      [0, 1, 2].map(async () => {
        while (queue.length) {
          const file = queue.shift();
          const res = await new Promise((resolve) => {
            const child = spawn(process.execPath, [path.join(HERE, "rpc-inspect.mjs"), file], { stdio: ["ignore", "pipe", "pipe"], detached: true });
            let out = "";
            let err = "";
            const timer = setTimeout(() => {
              try {
                process.kill(-child.pid, "SIGKILL");
              } catch {
                // gone
              }
            }, 90000);
            child.stdout.on("data", (d) => (out += d));
            child.stderr.on("data", (d) => (err += d));
            child.on("exit", (code) => {
              clearTimeout(timer);
              resolve({ code, out, err });
            });
          });
          const name = `genuine/${path.basename(file)}`;
          if (res.code !== 0) {
            fail(`${name} rpc-inspect exited ${res.code}: ${res.err.slice(-500)}`);
            continue;
          }
          const got = JSON.parse(res.out);
          const want = contextRoles.get(file);
          if (JSON.stringify(got.roles) !== JSON.stringify(want)) fail(`${name}: real CLI roles ${got.roles} != library roles ${want}`);
          else if (got.copyRewritten) fail(`${name}: the real CLI changed the file on open (${JSON.stringify(got.appendedTypes)})`);
          else pass();
        }
      }),
    );
  }
}

const deadline = setTimeout(() => {
  fail("oracle-smoke: overall deadline exceeded");
  console.log(`oracle-smoke: ${passed} passed, ${failed} failed`);
  process.exit(1);
}, 240000);
deadline.unref();

main()
  .catch((e) => fail(`oracle-smoke crashed: ${e?.stack ?? e}`))
  .finally(() => {
    console.log(`oracle-smoke: ${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  });
