// What the two drivers of a real VS Code share (test/vscode/e2e.mjs, the extension built
// from the tree; test/vscode/dist-e2e.mjs, the package of `make dist`): code-server 4.100.3
// from .tools (scripts/install-code-server.sh), Debian's chromium through playwright-core,
// the extension's event log, the command palette, and a genuine Pi session placed in the
// workspace.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { createRequire } from "node:module";
import { sleep, waitFor } from "../jsonrpc/harness.mjs";
import { REPO } from "../lib/layer.mjs";

export const CS_ENTRY = path.join(REPO, ".tools", "code-server", "node_modules", "code-server", "out", "node", "entry.js");

/** playwright-core's chromium, from .tools/playwright. */
export const chromiumOf = () => createRequire(path.join(REPO, ".tools", "playwright", "package.json"))("playwright-core").chromium;

/** The user settings that keep the workbench quiet: no welcome page, tips, updates or AI. */
export const QUIET_SETTINGS = {
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "security.workspace.trust.enabled": false,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "chat.disableAIFeatures": true,
};

/**
 * The artifacts folder of a run, emptied of an earlier run's files with these endings
 * (screenshots and logs by default).
 */
export function freshArtifacts(dir, endings = [".png", ".log"]) {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync(dir)) if (endings.some((e) => f.endsWith(e))) fs.rmSync(path.join(dir, f));
  return dir;
}

/**
 * The screenshots of a run, numbered in the order taken: shot(page, name) saves
 * dir/NN-name.png, notes it (or why it failed: a screenshot never fails a check) and
 * returns the file; shot.last is the file of the latest one.
 */
export function screenshots(dir, note) {
  let n = 0;
  const shot = async (page, name) => {
    const file = path.join(dir, `${String(++n).padStart(2, "0")}-${name}.png`);
    shot.last = file;
    try {
      await page.screenshot({ path: file });
      note(`screenshot ${path.relative(REPO, file)}`);
    } catch (e) {
      note(`screenshot ${name} failed: ${e.message}`);
    }
    return file;
  };
  return shot;
}

/**
 * The temporary world under T: Pi's agent dir (PI_CODING_AGENT_DIR when set), the workspace
 * folder ws/<name>, code-server's user data and extensions, the extension's event log.
 */
export function world(T, name) {
  const w = {
    agent: process.env.PI_CODING_AGENT_DIR || path.join(T, "agent"),
    ws: path.join(T, "ws", name),
    userData: path.join(T, "user-data"),
    extDir: path.join(T, "extensions"),
    events: path.join(T, "extension-events.jsonl"),
  };
  for (const d of [w.ws, w.userData, w.extDir, path.join(w.userData, "User")]) fs.mkdirSync(d, { recursive: true });
  return w;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

/** The events the extension logged to file (PI_LSP_VSCODE_TEST_LOG), one JSON a line. */
export function readEvents(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return {};
      }
    });
}

/** Whether locator becomes visible within ms. */
export function visible(locator, ms = 10_000) {
  return locator.waitFor({ state: "visible", timeout: ms }).then(
    () => true,
    () => false,
  );
}

/**
 * Runs the palette command title. A view or editor that takes the focus just after F1 (the
 * previous command finishing) closes the palette again: it retries a few times, calling
 * onRetry(attempt); beforeEnter runs once the command's row shows.
 */
export async function runPalette(page, title, { onRetry = () => {}, beforeEnter = async () => {} } = {}) {
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
    onRetry(attempt);
    await sleep(500);
  }
  await beforeEnter();
  await page.keyboard.press("Enter");
}

/**
 * Copies the genuine session src to file, its header's cwd set to the workspace ws (as Pi
 * writes it there); returns the header.
 */
export function placeSession(src, file, ws) {
  const lines = fs.readFileSync(src, "utf8").split("\n");
  const header = JSON.parse(lines[0]);
  header.cwd = ws;
  lines[0] = JSON.stringify(header);
  fs.writeFileSync(file, lines.join("\n"));
  return header;
}

/** code-server --install-extension vsix; installed is the extension's folder name, if any. */
export function installVsix({ vsix, userData, extDir, env }) {
  const inst = spawnSync(process.execPath, [CS_ENTRY, "--user-data-dir", userData, "--extensions-dir", extDir, "--install-extension", vsix], { env, encoding: "utf8", timeout: 120_000 });
  const installed = fs.readdirSync(extDir).find((d) => d.startsWith("pi-lsp.pi-lsp-"));
  const detail = `exit ${inst.status}; ${(inst.stdout + inst.stderr).trim().split("\n").slice(-2).join(" | ")}`;
  return { ok: inst.status === 0 && !!installed, installed, detail };
}

/**
 * Starts code-server on 127.0.0.1:port for the folder ws, its output to log; healthy
 * resolves to whether it answers /healthz within 30 s.
 */
export function startCodeServer({ port, userData, extDir, ws, env, log }) {
  const out = fs.openSync(log, "w");
  const cs = spawn(
    process.execPath,
    [CS_ENTRY, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--user-data-dir", userData, "--extensions-dir", extDir, "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", ws],
    { env, stdio: ["ignore", out, out] },
  );
  const probe = () =>
    new Promise((resolve) => {
      const req = http.get(`http://127.0.0.1:${port}/healthz`, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on("error", () => resolve(false));
      req.setTimeout(1000, () => {
        req.destroy();
        resolve(false);
      });
    });
  return { cs, healthy: waitFor(probe, 30_000, 250) };
}

/** Debian's headless chromium, as both drivers run it. */
export function launchChromium(chromium) {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"],
  });
}
