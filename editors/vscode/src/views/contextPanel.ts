// Pi: Show Context Picture — a webview panel of the selected session's context (pi/contextBreakdown):
// the "now" bar by kind with free space, reserve and threshold, the largest entries, the
// "over time" chart with its events; a click reveals an entry in the Pi Session tree, the
// buttons run the existing commands (with their usual previews). The page is built by
// models/contextPicture.ts; media/contextPanel.js only forwards clicks and swaps the body.
// The panel follows the session file as it grows (a watch on the file, coalesced).

import * as fs from "node:fs";
import * as vscode from "vscode";
import type { PiClient } from "../client";
import type { PiContext } from "../context";
import { pictureFigures, renderPicture, shortTokens } from "../models/contextPicture";
import { ViewNode } from "../models/tree";
import { ContextBreakdownResult, Methods } from "../protocol";
import { testLog } from "../testLog";
import type { Views } from "./index";

/** The commands the panel's buttons may run (the webview cannot name any other). */
const ACTIONS = new Set(["pi.clearToolOutput", "pi.contextBySize", "pi.previewCompaction", "pi.compact"]);

let current: ContextPanel | undefined;

/** What the panel uses: the extension's folder (its media/), the server it reads the picture from, the tree it reveals entries in. */
interface ContextPanelDeps {
  readonly extensionUri: vscode.Uri;
  readonly server: Pick<PiClient, "custom">;
  readonly views: RevealViews;
}

type RevealViews = Pick<Views, "tree" | "treeView" | "refresh">;

/** Opens the panel (or brings it forward and refreshes it). */
export async function showContextPanel(pi: PiContext): Promise<ContextBreakdownResult | undefined> {
  if (!pi.server.requireClient()) return undefined;
  if (!current) current = new ContextPanel({ extensionUri: pi.extension.extensionUri, server: pi.server, views: pi.views });
  else current.panel.reveal(undefined, true);
  return current.refresh();
}

function nonce(): string {
  let s = "";
  for (let i = 0; i < 32; i++) s += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(Math.random() * 62)];
  return s;
}

class ContextPanel {
  readonly panel: vscode.WebviewPanel;
  private session: string | undefined;
  private watcher: fs.FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private loaded = false;

  constructor(private readonly deps: ContextPanelDeps) {
    const media = vscode.Uri.joinPath(deps.extensionUri, "media");
    this.panel = vscode.window.createWebviewPanel("piLsp.contextPicture", "Pi Context", { viewColumn: vscode.ViewColumn.Active, preserveFocus: true }, {
      enableScripts: true,
      localResourceRoots: [media],
      retainContextWhenHidden: true,
    });
    const w = this.panel.webview;
    const n = nonce();
    w.html =
      `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${w.cspSource}; style-src ${w.cspSource} 'unsafe-inline'; script-src 'nonce-${n}';">` +
      `<meta name="viewport" content="width=device-width, initial-scale=1">` +
      `<link rel="stylesheet" href="${w.asWebviewUri(vscode.Uri.joinPath(media, "contextPanel.css"))}">` +
      `<title>Pi Context</title></head><body><main id="root" aria-live="polite"><p class="muted">Reading the context…</p></main>` +
      `<script nonce="${n}" src="${w.asWebviewUri(vscode.Uri.joinPath(media, "contextPanel.js"))}"></script></body></html>`;
    this.disposables.push(
      w.onDidReceiveMessage((m: { type?: string; entryId?: string; command?: string }) => void this.onMessage(m)),
      this.panel.onDidChangeViewState((e) => {
        if (e.webviewPanel.visible) this.schedule();
      }),
      this.panel.onDidDispose(() => this.dispose()),
    );
  }

  private dispose(): void {
    current = undefined;
    this.watcher?.close();
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  /** Re-reads the picture soon (a write comes as several changes). */
  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, 250);
  }

  /** Follows the session file: a change of it refreshes the panel. */
  private watch(session: string): void {
    if (session === this.session && this.watcher) return;
    this.watcher?.close();
    this.session = session;
    try {
      this.watcher = fs.watch(session, () => this.schedule());
    } catch {
      this.watcher = undefined; // the next refresh (visibility, a command) reads it again
    }
  }

  async refresh(): Promise<ContextBreakdownResult | undefined> {
    let r: ContextBreakdownResult;
    try {
      r = await this.deps.server.custom<ContextBreakdownResult>(Methods.contextBreakdown, { history: true });
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      void this.panel.webview.postMessage({ type: "render", html: `<p class="error">Cannot read the context: ${msg.replace(/</g, "&lt;")}</p>` });
      testLog("contextPanelFailed", { message: msg });
      return undefined;
    }
    this.watch(r.session);
    this.panel.title = `Pi Context ${shortTokens(r.total)}`;
    await this.panel.webview.postMessage({ type: "render", html: renderPicture(r) });
    this.loaded = true;
    testLog("contextPanel", { session: r.session, leafId: r.leafId, ...pictureFigures(r) });
    return r;
  }

  private async onMessage(m: { type?: string; entryId?: string; command?: string }): Promise<void> {
    if (m.type === "ready") {
      if (this.loaded) void this.refresh();
      return;
    }
    if (m.type === "reveal" && typeof m.entryId === "string" && m.entryId) {
      const ok = await revealEntry(this.deps.views, m.entryId);
      testLog("contextPanelReveal", { entryId: m.entryId, revealed: ok });
      return;
    }
    if (m.type === "command" && typeof m.command === "string" && ACTIONS.has(m.command)) {
      testLog("contextPanelAction", { command: m.command });
      await vscode.commands.executeCommand(m.command);
      this.schedule();
    }
  }
}

/** Reveals, selects and focuses the tree row of an entry (false when the tree does not show it). */
export async function revealEntry(views: RevealViews, entryId: string): Promise<boolean> {
  await vscode.commands.executeCommand("piLsp.sessionTree.focus");
  const find = (nodes: readonly ViewNode[]): ViewNode | undefined => {
    for (const n of nodes) {
      if (n.kind !== "branch" && n.entryId === entryId) return n;
      const c = find(n.children);
      if (c) return c;
    }
    return undefined;
  };
  let node = find(views.tree.model?.items ?? []);
  if (!node) {
    await views.refresh();
    node = find(views.tree.model?.items ?? []);
  }
  if (!node) return false;
  try {
    await views.treeView.reveal(node, { select: true, focus: true, expand: true });
    return true;
  } catch {
    return false;
  }
}
