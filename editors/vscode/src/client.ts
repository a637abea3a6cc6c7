// The language client: finding the server binary, starting and restarting it (with a restart
// budget), settings → initializationOptions and didChangeConfiguration, the server's
// notifications as events (onNotification), and the two request forms every command uses.
// It is given (ClientDeps) only what it uses of the other parts; who follows its
// notifications is decided in extension.ts.
//
// vscode-languageclient registers the server's commands (pi.compact, pi.navigate, ...) itself from
// initialize's executeCommandProvider.commands; this extension never registers those ids again.
// Their interactive side is middleware.executeCommand (commands/index.ts).

import * as os from "node:os";
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";
import { EXTENSION_COMMANDS as C } from "./models/commands";
import { describeSource, findServer, versionMismatch } from "./models/server";
import { didChangeConfigurationParams, toInitializationOptions } from "./models/settings";
import { CLIENT_ID, CLIENT_NAME, settingsNow } from "./identity";
import { nestTree } from "./models/tree";
import { MessageTarget, showMessage } from "./notifications";
import type { Jobs } from "./progress";
import {
  CompactionEnd,
  CompactionStart,
  ContextUsage,
  DraftReady,
  FileOps,
  FlatTreeResult,
  Methods,
  Notifications,
  SessionChanged,
  ToolOutputCleared,
  TreeResult,
} from "./protocol";
import type { StatusBar } from "./status";
import { testLog } from "./testLog";

/** What the client is given: the only things of the other parts it uses. */
export interface ClientDeps {
  /** The extension's folder (its bin/ holds the bundled server) and version (checked against the server's). */
  readonly extensionPath: string;
  readonly extensionVersion: string;
  readonly output: vscode.OutputChannel;
  /** middleware.executeCommand: the interactive side of the server's commands (commands/index.ts). */
  readonly executeCommand: (command: string, args: unknown[], next: (command: string, args: unknown[]) => unknown) => unknown;
  /** middleware.handleWorkDoneProgress: the job tracker's routing of $/progress (progress.ts). */
  readonly handleWorkDoneProgress: Jobs["handleWorkDoneProgress"];
  /** Shows the client's own state (server missing, stopped, failed) in the status bar; with no argument, the usage view again. */
  readonly showState: StatusBar["render"];
  /** Reads the session into the views: once the server runs, and for a message's Refresh button. */
  readonly refreshViews: () => Promise<void>;
}

/** The server's notifications the extension follows, by name (Notifications), with their params. */
export interface ServerNotifications {
  sessionChanged: SessionChanged;
  draftReady: DraftReady;
  contextUsage: ContextUsage;
  fileOps: FileOps;
  toolOutputCleared: ToolOutputCleared;
  compactionStart: CompactionStart;
  compactionEnd: CompactionEnd;
}

const FOLLOWED: readonly (keyof ServerNotifications)[] = [
  "sessionChanged",
  "draftReady",
  "contextUsage",
  "fileOps",
  "toolOutputCleared",
  "compactionStart",
  "compactionEnd",
];


export class PiClient implements vscode.Disposable {
  client: LanguageClient | undefined;
  private readonly clientDisposables: vscode.Disposable[] = [];
  private crashes: number[] = [];
  private running = false;
  /** piLsp.server.path (user level) the running server was started with. */
  private serverPath: string | undefined;
  /** Version mismatches already shown ("server/extension"), so each is said once. */
  private readonly toldMismatch = new Set<string>();

  /** One event per followed notification: it outlives each LanguageClient a (re)start makes. */
  private readonly notified = new Map<keyof ServerNotifications, vscode.EventEmitter<unknown>>(FOLLOWED.map((n) => [n, new vscode.EventEmitter<unknown>()]));
  /** Where the client's own messages send their buttons (Show Output, Refresh). */
  private readonly messages: MessageTarget;

  constructor(private readonly deps: ClientDeps) {
    this.messages = { output: deps.output, views: { refresh: deps.refreshViews } };
  }

  dispose(): void {
    for (const e of this.notified.values()) e.dispose();
  }

  /**
   * Follows one of the server's notifications, across restarts. The client itself reacts to
   * none: extension.ts subscribes the status bar, the views and the draft tracker.
   */
  onNotification<K extends keyof ServerNotifications>(name: K, listener: (params: ServerNotifications[K]) => void): vscode.Disposable {
    return this.notified.get(name)!.event((p) => listener(p as ServerNotifications[K]));
  }

