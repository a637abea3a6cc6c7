#!/usr/bin/env node
// Protocol conformance of pi-lsp, driven by vscode-jsonrpc 10 (the JSON-RPC transport VS Code
// itself uses), against temp copies of a genuine Pi session.
//
//   node test/jsonrpc/conformance.mjs [--server bin/pi-lsp] [--session FILE.jsonl] [--verbose]
//
// Checks: initialize (executeCommandProvider.commands, serverInfo, experimental.pi), the
// command table against `pi-lsp commands --json` and editors/vscode/package.json,
// pi.sessions / pi.selectSession / pi.tree / pi.context / pi.files, pi.compact with no
// workDoneToken (the server must create one: window/workDoneProgress/create, then $/progress
// begin with percentage 0 ... end), pi/compact with a numeric and a string workDoneToken,
// $/cancelRequest and window/workDoneProgress/cancel of a running compaction (made slow by an
// OpenAI-compatible SSE server in this script), an unknown method (-32601), bad params
// (-32602), shutdown and exit (exit code 0).
//
// Every check prints "ok" or "FAIL" with what was expected and what came back; the last line is
// "N passed, M failed" and the exit code is 0 only when nothing failed. Nothing is written
// under $HOME: HOME, XDG_* and PI_CODING_AGENT_DIR point into a temp dir for the server.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as rpc from "vscode-jsonrpc/node";
import { runMain, tally } from "../lib/layer.mjs";
import { cliOptions, clip, readEntries as sessionEntries, sessionsDir, waitFor } from "./harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..");
const argv = process.argv.slice(2);
const opt = cliOptions(argv);
const VERBOSE = argv.includes("--verbose") || process.env.PI_LSP_VERBOSE === "1";
const SERVER = path.resolve(opt("--server", process.env.PI_LSP_BIN || path.join(REPO, "bin", "pi-lsp")));
const EXPECTED_COMMANDS = [
  "pi.compact",
  "pi.navigate",
  "pi.undoCompaction",
  "pi.label",
  "pi.tree",
  "pi.sessions",
  "pi.selectSession",
  "pi.files",
  "pi.context",
];

