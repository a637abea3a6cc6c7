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
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { cliOptions, clip, readEntries, sessionsDir, sleep, waitFor } from "../jsonrpc/harness.mjs";
import { REPO, VERSION, runMain, tally } from "../lib/layer.mjs";
import { chromiumOf, freePort, freshArtifacts, installVsix, launchChromium, placeSession, QUIET_SETTINGS, readEvents, runPalette, screenshots, startCodeServer, visible, world } from "./workbench.mjs";

const opt = cliOptions(process.argv.slice(2));
const VSIX = path.resolve(opt("--vsix", ""));
const MISMATCH_BIN = path.resolve(opt("--mismatch-bin", ""));
const MISMATCH_VERSION = opt("--mismatch-version", "");
const T = path.resolve(opt("--tmp", fs.mkdtempSync("/tmp/pi-lsp-dist-vscode-")));
const ART = path.resolve(opt("--artifacts", path.join(REPO, "test-artifacts", "dist-vscode")));
const GENUINE = path.join(REPO, "testdata", "corpus", "genuine", "full-main.jsonl");
const chromium = chromiumOf();

freshArtifacts(ART);

const tests = tally({ timed: true });
const { check, note } = tests;
const j = (v) => clip(v, 400);

const { agent: AGENT, ws: WS, userData: UD, extDir: EXTDIR, events: EVENTS } = world(T, "dist-project");

const eventsOf = (name) => readEvents(EVENTS).filter((e) => e.event === name);

const shot = screenshots(ART, note);
// PATH without any directory that has a pi-lsp: the package's own binary must be used.
function pathWithoutPiLsp() {
  return (process.env.PATH ?? "").split(path.delimiter).filter((d) => d && !fs.existsSync(path.join(d, "pi-lsp"))).join(path.delimiter);
}

async function main() {
  if (!check("the linux-x64 package exists", fs.existsSync(VSIX), VSIX)) return;
  // A genuine Pi session of the workspace, under Pi's file name.
  const SESSION = path.join(sessionsDir(AGENT, WS), `2026-11-29T12-00-00-000Z_${readEntries(GENUINE)[0].id}.jsonl`);
  placeSession(GENUINE, SESSION, WS);
  const name = readEntries(SESSION).find((e) => e.type === "session_info")?.name;
  const settingsFile = path.join(UD, "User", "settings.json");
  fs.writeFileSync(settingsFile, JSON.stringify(QUIET_SETTINGS, null, 2));

  const PATH = pathWithoutPiLsp();
  check("no pi-lsp on the PATH the editor gets", !spawnSync("sh", ["-c", "command -v pi-lsp"], { env: { PATH } }).stdout?.toString().trim());
  const env = { ...process.env, PATH, PI_LSP_VSCODE_TEST_LOG: EVENTS };
  delete env.VSCODE_IPC_HOOK_CLI;
  const inst = installVsix({ vsix: VSIX, userData: UD, extDir: EXTDIR, env });
  const installed = inst.installed;
  check(`code-server --install-extension ${path.basename(VSIX)}`, inst.ok, inst.detail);
  if (!installed) return;
  const extDir = path.join(EXTDIR, installed);
  const bins = fs.readdirSync(path.join(extDir, "bin"));
  check("the installed extension holds only its platform's bin/pi-lsp", JSON.stringify(bins) === JSON.stringify(["pi-lsp"]), j(bins));
  check(`the installed extension is version ${VERSION} for linux-x64`, installed.startsWith(`pi-lsp.pi-lsp-${VERSION}`), installed);

  const port = await freePort();
  const { cs, healthy: csHealthy } = startCodeServer({ port, userData: UD, extDir: EXTDIR, ws: WS, env, log: path.join(ART, "code-server.log") });
  const healthy = await csHealthy;
  if (!check("code-server answers /healthz", healthy, `port ${port}`)) return;
  const browser = await launchChromium(chromium);
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

runMain(tests, main, { ms: 180_000, what: "the test" });
