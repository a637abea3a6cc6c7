// VS Code extension for pi-lsp: a thin client on vscode-languageclient. This file only wires the
// parts together; what each does is in its own module:
//   client.ts          the language client (server path, start/restart, settings, notifications)
//   commands/          the interactive side of the server's commands and the piLsp.* commands
//   views/             the Pi Session and Files views, the context-by-size pick, the preview FS
//   status.ts          the status bar (context usage, compacting, live pi)
//   progress.ts        long jobs in a progress notification with Cancel
//   notifications.ts   messages with actions
// Everything the views show comes from the pure models in ./models.

import * as vscode from "vscode";
import { executeServerCommand, registerCommands } from "./commands";
import { registerPreviews } from "./commands/preview";
import { PiContext } from "./context";

let pi: PiContext | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  pi = new PiContext(context, (command, args, next) => executeServerCommand(pi!, command, args, next));
  const p = pi;
  context.subscriptions.push(p);
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