// ---------------------------------------------------------------------------------------------
const tests = tally();
// A passed check's detail is printed with --verbose only.
const check = (name, ok, detail = "") => tests.check(name, ok, ok && !VERBOSE ? "" : detail);
const j = (v) => clip(v, 600);
// The server's session files, read while it may be writing: a cut last line is left out.
const readEntries = (file) => sessionEntries(file, { lenient: true });
function withTimeout(p, ms, what) {
  let t;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise((_, rej) => {
      t = setTimeout(() => rej(new Error(`timeout after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}
async function settle(p, ms, what) {
  try {
    return { ok: true, value: await withTimeout(p, ms, what) };
  } catch (error) {
    return { ok: false, error };
  }
}
const errText = (e) => (e ? `code ${e.code} ${j(e.message)} data ${j(e.data)}` : "no error");

// ---------------------------------------------------------------------------------------------
// Temp world: HOME, XDG, PI_CODING_AGENT_DIR, a workspace and copies of a genuine session.

const T = fs.mkdtempSync(path.join(os.tmpdir(), "pi-lsp-jsonrpc-"));
const HOME = path.join(T, "home");
const AGENT = path.join(T, "agent");
const WS = path.join(T, "ws", "project");
for (const d of [HOME, AGENT, WS]) fs.mkdirSync(d, { recursive: true });
const SESSIONS_DIR = sessionsDir(AGENT, WS);

function pickGenuine() {
  const given = opt("--session", process.env.PI_LSP_SESSION);
  if (given) return path.resolve(given);
  const dir = path.join(REPO, "testdata", "corpus", "genuine");
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".jsonl")) : [];
  if (files.length === 0) return undefined;
  // full-main: the main genuine session (messages, tools, a compaction and a branch summary).
  if (files.includes("full-main.jsonl")) return path.join(dir, "full-main.jsonl");
  // Else the largest session with no compaction yet.
  const scored = files.map((f) => {
    const text = fs.readFileSync(path.join(dir, f), "utf8");
    return { f, size: text.length, compacted: text.includes('"type":"compaction"') };
  });
  scored.sort((a, b) => Number(a.compacted) - Number(b.compacted) || b.size - a.size);
  return path.join(dir, scored[0].f);
}


const baseEnv = {
  PATH: process.env.PATH,
  HOME,
  XDG_CONFIG_HOME: path.join(T, "xdg", "config"),
  XDG_DATA_HOME: path.join(T, "xdg", "data"),
  XDG_CACHE_HOME: path.join(T, "xdg", "cache"),
  XDG_STATE_HOME: path.join(T, "xdg", "state"),
  PI_CODING_AGENT_DIR: AGENT,
  TMPDIR: T,
};

// ---------------------------------------------------------------------------------------------
// A slow OpenAI-compatible server: streams a summary one small chunk every 300 ms (about 15 s),
// so a compaction is still running when the script cancels it.

function startSlowLLM() {
  const state = { requests: 0, aborted: 0, bodies: [] };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      state.requests++;
      let parsed = {};
      try {
        parsed = JSON.parse(body || "{}");
      } catch {}
      state.bodies.push(parsed);
      let closed = false;
      res.on("close", () => {
        if (!res.writableEnded) {
          closed = true;
          state.aborted++;
        }
      });
      const words = "## Goal\nSlow summary for the cancellation test.\n".split(/(?=\s)/);
      const total = 50;
      if (parsed.stream) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
        let i = 0;
        const tick = () => {
          if (closed) return;
          if (i >= total) {
            res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`);
            res.write("data: [DONE]\n\n");
            res.end();
            return;
          }
          const content = words[i % words.length];
          res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: i === 0 ? { role: "assistant", content } : { content }, finish_reason: null }] })}\n\n`);
          i++;
          setTimeout(tick, 300);
        };
        tick();
      } else {
        setTimeout(() => {
          if (closed) return;
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ id: "c1", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: words.join("") }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } }));
        }, total * 300);
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve({ server, port: server.address().port, state }));
  });
}

// ---------------------------------------------------------------------------------------------
// One server process with a vscode-jsonrpc connection.

const children = new Set();
function startServer(name, extraEnv = {}) {
  const stderrPath = path.join(T, `${name}.stderr.log`);
  const errFd = fs.openSync(stderrPath, "w");
  const child = spawn(SERVER, ["serve", "--stdio"], {
    env: { ...baseEnv, ...extraEnv },
    cwd: WS,
    stdio: ["pipe", "pipe", errFd],
    // Same process group as this script: scripts/test-jsonrpc.sh kills the group at the end.
  });
  fs.closeSync(errFd);
  children.add(child);
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  child.on("exit", () => children.delete(child));
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const log = { creates: [], progress: [], notifications: [], other: [] };
  conn.onRequest("window/workDoneProgress/create", (params) => {
    log.creates.push({ t: Date.now(), token: params?.token });
    return null;
  });
  conn.onRequest((method, params) => {
    log.other.push({ method, params });
    return null;
  });
  conn.onUnhandledProgress((p) => log.progress.push({ t: Date.now(), token: p.token, value: p.value }));
  conn.onNotification((method, params) => log.notifications.push({ t: Date.now(), method, params }));
  conn.onError((e) => VERBOSE && console.log(`# ${name} connection error: ${e}`));
  conn.listen();
  return { name, child, conn, log, exited, stderrPath };
}

function initParams(initializationOptions) {
  return {
    processId: process.pid,
    clientInfo: { name: "pi-lsp-conformance (vscode-jsonrpc)", version: "10.0.0" },
    rootUri: `file://${WS}`,
    workspaceFolders: [{ uri: `file://${WS}`, name: "project" }],
    capabilities: {
      window: { workDoneProgress: true, showMessage: {} },
      workspace: { executeCommand: { dynamicRegistration: false }, workspaceFolders: true, configuration: false },
      general: { positionEncodings: ["utf-16"] },
    },
    initializationOptions,
  };
}

function progressFor(log, token) {
  return log.progress.filter((p) => p.token === token);
}

