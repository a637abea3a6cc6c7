// VS Code extension for pi-lsp: a thin client on vscode-languageclient. This file builds the
// parts and wires them together, in dependency order; what each does is in its own module:
//   client.ts          the language client (server path, start/restart, settings, notifications)
//   commands/          the interactive side of the server's commands and the piLsp.* commands
//   views/             the Pi Session and Files views, the context-by-size pick, the preview FS
//   status.ts          the status bar (context usage, compacting, live pi)
//   progress.ts        long jobs in a progress notification with Cancel
//   notifications.ts   messages with actions
// Each part is given only what it uses (its *Deps interface); none takes the whole context.
// context.ts is the interface the commands share, made here once every part is built;
// everything the views show comes from the pure models in ./models.

import * as vscode from "vscode";
import { PiClient } from "./client";
import { executeServerCommand, registerCommands } from "./commands";
import { previewCompaction } from "./commands/compaction";
import { previewBranchSummary } from "./commands/navigation";
import { PreviewState, registerPreviews } from "./commands/preview";
import type { PiContext } from "./context";
import { CLIENT_NAME } from "./identity";
import { toolOutputClearedText } from "./models/clear";
import { DraftTracker } from "./models/status";
import { info as showInfo, showMessage } from "./notifications";
import { Jobs } from "./progress";
import { StatusBar } from "./status";
import { testLog } from "./testLog";
import { Views } from "./views";

let pi: PiContext | undefined;

/**
 * compose builds the parts in dependency order, each given only what it uses: the output
 * channel, the draft tracker and the job tracker need nothing; the status bar the drafts and
 * the output; the client the output, the jobs' progress routing and the status bar; the views
 * the client, the drafts and the status bar; the previews the client, the drafts and the
 * views. Then the context the commands take, of the finished parts. Nothing is started here.
 *
 * Two dependencies point back, each broken by a callback given at construction that is only
 * called once the client runs, after compose: the client's executeCommand middleware is the
 * commands, which take the context holding the client; and the client refreshes the views
 * (after it starts, and for a message's Refresh button), which read the session through it.
 */
function compose(extension: vscode.ExtensionContext): PiContext {
  const output = vscode.window.createOutputChannel(CLIENT_NAME);
  const drafts = new DraftTracker();
  const jobs = new Jobs();
  const status = new StatusBar({ drafts, output });
  const server: PiClient = new PiClient({
    extensionPath: extension.extensionPath,
    extensionVersion: String(extension.extension.packageJSON.version ?? ""),
    output,
    executeCommand: (command, args, next) => executeServerCommand(ctx, command, args, next),
    handleWorkDoneProgress: (token, params, next) => jobs.handleWorkDoneProgress(token, params, next),
    showState: (...state) => status.render(...state),
    refreshViews: () => views.refresh(),
  });
  const views: Views = new Views({ server, drafts, status });
  const previews = new PreviewState({ server, drafts, views });
  const ctx: PiContext = {
    extension,
    output,
    drafts,
    jobs,
    server,
    status,
    views,
    previews,
    disposables: [output, status, views, previews, server],
  };
  return ctx;
}

/**
 * The events that cross parts, and who follows each: the server's notifications (the client
 * reacts to none itself), the settings and workspace folders, and a preview's "Preview Again"
 * (answered by the commands, which the previews do not import).
 */
function wire(p: PiContext): vscode.Disposable[] {
  const { server, status, views, drafts, previews } = p;
  return [
    server.onNotification("sessionChanged", (n) => {
      testLog("sessionChanged", { ...n });
      drafts.leafMoved(n.session, n.leafId);
      if (n.current !== false) {
        status.ownerChanged(n);
        status.summarizerChanged(n);
      }
      status.render();
      if (n.current !== false) views.scheduleRefresh();
    }),
    server.onNotification("draftReady", (n) => {
      testLog("draftReady", { ...n });
      drafts.draftReady(n);
      status.render();
    }),
    server.onNotification("contextUsage", (n) => {
      if (n.current === false) return; // another session of the folder changed: the views show the current one
      status.usage = n;
      status.render();
    }),
    server.onNotification("fileOps", (n) => {
      if (n.current === false) return;
      views.updateFiles(n);
    }),
    server.onNotification("toolOutputCleared", (n) => {
      testLog("toolOutputCleared", { ...n, cleared: n.cleared.length });
      void showInfo(toolOutputClearedText(n));
      views.scheduleRefresh();
    }),
    server.onNotification("compactionStart", (n) => {
      status.compacting = n.reason;
      status.render();
    }),
    server.onNotification("compactionEnd", (n) => {
      status.compacting = undefined;
      if (!n.aborted && !n.errorMessage) drafts.compacted(n.session);
      status.render();
      testLog("compactionEnd", { ...n, result: undefined });
      if (n.reason !== "manual" && n.errorMessage && !n.aborted) {
        void showMessage(p, {
          severity: "warning",
          text: `Pi's ${n.reason} compaction failed: ${n.errorMessage}`,
          actions: ["showOutput"],
        });
      }
    }),
    previews.onAskedAgain((draft) => {
      if (draft.kind === "compaction") void previewCompaction(p);
      else void previewBranchSummary(p, draft.preview.targetId, draft.instructions);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => void server.onConfigurationChanged(e)),
    vscode.workspace.onDidChangeWorkspaceFolders(() => views.scheduleRefresh()),
  ];
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const p = compose(context);
  pi = p;
  context.subscriptions.push({ dispose: () => p.disposables.splice(0).forEach((d) => d.dispose()) });
  p.disposables.push(...wire(p), ...registerPreviews(p.previews), ...registerCommands(p));
  void vscode.commands.executeCommand("setContext", "piLsp.hasSession", false);
  await p.server.start();
}

export async function deactivate(): Promise<void> {
  await pi?.server.stop();
  pi = undefined;
}
