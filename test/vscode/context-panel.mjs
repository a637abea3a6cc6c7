#!/usr/bin/env node
// The Pi Context panel in a real VS Code (code-server + chromium, as test/vscode/e2e.mjs): on a
// genuine Pi 1.6.0 session compacted twice (testdata/corpus/genuine-1.6/compact-twice.jsonl),
// "Pi: Show Context Picture" opens the panel; its text figures (the kinds table, the total) and
// its charts (one segment per kind, one marker per compaction) equal the answer of the same
// pi-lsp binary's CLI for the file (`context-size --by kind --json`, `--history --json`); a click
// on the largest entry reveals and selects it in the Pi Session tree; a reply appended to the
// file by another writer shows in the panel; the panel's "Compact…" button runs Pi: Compact
// Session, after which the status bar shows Pi's estimate (`Pi ~…/128k`), never "?", and the
// panel gains the compaction. Screenshots in the artifacts folder.
//
//   node test/vscode/context-panel.mjs --vsix editors/vscode/pi-lsp.vsix --tmp DIR [--artifacts DIR]
//
// Last line: "N passed, M failed".
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { cliOptions, clip, readEntries, sessionsDir, sleep, waitFor } from "../jsonrpc/harness.mjs";
import { REPO, runMain, tally } from "../lib/layer.mjs";
import { chromiumOf, freePort, freshArtifacts, installVsix, launchChromium, placeSession, QUIET_SETTINGS, readEvents, runPalette, screenshots, startCodeServer, visible, world } from "./workbench.mjs";

const opt = cliOptions(process.argv.slice(2));
const VSIX = path.resolve(opt("--vsix", path.join(REPO, "editors", "vscode", "pi-lsp.vsix")));
const T = path.resolve(opt("--tmp", fs.mkdtempSync("/tmp/pi-lsp-vscode-context-")));
const ART = path.resolve(opt("--artifacts", path.join(REPO, "test-artifacts", "vscode")), "context-panel");
const GENUINE = path.join(REPO, "testdata", "corpus", "genuine-1.6", "compact-twice.jsonl");
const BIN = path.join(REPO, "bin", "pi-lsp");
freshArtifacts(ART);

const tests = tally({ timed: true });
const { check, note } = tests;
const j = (v) => clip(v, 400);
const { agent: AGENT, ws: WS, userData: UD, extDir: EXTDIR, events: EVENTS } = world(T, "context-project");
const events = () => readEvents(EVENTS);
const eventsOf = (name) => events().filter((e) => e.event === name);

const shot = screenshots(ART, note);

/** The same binary's CLI answer for the file. */
function cli(session, ...args) {
  const o = spawnSync(BIN, ["context-size", session, ...args, "--json"], { encoding: "utf8", timeout: 60_000 });
  if (o.status !== 0) throw new Error(`pi-lsp context-size ${args.join(" ")}: exit ${o.status}: ${o.stderr}`);
  return JSON.parse(o.stdout);
}

/** The webview frame that holds the picture (code-server nests it in two iframes). */
async function pictureFrame(page, ms = 20_000) {
  return waitFor(async () => {
    for (const f of page.frames()) {
      if ((await f.locator("#kinds").count().catch(() => 0)) > 0) return f;
    }
    return undefined;
  }, ms, 250);
}

/** What the panel shows as text: the kinds table's rows and the total. */
async function shownFigures(frame) {
  return frame.evaluate(() => {
    const n = (s) => Number(String(s).replace(/[^0-9.-]/g, ""));
    const kinds = [...document.querySelectorAll("#kinds tbody tr")].map((tr) => ({
      kind: tr.getAttribute("data-kind"),
      tokens: n(tr.querySelector(".tokens").textContent),
      entries: n(tr.querySelector(".entries").textContent),
    }));
    return {
      total: n(document.querySelector("#kinds-total").textContent),
      kinds,
      segments: document.querySelectorAll("#now-bar rect.seg").length,
      compactions: document.querySelectorAll("#over-time circle.ev.compaction").length,
      points: document.querySelectorAll("#over-time circle").length,
      threshold: document.querySelector("#now-bar line.threshold") !== null,
    };
  });
}