function checkProgress(label, log, token, { title } = {}) {
  const ps = progressFor(log, token);
  const kinds = ps.map((p) => p.value?.kind);
  const begin = ps.find((p) => p.value?.kind === "begin");
  check(`${label}: $/progress begin for token ${j(token)}`, !!begin, `got ${j(log.progress.map((p) => [p.token, p.value?.kind]))}`);
  if (begin) {
    check(`${label}: begin has percentage 0`, begin.value.percentage === 0, `begin ${j(begin.value)}`);
    if (title) check(`${label}: begin title "${title}"`, begin.value.title === title, `begin ${j(begin.value)}`);
    check(`${label}: begin is cancellable`, begin.value.cancellable === true, `begin ${j(begin.value)}`);
  }
  check(`${label}: $/progress end for token ${j(token)}, after begin`, kinds.includes("end") && kinds.indexOf("end") > kinds.indexOf("begin"), `kinds ${j(kinds)}`);
  const reports = ps.filter((p) => p.value?.kind === "report");
  const pcts = reports.map((r) => r.value.percentage).filter((x) => typeof x === "number");
  check(`${label}: report percentages never go down`, pcts.every((x, i) => i === 0 || x >= pcts[i - 1]), `percentages ${j(pcts)}`);
}

function checkCompactResult(label, result, file, linesBefore) {
  const ok = result && result.entry && result.entry.type === "compaction";
  check(`${label}: result has a compaction entry`, !!ok, `got ${j(result)}`);
  if (!ok) return;
  const e = result.entry;
  check(
    `${label}: entry fields`,
    typeof e.id === "string" && typeof e.summary === "string" && e.summary.length > 0 && typeof e.firstKeptEntryId === "string" && typeof e.tokensBefore === "number" && typeof result.tokensBefore === "number" && typeof result.tokensAfter === "number",
    j({ id: e.id, firstKeptEntryId: e.firstKeptEntryId, tokensBefore: e.tokensBefore, tb: result.tokensBefore, ta: result.tokensAfter }),
  );
  check(`${label}: tokensAfter < tokensBefore`, result.tokensAfter < result.tokensBefore, `${result.tokensBefore} -> ${result.tokensAfter}`);
  const after = readEntries(file);
  const last = after[after.length - 1];
  check(`${label}: the session file gained exactly that entry at its end`, after.length === linesBefore + 1 && last?.type === "compaction" && last.id === e.id, `lines ${linesBefore} -> ${after.length}, last ${j(last && { type: last.type, id: last.id })}`);
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const genuine = pickGenuine();
  if (!fs.existsSync(SERVER)) {
    check("server binary exists", false, `${SERVER} missing: run make build`);
    return;
  }
  if (!genuine || !fs.existsSync(genuine)) {
    check("a genuine session to test with", false, "testdata/corpus/genuine/*.jsonl is empty: pass --session FILE");
    return;
  }
  console.log(`# server ${SERVER}`);
  console.log(`# session ${path.relative(REPO, genuine)} (${readEntries(genuine).length} lines), temp ${T}`);

  // Copies: MAIN is the newest (current) session; B, C, D, E, F are older ones for the token,
  // cancellation and configuration scenarios, each compacted once.
  const name = (iso, id) => path.join(SESSIONS_DIR, `${iso.replace(/[:.]/g, "-")}_${id}.jsonl`);
  const files = {
    F: name("2025-12-31T10:00:00.000Z", "00000000-0000-4000-8000-00000000000f"),
    E: name("2026-01-01T10:00:00.000Z", "00000000-0000-4000-8000-00000000000e"),
    D: name("2026-01-02T10:00:00.000Z", "00000000-0000-4000-8000-00000000000d"),
    C: name("2026-01-03T10:00:00.000Z", "00000000-0000-4000-8000-00000000000c"),
    B: name("2026-01-04T10:00:00.000Z", "00000000-0000-4000-8000-00000000000b"),
    MAIN: name("2026-01-05T10:00:00.000Z", "00000000-0000-4000-8000-00000000000a"),
  };
  let age = 6;
  for (const f of Object.values(files)) {
    fs.copyFileSync(genuine, f);
    const t = new Date(Date.now() - age-- * 3600_000);
    fs.utimesSync(f, t, t);
  }
  const lines = readEntries(files.MAIN);
  const header = lines[0];
  const entries = lines.filter((e) => e.type !== "session");

  const llm = await startSlowLLM();
  // ---- 1. initialize and the command table ---------------------------------------------------
  // keepRecentTokens is small so that even a short genuine session has something to compact.
  const s = startServer("main", { PI_LSP_CONFORMANCE_KEY: "sk-test-not-a-real-key" });
  const init = await settle(s.conn.sendRequest("initialize", initParams({ keepRecentTokens: 100 })), 10_000, "initialize");
  if (!check("initialize answers", init.ok, init.ok ? "" : String(init.error))) return;
  const caps = init.value.capabilities ?? {};
  const cmds = caps.executeCommandProvider?.commands ?? [];
  // The contract's commands are all there; exact equality with the server's own table and the
  // VS Code extension's contributes.commands is checked below.
  check(
    "initialize: executeCommandProvider.commands has every command of the contract, no duplicates",
    EXPECTED_COMMANDS.every((c) => cmds.includes(c)) && new Set(cmds).size === cmds.length && cmds.every((c) => c.startsWith("pi.")),
    `got ${j(cmds)}`,
  );
  check("initialize: serverInfo.name is pi-lsp", init.value.serverInfo?.name === "pi-lsp" && typeof init.value.serverInfo?.version === "string", j(init.value.serverInfo));
  const methods = caps.experimental?.pi?.methods;
  check("initialize: experimental.pi.methods lists the pi/* requests", Array.isArray(methods) && ["pi/compact", "pi/tree", "pi/navigate"].every((m) => methods.includes(m)), j(methods));
  await s.conn.sendNotification("initialized", {});

  // The server's table (pi-lsp commands --json) and the VS Code extension's contributes.commands.
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "editors", "vscode", "package.json"), "utf8"));
  const contributed = pkg.contributes.commands.filter((c) => c.command.startsWith("pi.")).map((c) => c.command).sort();
  const cli = spawnSync(SERVER, ["commands", "--json"], { env: baseEnv, encoding: "utf8", timeout: 10_000 });
  let table;
  try {
    table = cli.status === 0 ? JSON.parse(cli.stdout) : undefined;
  } catch {}
  if (table) {
    const ids = table.map((c) => c.id).sort();
    check("pi-lsp commands --json equals initialize's commands", j(ids) === j([...cmds].sort()), `cli ${j(ids)} init ${j([...cmds].sort())}`);
    // Every server command is contributed; every other contributed command is one of the
    // extension's own (EXTENSION_COMMANDS in models/commands.ts).
    const own = new Set([...fs.readFileSync(path.join(REPO, "editors", "vscode", "src", "models", "commands.ts"), "utf8").matchAll(/"(pi\.[\w.]+)"/g)].map((m) => m[1]));
    const missing = ids.filter((id) => !contributed.includes(id));
    const unknown = contributed.filter((id) => !ids.includes(id) && !own.has(id));
    check("package.json contributes every server command, and only the extension's own besides", missing.length === 0 && unknown.length === 0, `not contributed ${j(missing)}, unknown ${j(unknown)}`);
    const titles = Object.fromEntries(pkg.contributes.commands.map((c) => [c.command, c.title]));
    const wrong = table.filter((c) => c.title && titles[c.id] !== c.title);
    check("pi-lsp commands --json titles equal the palette titles", wrong.length === 0, j(wrong.map((c) => [c.id, c.title, titles[c.id]])));
  } else {
    console.log(`# pi-lsp commands --json not available (exit ${cli.status}: ${(cli.stderr || "").trim().split("\n")[0]}); comparing initialize with package.json`);
    check("initialize's commands equal package.json contributes.commands (pi.*)", j([...cmds].sort()) === j(contributed), `init ${j([...cmds].sort())} package.json ${j(contributed)}`);
  }

  // ---- 2. sessions, selectSession, tree, context, files ---------------------------------------
  const sessions = await settle(s.conn.sendRequest("workspace/executeCommand", { command: "pi.sessions", arguments: [{}] }), 10_000, "pi.sessions");
  if (check("pi.sessions answers", sessions.ok, sessions.ok ? "" : errText(sessions.error))) {
    const paths = (sessions.value?.sessions ?? []).map((x) => x.path);
    check("pi.sessions lists the 6 sessions of the workspace", paths.length === 6 && Object.values(files).every((f) => paths.includes(f)), j(paths));
    const mod = (sessions.value?.sessions ?? []).map((x) => Date.parse(x.modified));
    // "modified" is Pi's last activity time (the newest entry timestamp), so identical copies tie.
    check("pi.sessions is newest first (by modified)", mod.length > 0 && mod.every((m, i) => !Number.isNaN(m) && (i === 0 || m <= mod[i - 1])), j(sessions.value?.sessions?.map((x) => x.modified)));
    const first = sessions.value?.sessions?.[0] ?? {};
    check("pi.sessions items have id, created, modified, messageCount, firstMessage", typeof first.id === "string" && typeof first.created === "string" && typeof first.modified === "string" && typeof first.messageCount === "number" && typeof first.firstMessage === "string", j(first));
  }
  const sel = await settle(s.conn.sendRequest("workspace/executeCommand", { command: "pi.selectSession", arguments: [{ path: files.MAIN }] }), 10_000, "pi.selectSession");
  check("pi.selectSession answers {session}", sel.ok && sel.value?.session === files.MAIN, sel.ok ? j(sel.value) : errText(sel.error));

  const tree = await settle(s.conn.sendRequest("workspace/executeCommand", { command: "pi.tree", arguments: [{}] }), 10_000, "pi.tree");
  if (check("executeCommand pi.tree answers", tree.ok, tree.ok ? "" : errText(tree.error))) {
    const t = tree.value;
    check("pi.tree: session is the selected file", t?.session === files.MAIN, j(t?.session));
    const nodes = [];
    const stack = [...(t?.roots ?? [])];
    while (stack.length) {
      const n = stack.pop();
      nodes.push(n);
      stack.push(...(n.children ?? []));
    }
    check("pi.tree: one node per entry of the file", nodes.length === entries.length && entries.every((e) => nodes.some((n) => n.id === e.id)), `${nodes.length} nodes, ${entries.length} entries`);
    const leaves = nodes.filter((n) => n.isLeaf);
    const lastId = entries[entries.length - 1]?.id;
    check("pi.tree: leafId is the last entry and the only isLeaf node", t?.leafId === lastId && leaves.length === 1 && leaves[0].id === lastId, `leafId ${t?.leafId}, last ${lastId}, isLeaf ${j(leaves.map((n) => n.id))}`);
    const bad = nodes.filter((n) => typeof n.type !== "string" || typeof n.onPath !== "boolean" || !Array.isArray(n.children) || (n.type === "message" && typeof n.role !== "string"));
    check("pi.tree: nodes have type, role (messages), onPath, isLeaf, children", bad.length === 0, j(bad.slice(0, 2)));
  }
  const ctx = await settle(s.conn.sendRequest("pi/context", {}), 10_000, "pi/context");
  check(
    "pi/context answers tokens, contextWindow, percent, messageCount",
    ctx.ok && typeof ctx.value?.tokens === "number" && ctx.value.contextWindow > 0 && typeof ctx.value.percent === "number" && typeof ctx.value.messageCount === "number",
    ctx.ok ? j(ctx.value) : errText(ctx.error),
  );
  const fl = await settle(s.conn.sendRequest("pi/files", {}), 10_000, "pi/files");
  check("pi/files answers readFiles and modifiedFiles arrays", fl.ok && Array.isArray(fl.value?.readFiles) && Array.isArray(fl.value?.modifiedFiles), fl.ok ? j(fl.value) : errText(fl.error));

  // ---- 3. pi.compact through executeCommand with no workDoneToken -----------------------------
  {
    const before = readEntries(files.MAIN).length;
    const creates0 = s.log.creates.length;
    const notes0 = s.log.notifications.length;
    const r = await settle(
      s.conn.sendRequest("workspace/executeCommand", { command: "pi.compact", arguments: [{ instructions: "Focus on the files that were written." }] }),
      30_000,
      "pi.compact",
    );
    check("executeCommand pi.compact (no token) answers", r.ok, r.ok ? "" : errText(r.error));
    const created = s.log.creates.slice(creates0);
    check("pi.compact: the server asked window/workDoneProgress/create", created.length === 1, `creates ${j(created.map((c) => c.token))}`);
    if (created.length > 0) {
      const token = created[0].token;
      check("pi.compact: created token is a string or an integer", typeof token === "string" || Number.isInteger(token), j(token));
      await waitFor(() => progressFor(s.log, token).some((p) => p.value?.kind === "end"), 3000);
      const firstProgress = progressFor(s.log, token)[0];
      check("pi.compact: create came before the first $/progress", firstProgress && firstProgress.t >= created[0].t, "");
      checkProgress("pi.compact", s.log, token, { title: "Compacting session" });
    }
    if (r.ok) checkCompactResult("pi.compact", r.value, files.MAIN, before);
    const newLeaf = r.value?.entry?.id;
    const changed = await waitFor(() => s.log.notifications.slice(notes0).find((n) => n.method === "pi/sessionChanged" && n.params?.session === files.MAIN && n.params?.leafId === newLeaf), 3000);
    check("pi/sessionChanged {session, leafId: the compaction, entries} after the server's own write", !!changed && typeof changed.params.entries === "number" && changed.params.entries === readEntries(files.MAIN).filter((e) => e.type !== "session").length, j(changed?.params ?? s.log.notifications.slice(notes0).filter((n) => n.method === "pi/sessionChanged").map((n) => n.params.leafId)));
    const start = s.log.notifications.slice(notes0).find((n) => n.method === "pi/compactionStart");
    const end = s.log.notifications.slice(notes0).find((n) => n.method === "pi/compactionEnd");
    check("pi/compactionStart {session, reason: manual}", start?.params?.reason === "manual" && start.params.session === files.MAIN, j(start?.params));
    check("pi/compactionEnd {aborted: false, willRetry: false}", end?.params?.aborted === false && end.params.willRetry === false, j(end?.params && { ...end.params, result: undefined }));
    // After a compaction Pi reports the size as unknown (tokens: null) until a reply reports usage.
    const usage = await waitFor(() => s.log.notifications.slice(notes0).find((n) => n.method === "pi/contextUsage" && n.t >= (changed?.t ?? 0) && (n.params?.tokens === null || n.params?.tokens < (r.value?.tokensBefore ?? 0))), 3000);
    check("pi/contextUsage after the compaction: smaller, or null (unknown) as Pi says", !!usage && usage.params.contextWindow > 0, j(usage?.params ?? s.log.notifications.slice(notes0).filter((n) => n.method === "pi/contextUsage").map((n) => n.params.tokens)));
    const ctxAfter = await settle(s.conn.sendRequest("pi/context", {}), 5000, "pi/context after compaction");
    check("pi/context after the compaction: lastCompaction is the new entry", ctxAfter.ok && ctxAfter.value?.lastCompaction?.id === newLeaf && typeof ctxAfter.value.lastCompaction.summary === "string", ctxAfter.ok ? j(ctxAfter.value?.lastCompaction && { id: ctxAfter.value.lastCompaction.id, tokens: ctxAfter.value.tokens }) : errText(ctxAfter.error));
  }

  // ---- 4. pi/compact with a client workDoneToken (numeric, then string) -----------------------
  for (const [label, token, file] of [
    ["pi/compact numeric token", 4242, files.B],
    ["pi/compact string token", "tok-conformance-1", files.C],
  ]) {
    const before = readEntries(file).length;
    const creates0 = s.log.creates.length;
    const r = await settle(s.conn.sendRequest("pi/compact", { session: file, workDoneToken: token }), 30_000, label);
    check(`${label}: answers`, r.ok, r.ok ? "" : errText(r.error));
    await waitFor(() => progressFor(s.log, token).some((p) => p.value?.kind === "end"), 3000);
    check(`${label}: no window/workDoneProgress/create (the client's token is used)`, s.log.creates.length === creates0, j(s.log.creates.slice(creates0)));
    const typed = s.log.progress.filter((p) => String(p.token) === String(token));
    check(`${label}: $/progress keeps the token's JSON type (${typeof token})`, typed.length > 0 && typed.every((p) => p.token === token), j(typed.map((p) => p.token)));
    checkProgress(label, s.log, token, { title: "Compacting session" });
    if (r.ok) checkCompactResult(label, r.value, file, before);
  }

  // ---- 5. errors -----------------------------------------------------------------------------
  const unknown = await settle(s.conn.sendRequest("pi/doesNotExist", {}), 5000, "unknown method");
  check("unknown method → -32601", !unknown.ok && unknown.error?.code === -32601, unknown.ok ? `result ${j(unknown.value)}` : errText(unknown.error));
  const badNav = await settle(s.conn.sendRequest("workspace/executeCommand", { command: "pi.navigate", arguments: [{}] }), 5000, "pi.navigate without targetId");
  check("pi.navigate without targetId → -32602 with data.kind", !badNav.ok && badNav.error?.code === -32602 && typeof badNav.error?.data?.kind === "string", badNav.ok ? `result ${j(badNav.value)}` : errText(badNav.error));
  const missing = await settle(s.conn.sendRequest("pi/navigate", { targetId: "no-such-entry" }), 5000, "pi/navigate unknown id");
  check("pi/navigate to an unknown id → error with data.kind notFound", !missing.ok && missing.error?.data?.kind === "notFound" && missing.error.code !== 0, missing.ok ? `result ${j(missing.value)}` : errText(missing.error));

  // ---- 5b. workspace/didChangeConfiguration switches the summarizer -------------------------
  {
    const req0 = llm.state.requests;
    await s.conn.sendNotification("workspace/didChangeConfiguration", {
      settings: { piLsp: { summarizer: { kind: "openai", baseUrl: `http://127.0.0.1:${llm.port}/v1`, model: "m", apiKeyEnv: "PI_LSP_CONFORMANCE_KEY" } } },
    });
    const cts = new rpc.CancellationTokenSource();
    const p = settle(s.conn.sendRequest("pi/compact", { session: files.F }, cts.token), 20_000, "pi/compact after didChangeConfiguration");
    const reached = await waitFor(() => llm.state.requests > req0, 8000);
    check("didChangeConfiguration {settings: {piLsp: {summarizer: {kind: openai, ...}}}} switches the summarizer", !!reached, `LLM requests ${llm.state.requests - req0}`);
    cts.cancel();
    const r = await p;
    check("the compaction after the switch is cancelled (or finishes)", !r.ok ? r.error?.code === -32800 : !!r.value, r.ok ? j(r.value) : errText(r.error));
  }

  // ---- 6. shutdown / exit --------------------------------------------------------------------
  const shut = await settle(s.conn.sendRequest("shutdown"), 5000, "shutdown");
  check("shutdown answers null", shut.ok && (shut.value === null || shut.value === undefined), shut.ok ? j(shut.value) : errText(shut.error));
  await s.conn.sendNotification("exit");
  const ex = await withTimeout(s.exited, 5000, "exit").catch((e) => ({ code: null, signal: String(e) }));
  check("exit → the process exits with code 0", ex.code === 0, j(ex));
  s.conn.dispose();

  // ---- 7. cancellation of a running compaction (slow OpenAI-compatible summarizer) ------------
  try {
    const s2 = startServer("slow", { PI_LSP_CONFORMANCE_KEY: "sk-test-not-a-real-key" });
    const init2 = await settle(
      s2.conn.sendRequest("initialize", initParams({ summarizer: "openai", baseUrl: `http://127.0.0.1:${llm.port}/v1`, model: "m", apiKeyEnv: "PI_LSP_CONFORMANCE_KEY", keepRecentTokens: 100 })),
      10_000,
      "initialize (openai)",
    );
    if (check("initialize with the openai summarizer options", init2.ok, init2.ok ? "" : errText(init2.error))) {
      await s2.conn.sendNotification("initialized", {});

      // 7a. $/cancelRequest (what vscode-jsonrpc sends for a cancelled CancellationToken).
      {
        const file = files.D;
        const before = fs.readFileSync(file, "utf8");
        const req0 = llm.state.requests;
        const notes0 = s2.log.notifications.length;
        const cts = new rpc.CancellationTokenSource();
        const t0 = Date.now();
        const p = settle(s2.conn.sendRequest("pi/compact", { session: file, workDoneToken: "cancel-me" }, cts.token), 20_000, "pi/compact (to cancel)");
        const reached = await waitFor(() => llm.state.requests > req0, 8000);
        check("slow summarizer got the request (auth header from apiKeyEnv)", !!reached, `requests ${llm.state.requests}`);
        cts.cancel();
        const r = await p;
        const ms = Date.now() - t0;
        if (r.ok) {
          check("$/cancelRequest: answered (completed before the cancel)", r.value?.entry?.type === "compaction" || r.value?.nothingToCompact === true, j(r.value));
        } else {
          check("$/cancelRequest → -32800", r.error?.code === -32800, errText(r.error));
          check("$/cancelRequest: answered promptly (< 5 s)", ms < 5000, `${ms} ms`);
          check("$/cancelRequest: the session file is unchanged", fs.readFileSync(file, "utf8") === before, "");
          const end = await waitFor(() => s2.log.notifications.slice(notes0).find((n) => n.method === "pi/compactionEnd"), 2000);
          check("$/cancelRequest: pi/compactionEnd says aborted: true", end?.params?.aborted === true, j(end?.params));
          const pEnd = await waitFor(() => progressFor(s2.log, "cancel-me").find((x) => x.value?.kind === "end"), 2000);
          check("$/cancelRequest: the progress still ends", !!pEnd, j(progressFor(s2.log, "cancel-me").map((x) => x.value?.kind)));
        }
        const aborted = await waitFor(() => llm.state.aborted > 0, 3000);
        console.log(`# upstream LLM request aborted by the server after cancel: ${aborted ? "yes" : "no"}`);
      }

      // 7b. window/workDoneProgress/cancel of a server-created token (VS Code's Cancel button).
      {
        const file = files.E;
        const before = fs.readFileSync(file, "utf8");
        const creates0 = s2.log.creates.length;
        const req0 = llm.state.requests;
        const p = settle(s2.conn.sendRequest("workspace/executeCommand", { command: "pi.compact", arguments: [{ session: file }] }), 20_000, "pi.compact (progress cancel)");
        const created = await waitFor(() => s2.log.creates[creates0], 8000);
        await waitFor(() => llm.state.requests > req0, 8000);
        if (check("progress cancel: the server created a token", !!created, "")) {
          const t0 = Date.now();
          await s2.conn.sendNotification("window/workDoneProgress/cancel", { token: created.token });
          const r = await p;
          if (r.ok) {
            check("window/workDoneProgress/cancel: answered (completed before the cancel)", r.value?.entry?.type === "compaction", j(r.value));
          } else {
            check("window/workDoneProgress/cancel → -32800", r.error?.code === -32800, errText(r.error));
            check("window/workDoneProgress/cancel: answered promptly (< 5 s)", Date.now() - t0 < 5000, `${Date.now() - t0} ms`);
            check("window/workDoneProgress/cancel: the session file is unchanged", fs.readFileSync(file, "utf8") === before, "");
          }
        } else {
          await p;
        }
      }
      const shut2 = await settle(s2.conn.sendRequest("shutdown"), 5000, "shutdown (slow)");
      check("shutdown of the second server", shut2.ok, shut2.ok ? "" : errText(shut2.error));
      await s2.conn.sendNotification("exit");
      const ex2 = await withTimeout(s2.exited, 5000, "exit (slow)").catch((e) => ({ code: null, signal: String(e) }));
      check("exit of the second server with code 0", ex2.code === 0, j(ex2));
      s2.conn.dispose();
    }
  } finally {
    llm.server.closeAllConnections?.();
    llm.server.close();
  }
}

function cleanup(keep) {
  for (const c of children) {
    try {
      c.kill("SIGKILL");
    } catch {}
  }
  if (!keep && tests.failed === 0 && process.env.PI_LSP_KEEP_TMP !== "1") fs.rmSync(T, { recursive: true, force: true });
  else console.log(`# temp dir kept: ${T} (server stderr in *.stderr.log)`);
}

runMain(tests, main, {
  ms: 120_000,
  what: "the whole conformance run",
  after({ timedOut }) {
    cleanup(timedOut);
    if (tests.failures.length) console.log(`# failed: ${tests.failures.join("; ")}`);
  },
});
