#!/usr/bin/env node
// The linux-x64 VS Code package of `make dist` in a real VS Code (code-server 4.100.3,
// driven by Debian's chromium through playwright-core), as a user without pi-lsp installs
// it: no pi-lsp on PATH, no setting. Run by scripts/test-dist.sh (which installs
// code-server and playwright with scripts/install-code-server.sh and bounds this process
// in time); the same setup as test/vscode/e2e.mjs, much shorter:
//   1. code-server --install-extension pi-lsp-linux-x64-<version>.vsix
//   2. a workspace with a genuine Pi session; the extension starts when "Pi: Select Session"
//      runs, with the binary bundled in the package (the output channel says so), of the
//      extension's version, and the command answers;
//   3. piLsp.server.path set to a pi-lsp of another version, the restart it offers
//      accepted: the extension says once "pi-lsp 0.3.0 server, extension 0.2.0: update one
//      of them".
//
//   node test/vscode/dist-e2e.mjs --vsix dist/pi-lsp-linux-x64-0.2.0.vsix --mismatch-bin BIN \
//        --mismatch-version 0.3.0 --tmp DIR [--artifacts DIR]
// Last line: "N passed, M failed"; exit code 0 only when nothing failed.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { cliOptions, clip, readEntries, sessionsDir, sleep, waitFor } from "../jsonrpc/harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..");
const opt = cliOptions(process.argv.slice(2));
const VSIX = path.resolve(opt("--vsix", ""));
const MISMATCH_BIN = path.resolve(opt("--mismatch-bin", ""));
const MISMATCH_VERSION = opt("--mismatch-version", "");
const T = path.resolve(opt("--tmp", fs.mkdtempSync("/tmp/pi-lsp-dist-vscode-")));
const ART = path.resolve(opt("--artifacts", path.join(REPO, "test-artifacts", "dist-vscode")));
const GENUINE = path.join(REPO, "testdata", "corpus", "genuine", "full-main.jsonl");
const VERSION = fs.readFileSync(path.join(REPO, "VERSION"), "utf8").trim();
const CS_ENTRY = path.join(REPO, ".tools", "code-server", "node_modules", "code-server", "out", "node", "entry.js");
const { chromium } = createRequire(path.join(REPO, ".tools", "playwright", "package.json"))("playwright-core");

fs.mkdirSync(ART, { recursive: true });
for (const f of fs.readdirSync(ART)) if (f.endsWith(".png") || f.endsWith(".log")) fs.rmSync(path.join(ART, f));

let passed = 0;
let failed = 0;
const t0 = Date.now();
const el = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
function check(name, ok, detail = "") {
  ok ? passed++ : failed++;
  console.log(`${ok ? "ok  " : "FAIL"} [${el()}] ${name}${detail ? ` — ${detail}` : ""}`);
  return !!ok;
}
const note = (s) => console.log(`# [${el()}] ${s}`);
const j = (v) => clip(v, 400);

const AGENT = process.env.PI_CODING_AGENT_DIR || path.join(T, "agent");
const WS = path.join(T, "ws", "dist-project");
const UD = path.join(T, "user-data");
const EXTDIR = path.join(T, "extensions");
const EVENTS = path.join(T, "extension-events.jsonl");
for (const d of [WS, UD, EXTDIR, path.join(UD, "User")]) fs.mkdirSync(d, { recursive: true });

