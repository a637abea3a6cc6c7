// The state every command shares (vscode-go's GoExtensionContext, rust-analyzer's Ctx): the
// language client, the output channel, the views, the status bar, job progress, the
// pi-summary: previews and the draft tracker. Commands take it as their first argument
// instead of reaching into one big class. The parts themselves never take it: each is given
// only what it uses (ClientDeps, StatusBarDeps, ViewsDeps, PreviewDeps).
//
// An interface, and nothing else: it imports only the types of the parts, so no part that
// takes a PiContext imports back a module that builds it. extension.ts builds the parts, in
// dependency order, makes the context of them once all are built, and is the one place that
// knows how they are wired.

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
  /** Disposed with the extension (the parts, providers, listeners, extension-side commands). */
  readonly disposables: vscode.Disposable[];
}
