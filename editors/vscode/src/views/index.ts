// The two views of the Pi container and their one refresh: the tree, the files and the context
// figure are asked for together, so the views and the status bar always show the same session.

import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import type { PiClient } from "../client";
import { buildFilesModel } from "../models/files";
import type { DraftTracker } from "../models/status";
import { buildTreeModel, ViewNode } from "../models/tree";
import { ContextResult, FileOps, FilesResult, Methods } from "../protocol";
import type { StatusBar } from "../status";
import { testLog } from "../testLog";
import { FilesProvider, ModifiedFilesDecorations } from "./files";
import { SessionTreeProvider } from "./sessionTree";

/**
 * What the views are given: the server they read the session from, the draft tracker told
 * where the leaf is, and the status bar told what the refresh read.
 */
export interface ViewsDeps {
  readonly server: Pick<PiClient, "isRunning" | "fetchTree" | "custom">;
  readonly drafts: Pick<DraftTracker, "leafMoved">;
  readonly status: Pick<StatusBar, "refreshed">;
}

export class Views implements vscode.Disposable {
  readonly tree = new SessionTreeProvider();
  readonly files = new FilesProvider();
  readonly decorations = new ModifiedFilesDecorations();
  readonly treeView: vscode.TreeView<ViewNode>;
  private readonly disposables: vscode.Disposable[] = [];
  private refreshTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ViewsDeps) {
    this.treeView = vscode.window.createTreeView("piLsp.sessionTree", {
      treeDataProvider: this.tree,
      showCollapseAll: true,
    });
    const filesView = vscode.window.createTreeView("piLsp.files", { treeDataProvider: this.files });
    this.disposables.push(
      this.treeView,
      filesView,
      this.treeView.onDidChangeVisibility((e) => {
        if (e.visible) void this.revealLeaf();
      }),
      vscode.window.registerFileDecorationProvider(this.decorations),
    );
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  /** The tree row a tree command acts on: the one it was run on, else the selection. */
  target(node?: ViewNode): ViewNode | undefined {
    return node ?? this.treeView.selection[0];
  }

  /** Coalesces the bursts of notifications one write makes into one refresh. */
  scheduleRefresh(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.refresh();
    }, 150);
  }

  async refresh(): Promise<void> {
    const { server, drafts, status } = this.deps;
    if (!server.isRunning()) return;
    const [tree, files, ctx] = await Promise.allSettled([
      server.fetchTree(),
      server.custom<FilesResult>(Methods.files, {}),
      server.custom<ContextResult>(Methods.context, {}),
    ]);
    if (tree.status === "fulfilled" && tree.value) {
      const changed = this.tree.set(buildTreeModel(tree.value));
      const model = this.tree.model!;
      drafts.leafMoved(model.session, model.leafId);
      this.treeView.description = `${path.basename(model.session, ".jsonl").replace(/^.*_/, "").slice(0, 8)} · ${model.pathLength}/${model.entryCount} entries`;
      this.treeView.message = undefined;
      void vscode.commands.executeCommand("setContext", "piLsp.hasSession", true);
      testLog("treeRefreshed", { session: model.session, leafId: model.leafId, entries: model.entryCount, items: model.items.length });
      if (changed) await this.revealLeaf();
    } else {
      this.tree.set(undefined);
      this.treeView.description = undefined;
      void vscode.commands.executeCommand("setContext", "piLsp.hasSession", false);
      if (tree.status === "rejected") {
        const kind = (tree.reason as { data?: { kind?: string } })?.data?.kind;
        this.treeView.message = kind === "noSession" ? undefined : `Cannot read the session: ${String((tree.reason as Error)?.message ?? tree.reason)}`;
        testLog("treeRefreshFailed", { kind, message: String((tree.reason as Error)?.message ?? tree.reason) });
      }
    }
    status.refreshed(this.tree.model?.session, ctx.status === "fulfilled" && ctx.value ? ctx.value : undefined);
    if (files.status === "fulfilled" && files.value) {
      this.updateFiles({ ...files.value, current: true });
    } else {
      this.updateFiles(undefined);
    }
  }

  /** Scroll the Pi Session view to the current leaf (when the view is visible). */
  async revealLeaf(): Promise<void> {
    const leaf = this.tree.model?.leaf;
    if (!leaf || !this.treeView.visible) return;
    try {
      await this.treeView.reveal(leaf, { select: false, focus: false, expand: false });
    } catch {
      // the view may be collapsed or hidden
    }
  }

  updateFiles(ops: FileOps | undefined): void {
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? (ops?.session ? path.dirname(ops.session) : process.cwd());
    const model = buildFilesModel(ops ?? { readFiles: [], modifiedFiles: [] }, cwd, os.homedir());
    this.files.set(model);
    this.decorations.set(model.modified, model.stale);
    testLog("filesRefreshed", { total: model.total, modified: [...model.modified], stale: [...model.stale.keys()] });
  }
}
