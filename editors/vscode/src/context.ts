// The state every part of the extension shares, in one place (vscode-go's GoExtensionContext):
// the language client, the output channel, the views, the status bar, job progress, the
// pi-summary: previews and the draft tracker. Commands and views take it as their first argument
// instead of reaching into one big class.

import * as vscode from "vscode";
import { PiClient } from "./client";
import { CLIENT_NAME } from "./identity";
import { PreviewState } from "./commands/preview";
import { DraftTracker } from "./models/status";
import { Jobs } from "./progress";
import { StatusBar } from "./status";
import { Views } from "./views";

export class PiContext implements vscode.Disposable {
  readonly output: vscode.OutputChannel;
  readonly status: StatusBar;
  readonly views: Views;
  readonly drafts = new DraftTracker();
  readonly jobs = new Jobs();
  readonly server: PiClient;
  readonly previews: PreviewState;
  /** Disposed with the extension (views, providers, listeners, extension-side commands). */
  readonly disposables: vscode.Disposable[] = [];

  /**
   * executeCommand is the language client's executeCommand middleware (the commands'
   * handlers): injected, so that client.ts imports no command module.
   */
  constructor(
    readonly extension: vscode.ExtensionContext,
    readonly executeCommand: (command: string, args: unknown[], next: (command: string, args: unknown[]) => unknown) => unknown,
  ) {
    this.output = vscode.window.createOutputChannel(CLIENT_NAME);
    this.server = new PiClient(this);
    this.status = new StatusBar(this);
    this.views = new Views(this);
    this.previews = new PreviewState(this);
    this.disposables.push(this.output, this.status, this.views);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