function events() {
  if (!fs.existsSync(EVENTS)) return [];
  return fs.readFileSync(EVENTS, "utf8").split("\n").filter(Boolean).map((l) => {
    try {
      return JSON.parse(l);
    } catch {
      return {};
    }
  });
}
const eventsOf = (name) => events().filter((e) => e.event === name);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}
const visible = (locator, ms = 10_000) => locator.waitFor({ state: "visible", timeout: ms }).then(() => true, () => false);
let shotN = 0;
async function shot(page, name) {
  await page.screenshot({ path: path.join(ART, `${String(++shotN).padStart(2, "0")}-${name}.png`) }).catch(() => {});
}
async function runPalette(page, title) {
  const input = page.locator(".quick-input-widget input");
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first();
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press("Escape");
    await sleep(150);
    await page.keyboard.press("F1");
    const ok = await input
      .waitFor({ state: "visible", timeout: 10_000 })
      .then(() => input.fill(`>${title}`, { timeout: 3000 }))
      .then(() => row.waitFor({ state: "visible", timeout: 5000 }))
      .then(() => true, (e) => (attempt >= 3 ? Promise.reject(e) : false));
    if (ok) break;
    await sleep(500);
  }
  await page.keyboard.press("Enter");
}

// PATH without any directory that has a pi-lsp: the package's own binary must be used.
function pathWithoutPiLsp() {
  return (process.env.PATH ?? "").split(path.delimiter).filter((d) => d && !fs.existsSync(path.join(d, "pi-lsp"))).join(path.delimiter);
}