async function statusText(page) {
  const item = page.locator(".statusbar-item", { hasText: /Pi (~|\d|\?|compacting)/ }).first();
  return (await item.count()) ? ((await item.textContent()) || "").trim() : "";
}

async function main() {
  if (!check("the .vsix and the built binary exist", fs.existsSync(VSIX) && fs.existsSync(BIN), `${VSIX} ${BIN}`)) return;
  const SESSION = path.join(sessionsDir(AGENT, WS), `2026-12-01T09-52-21-000Z_${readEntries(GENUINE)[0].id}.jsonl`);
  fs.mkdirSync(path.dirname(SESSION), { recursive: true });
  placeSession(GENUINE, SESSION, WS);
  const settings = { ...QUIET_SETTINGS, "workbench.colorTheme": "Default Dark Modern", "piLsp.summarizer.kind": "extractive", "piLsp.compaction.keepRecentTokens": 100 };
  fs.writeFileSync(path.join(UD, "User", "settings.json"), JSON.stringify(settings, null, 2));
  const env = { ...process.env, PI_LSP_VSCODE_TEST_LOG: EVENTS };
  delete env.VSCODE_IPC_HOOK_CLI;
  const inst = installVsix({ vsix: VSIX, userData: UD, extDir: EXTDIR, env });
  if (!check("code-server --install-extension pi-lsp.vsix", inst.ok, inst.detail)) return;
  const port = await freePort();
  const { cs, healthy } = startCodeServer({ port, userData: UD, extDir: EXTDIR, ws: WS, env, log: path.join(ART, "code-server.log") });
  try {
    if (!check("code-server answers /healthz", await healthy, `port ${port}`)) return;
    const browser = await launchChromium(chromiumOf());
    try {
      const page = await (await browser.newContext({ viewport: { width: 1440, height: 1000 } })).newPage();
      await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(WS)}`, { waitUntil: "domcontentloaded", timeout: 60_000 });
      if (!check("the workbench loads", await visible(page.locator(".monaco-workbench"), 60_000))) return;
      await runPalette(page, "Pi: Show Session Tree");
      const started = await waitFor(() => eventsOf("started").pop() || eventsOf("startFailed").pop(), 60_000, 250);
      if (!check("the extension starts pi-lsp", started?.event === "started", j(started))) return;
      await waitFor(() => eventsOf("treeRefreshed").find((e) => e.session === SESSION), 20_000, 200);

      // ---- the panel renders, and its figures are the server's ----
      await runPalette(page, "Pi: Show Context Picture");
      const shown = await waitFor(() => eventsOf("contextPanel").find((e) => e.session === SESSION), 30_000, 200);
      if (!check("Pi: Show Context Picture opens the panel (pi/contextBreakdown)", shown, j(eventsOf("contextPanelFailed")))) return;
      const byKind = cli(SESSION, "--by", "kind");
      const history = cli(SESSION, "--history");
      check("the panel's answer is the CLI's for the file (kinds, total, points, events)",
        j(shown.kinds) === j(byKind.kinds) && shown.total === byKind.total && shown.points === history.length && shown.events === history.filter((p) => p.event).length,
        `${j(shown)} vs ${j(byKind)}`);
      const frame = await pictureFrame(page);
      if (!check("the picture renders in the webview", frame)) return;
      await sleep(500);
      await shot(page, "context-panel");
      const f1 = await shownFigures(frame);
      check("its text figures equal the server's answer (kinds table and total)", j(f1.kinds) === j(byKind.kinds) && f1.total === byKind.total, `${j(f1)} vs ${j(byKind)}`);
      check("the now bar has one segment per kind and the threshold", f1.segments === byKind.kinds.length && f1.threshold, j(f1));
      check("the over-time chart has one point per reply and event, both compactions marked",
        f1.points === history.length && f1.compactions === history.filter((p) => p.event === "compaction").length && f1.compactions === 2, j(f1));

      // ---- a click reveals the entry in the tree ----
      const link = frame.locator("#largest a[data-entry]").first();
      const entryId = await link.getAttribute("data-entry");
      await link.click();
      const revealed = await waitFor(() => eventsOf("contextPanelReveal").find((e) => e.entryId === entryId), 15_000, 200);
      const selected = await visible(page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Pi Session" }) }).locator(".monaco-list-row.selected").first(), 10_000);
      await shot(page, "revealed-in-tree");
      check("a click on the largest entry reveals and selects it in the Pi Session tree", revealed?.revealed === true && selected, j(revealed));

      // ---- it follows the file ----
      const entries = readEntries(SESSION);
      const leaf = entries[entries.length - 1];
      const now = Date.now();
      const ts = new Date(now).toISOString();
      const reply = {
        role: "assistant", content: [{ type: "text", text: "Another answer, appended by another writer. ".repeat(20) }], api: "openai-completions", provider: "fake", model: "fake-model",
        usage: { input: 2400, output: 60, cacheRead: 0, cacheWrite: 0, totalTokens: 2460, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: now + 1,
      };
      fs.appendFileSync(SESSION,
        JSON.stringify({ type: "message", id: "c0ffee01", parentId: leaf.id, timestamp: ts, message: { role: "user", content: [{ type: "text", text: "one more question" }], timestamp: now } }) + "\n" +
        JSON.stringify({ type: "message", id: "c0ffee02", parentId: "c0ffee01", timestamp: ts, message: reply }) + "\n");
      const grown = await waitFor(() => eventsOf("contextPanel").find((e) => e.leafId === "c0ffee02"), 20_000, 200);
      const f2 = grown && (await waitFor(async () => {
        const f = await pictureFrame(page, 5000);
        const s = f && (await shownFigures(f));
        return s && s.points === history.length + 1 && s;
      }, 10_000, 250));
      await shot(page, "grown");
      check("the panel updates when the session grows (a new point, the new total)", grown && f2 && f2.total === cli(SESSION, "--by", "kind").total, `${j(grown)} ${j(f2)}`);

      // ---- its Compact button runs Pi: Compact Session; then the status bar shows Pi's estimate ----
      const frame3 = await pictureFrame(page);
      await frame3.locator('button[data-command="pi.compact"]').click();
      const box = await visible(page.locator(".quick-input-widget .quick-input-title", { hasText: "Compact Session" }), 10_000);
      check("Compact… asks for instructions, as Pi: Compact Session does", box);
      await page.keyboard.press("Enter");
      const compacted = await waitFor(() => readEntries(SESSION).slice(-1)[0]?.type === "compaction", 60_000, 250);
      check("the compaction is written", compacted);
      const status = await waitFor(async () => {
        const s = await statusText(page);
        return /Pi ~[\d.]+k?\/128k/.test(s) && s;
      }, 20_000, 250);
      await shot(page, "status-estimate");
      check("after the compaction the status bar shows Pi's estimate (Pi ~…/128k), not ?", status, await statusText(page));
      const tooltip = status && (await page.locator(".statusbar-item", { hasText: /Pi ~/ }).first().getAttribute("aria-label"));
      note(`status: ${status} (${tooltip})`);
      const after = await waitFor(() => eventsOf("contextPanel").find((e) => e.events === shown.events + 1), 20_000, 200);
      check("the panel gains the compaction", after, j(eventsOf("contextPanel").slice(-1)));
      await shot(page, "after-compaction");
    } finally {
      await browser.close().catch(() => {});
    }
  } finally {
    cs.kill("SIGTERM");
  }
}

runMain(tests, main, { ms: 400_000, what: "context-panel.mjs" });