  async start(): Promise<void> {
    const deps = this.deps;
    const settings = settingsNow();
    this.serverPath = settings.serverPath;
    const found = findServer(deps.extensionPath, settings.serverPath, process.env.PATH ?? "", os.homedir());
    if (!found.ok) {
      deps.output.appendLine(`[pi-lsp] ${found.message.text}`);
      deps.showState("$(error) Pi: pi-lsp not found", found.message.text, "error");
      testLog("serverMissing", { message: found.message.text });
      void showMessage(this.messages, found.message);
      return;
    }
    deps.output.appendLine(`[pi-lsp] starting ${found.command} serve --stdio (${found.source}: ${describeSource(found.source)})`);
    const serverOptions: ServerOptions = {
      command: found.command,
      args: ["serve"], // TransportKind.stdio appends --stdio
      transport: TransportKind.stdio,
      options: { env: { ...process.env } },
    };
    const clientOptions: LanguageClientOptions = {
      outputChannel: deps.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => toInitializationOptions(settingsNow()),
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.onServerClosed(),
      },
      initializationFailedHandler: (error) => {
        const msg = error instanceof Error ? error.message : String(error);
        void showMessage(this.messages, {
          severity: "error",
          text: `pi-lsp failed to initialize: ${msg}. Check "Pi: Show Server Output"; if the binary is old or not pi-lsp, fix piLsp.server.path.`,
          actions: ["showOutput", "openSettings"],
        });
        return false;
      },
      middleware: {
        executeCommand: (command, args, next) => deps.executeCommand(command, args, next),
        handleWorkDoneProgress: (token, params, next) => deps.handleWorkDoneProgress(token, params, next),
      },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    this.client = client;
    this.clientDisposables.push(
      ...FOLLOWED.map((name) => {
        const event = this.notified.get(name)!;
        return client.onNotification(Notifications[name], (p: unknown) => event.fire(p));
      }),
      client.onDidChangeState((e) => {
        this.running = e.newState === State.Running;
        void vscode.commands.executeCommand("setContext", "piLsp.running", this.running);
        if (e.newState === State.Stopped) deps.showState("$(debug-disconnect) Pi: stopped", "pi-lsp is not running. Click to restart.", "warning", C.restartServer);
      }),
    );
    try {
      await client.start();
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      deps.output.appendLine(`[pi-lsp] start failed: ${msg}`);
      testLog("startFailed", { message: msg });
      deps.showState("$(error) Pi: pi-lsp failed", msg, "error", C.showOutput);
      return;
    }
    const info = client.initializeResult?.serverInfo;
    deps.output.appendLine(`[pi-lsp] running ${info?.name ?? "?"} ${info?.version ?? ""} (${found.command}, ${describeSource(found.source)})`);
    const extensionVersion = deps.extensionVersion;
    const mismatch = versionMismatch(info?.version, extensionVersion);
    testLog("started", {
      serverInfo: info,
      commands: client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [],
      command: found.command,
      source: found.source,
      extensionVersion,
      mismatch,
    });
    if (mismatch && !this.toldMismatch.has(`${info?.version}/${extensionVersion}`)) {
      this.toldMismatch.add(`${info?.version}/${extensionVersion}`);
      deps.output.appendLine(`[pi-lsp] ${mismatch}`);
      void showMessage(this.messages, { severity: "warning", text: mismatch, actions: ["openSettings", "showOutput"] });
    }
    deps.showState();
    await deps.refreshViews();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    for (const d of this.clientDisposables.splice(0)) d.dispose();
    if (client) {
      try {
        await client.stop(2000);
      } catch {
        // already stopped
      }
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    this.crashes = [];
    await this.start();
  }

  /** At most 3 automatic restarts in 3 minutes, so a binary that always crashes is not restarted forever. */
  private async onServerClosed(): Promise<{ action: CloseAction; handled: boolean }> {
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < 3 * 60_000);
    this.crashes.push(now);
    testLog("serverClosed", { crashes: this.crashes.length });
    if (this.crashes.length <= 3) {
      this.deps.output.appendLine(`[pi-lsp] the server exited unexpectedly; restarting (${this.crashes.length}/3)`);
      return { action: CloseAction.Restart, handled: true };
    }
    void showMessage(this.messages, {
      severity: "error",
      text: `pi-lsp crashed ${this.crashes.length} times in 3 minutes and was not restarted. "Pi: Show Server Output" has its log; fix piLsp.server.path if it points at the wrong binary, then run "Pi: Restart Server".`,
      actions: ["showOutput", "openSettings"],
    });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  async onConfigurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration(CLIENT_ID)) return;
    this.deps.showState();
    const settings = settingsNow();
    const client = this.client;
    if (client && client.isRunning()) {
      await client.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(settings));
    }
    // Only the user's own value counts: a workspace's piLsp.server.path changes nothing.
    if (e.affectsConfiguration(`${CLIENT_ID}.server.path`) && settings.serverPath !== this.serverPath) {
      const pick = await vscode.window.showInformationMessage(
        "piLsp.server.path changed. Restart pi-lsp to use it?",
        "Restart",
      );
      if (pick === "Restart") await this.restart();
    }
  }

  isRunning(): boolean {
    return !!this.client && this.client.isRunning();
  }

  /** The running client, or undefined after telling the user how to get it back. */
  requireClient(): LanguageClient | undefined {
    if (this.client && this.client.isRunning()) return this.client;
    void showMessage(this.messages, {
      severity: "error",
      text: 'pi-lsp is not running. Run "Pi: Restart Server"; "Pi: Show Server Output" says why it stopped.',
      actions: ["showOutput"],
    });
    return undefined;
  }

  /** workspace/executeCommand without languageclient's own error handling, so errors reach describeError. */
  async execute<T>(command: string, params: object, token?: vscode.CancellationToken): Promise<T> {
    const client = this.client;
    if (!client) throw Object.assign(new Error("pi-lsp is not running"), { code: -32097 });
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [params] }, token)) as T;
  }

  async custom<T>(method: string, params: object, token?: vscode.CancellationToken): Promise<T> {
    const client = this.client;
    if (!client) throw Object.assign(new Error("pi-lsp is not running"), { code: -32097 });
    // Never pass an undefined token: vscode-jsonrpc would send it as a second positional param.
    return (await (token ? client.sendRequest(method, params, token) : client.sendRequest(method, params))) as T;
  }

  /** The session tree, asked for in its flat form (no depth) and nested here. */
  async fetchTree(): Promise<TreeResult> {
    return nestTree(await this.custom<FlatTreeResult>(Methods.tree, { flat: true }));
  }
}