async function main() {
  if (!check("the linux-x64 package exists", fs.existsSync(VSIX), VSIX)) return;
  // A genuine Pi session of the workspace, under Pi's file name.
  const SESSION = path.join(sessionsDir(AGENT, WS), `2026-11-29T12-00-00-000Z_${readEntries(GENUINE)[0].id}.jsonl`);
  const lines = fs.readFileSync(GENUINE, "utf8").split("\n");
  const header = JSON.parse(lines[0]);
  header.cwd = WS;
  lines[0] = JSON.stringify(header);
  fs.writeFileSync(SESSION, lines.join("\n"));
  const name = readEntries(SESSION).find((e) => e.type === "session_info")?.name;
  const settingsFile = path.join(UD, "User", "settings.json");
  const settings = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "security.workspace.trust.enabled": false,
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "chat.disableAIFeatures": true,
  };
  fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));

  const PATH = pathWithoutPiLsp();
  check("no pi-lsp on the PATH the editor gets", !spawnSync("sh", ["-c", "command -v pi-lsp"], { env: { PATH } }).stdout?.toString().trim());
  const env = { ...process.env, PATH, PI_LSP_VSCODE_TEST_LOG: EVENTS };
  delete env.VSCODE_IPC_HOOK_CLI;
  const inst = spawnSync(process.execPath, [CS_ENTRY, "--user-data-dir", UD, "--extensions-dir", EXTDIR, "--install-extension", VSIX], { env, encoding: "utf8", timeout: 120_000 });
  const installed = fs.readdirSync(EXTDIR).find((d) => d.startsWith("pi-lsp.pi-lsp-"));
  check(`code-server --install-extension ${path.basename(VSIX)}`, inst.status === 0 && !!installed, `exit ${inst.status}; ${(inst.stdout + inst.stderr).trim().split("\n").slice(-2).join(" | ")}`);
  if (!installed) return;
  const extDir = path.join(EXTDIR, installed);
  const bins = fs.readdirSync(path.join(extDir, "bin"));
  check("the installed extension holds only its platform's bin/pi-lsp", JSON.stringify(bins) === JSON.stringify(["pi-lsp"]), j(bins));
  check(`the installed extension is version ${VERSION} for linux-x64`, installed.startsWith(`pi-lsp.pi-lsp-${VERSION}`), installed);

  const port = await freePort();
  const csLog = fs.openSync(path.join(ART, "code-server.log"), "w");
  const cs = spawn(process.execPath, [CS_ENTRY, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--user-data-dir", UD, "--extensions-dir", EXTDIR, "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", WS], { env, stdio: ["ignore", csLog, csLog] });
  const healthy = await waitFor(() => new Promise((resolve) => {
    const req = http.get(`http://127.0.0.1:${port}/healthz`, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.setTimeout(1000, () => {
      req.destroy();
      resolve(false);
    });
  }), 30_000, 250);
  if (!check("code-server answers /healthz", healthy, `port ${port}`)) return;
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(WS)}`, { waitUntil: "domcontentloaded", timeout: 60_000 });
    if (!check("the VS Code workbench loads", await visible(page.locator(".monaco-workbench"), 60_000))) return;
    await sleep(1500);
    check("the extension does not start before it is needed", eventsOf("started").length === 0, j(eventsOf("started")));

    // ---- a Pi command starts it with the bundled binary, and answers ----
    await runPalette(page, "Pi: Select Session");
    const started = await waitFor(() => eventsOf("started")[0] || eventsOf("serverMissing")[0] || eventsOf("startFailed")[0], 60_000, 250);
    const ok = started?.event === "started";
    check("the extension starts the binary bundled in the package", ok && started.source === "bundled" && started.command === path.join(extDir, "bin", "pi-lsp"), j(started));
    if (!ok) return;
    check(`the server is version ${VERSION}, the extension's (no version message)`, started.serverInfo?.version === VERSION && started.extensionVersion === VERSION && !started.mismatch, j(started));
    const item = page.locator(".quick-input-widget .monaco-list-row", { hasText: name || path.basename(SESSION) }).first();
    const shown = await visible(item, 20_000);
    await shot(page, "select-session");
    check("Pi: Select Session lists the workspace's session", shown, name);
    if (shown) {
      await page.keyboard.press("Enter");
      const selected = await waitFor(() => eventsOf("commandResult").find((e) => e.command === "pi.selectSession" && e.result?.session === SESSION), 15_000, 200);
      check("the bundled server answers pi.selectSession", !!selected, j(eventsOf("commandResult")));
    }

    // ---- a server of another version: said once ----
    if (MISMATCH_BIN && fs.existsSync(MISMATCH_BIN)) {
      const before = eventsOf("started").length;
      // A machine-scoped setting: code-server (a remote window) reads it from the machine's
      // settings, VS Code from the user's.
      fs.mkdirSync(path.join(UD, "Machine"), { recursive: true });
      fs.writeFileSync(path.join(UD, "Machine", "settings.json"), JSON.stringify({ "piLsp.server.path": MISMATCH_BIN }, null, 2));
      const restart = page.locator(".notification-toast", { hasText: "piLsp.server.path changed" }).first();
      const offered = await visible(restart, 20_000);
      check("changing piLsp.server.path offers a restart", offered);
      if (offered) {
        await restart.hover().catch(() => {});
        await restart.locator(".monaco-button", { hasText: "Restart" }).first().click({ timeout: 5000 }).catch((e) => note(`restart click: ${e.message}`));
      }
      const again = await waitFor(() => eventsOf("started")[before], 30_000, 250);
      const want = `pi-lsp ${MISMATCH_VERSION} server, extension ${VERSION}: update one of them`;
      check("the restarted extension runs the configured server of another version", again?.source === "piLsp.server.path" && again.serverInfo?.version === MISMATCH_VERSION && again.mismatch === want, j(again));
      const toast = await visible(page.locator(".notification-toast", { hasText: want }).first(), 15_000);
      await shot(page, "version-mismatch");
      check(`the extension says "${want}"`, toast);
      // Once: another restart with the same pair says nothing more.
      const n = () => page.locator(".notification-toast", { hasText: want }).count();
      await page.locator(".notification-toast .codicon-notifications-clear").first().click({ timeout: 2000 }).catch(() => {});
      await runPalette(page, "Pi: Restart Server");
      await waitFor(() => eventsOf("started")[before + 1], 30_000, 250);
      await sleep(1500);
      check("the same mismatch is said only once", (await n()) === 0, `${await n()} toasts`);
    } else {
      check("a pi-lsp of another version for the handshake check", false, MISMATCH_BIN);
    }
  } finally {
    await browser.close().catch(() => {});
    cs.kill("SIGTERM");
  }
}

const watchdog = setTimeout(() => {
  console.log(`FAIL [${el()}] the test did not finish in 180 s`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
}, 180_000);
main()
  .catch((e) => check("no exception", false, e.stack))
  .finally(() => {
    clearTimeout(watchdog);
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  });
