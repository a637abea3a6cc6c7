// The state every part of the extension shares (vscode-go's GoExtensionContext,
// rust-analyzer's Ctx): the language client, the output channel, the views, the status bar,
// job progress, the pi-summary: previews and the draft tracker. Commands and views take it as
// their first argument instead of reaching into one big class.
//
// An interface, and nothing else: it imports only the types of the parts, so no part that
// takes a PiContext imports back a module that builds it. extension.ts builds the parts, in
// dependency order, and is the one place that knows how they are wired.

import type * as vscode from "vscode";
import type { PiClient } from "./client";
import type { PreviewState } from "./commands/preview";
import type { DraftTracker } from "./models/status";
import type { Jobs } from "./progress";
import type { StatusBar } from "./status";
import type { Views } from "./views";

export interface PiContext {
  readonly extension: vscode.ExtensionContext;
  readonly output: vscode.OutputChannel;
  readonly drafts: DraftTracker;
  readonly jobs: Jobs;
  readonly server: PiClient;
  readonly status: StatusBar;
  readonly views: Views;
  readonly previews: PreviewState;
  /** Disposed with the extension (views, providers, listeners, extension-side commands). */
  readonly disposables: vscode.Disposable[];
  /**
   * The language client's executeCommand middleware (the commands' handlers): a part of
   * the context, so that client.ts imports no command module.
   */
  readonly executeCommand: (command: string, args: unknown[], next: (command: string, args: unknown[]) => unknown) => unknown;
}
