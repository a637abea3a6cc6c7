// VS Code extension for pi-lsp: a thin client on vscode-languageclient. This file builds the
// parts and wires them together, in dependency order; what each does is in its own module:
//   client.ts          the language client (server path, start/restart, settings, notifications)
//   commands/          the interactive side of the server's commands and the piLsp.* commands
//   views/             the Pi Session and Files views, the context-by-size pick, the preview FS
//   status.ts          the status bar (context usage, compacting, live pi)
//   progress.ts        long jobs in a progress notification with Cancel
//   notifications.ts   messages with actions
// context.ts is the interface the parts share; everything the views show comes from the pure
// models in ./models.

import * as vscode from "vscode";
import { PiClient } from "./client";
import { executeServerCommand, registerCommands } from "./commands";
import { PreviewState, registerPreviews } from "./commands/preview";
import type { PiContext } from "./context";
import { CLIENT_NAME } from "./identity";
import { DraftTracker } from "./models/status";
import { Jobs } from "./progress";
import { StatusBar } from "./status";
import { Views } from "./views";

let pi: PiContext | undefined;

/**
 * compose builds the parts in dependency order: first those that need nothing of the
 * others (the output channel, the draft tracker, the job progress), then the language
 * client, the status bar, the views and the previews, each handed the context it is part
 * of (a part reads the others only when an event or a command reaches it, once all are
 * built; none is started here).
 */
function compose(extension: vscode.ExtensionContext): PiContext {
  const parts: { -readonly [K in keyof PiContext]?: PiContext[K] } = {
    extension,
    output: vscode.window.createOutputChannel(CLIENT_NAME),
    drafts: new DraftTracker(),
    jobs: new Jobs(),
    disposables: [],
    executeCommand: (command, args, next) => executeServerCommand(ctx, command, args, next),
  };
  const ctx = parts as PiContext;
  parts.server = new PiClient(ctx);
  parts.status = new StatusBar(ctx);
  parts.views = new Views(ctx);
  parts.previews = new PreviewState(ctx);
  ctx.disposables.push(ctx.output, ctx.status, ctx.views);
  return ctx;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const p = compose(context);
  pi = p;
  context.subscriptions.push({ dispose: () => p.disposables.splice(0).forEach((d) => d.dispose()) });
  p.disposables.push(
    vscode.workspace.onDidChangeConfiguration((e) => void p.server.onConfigurationChanged(e)),
    vscode.workspace.onDidChangeWorkspaceFolders(() => p.views.scheduleRefresh()),
    ...registerPreviews(p),
    ...registerCommands(p),
  );
  void vscode.commands.executeCommand("setContext", "piLsp.hasSession", false);
  await p.server.start();
}

export async function deactivate(): Promise<void> {
  await pi?.server.stop();
  pi = undefined;
}
