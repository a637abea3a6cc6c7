// The language client: finding the server binary, starting and restarting it (with a restart
// budget), settings → initializationOptions and didChangeConfiguration, the server's
// notifications, and the two request forms every command uses.
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
import type { PiContext } from "./context";
import { EXTENSION_COMMANDS as C } from "./models/commands";
import { describeSource, findServer, versionMismatch } from "./models/server";
import { didChangeConfigurationParams, toInitializationOptions } from "./models/settings";
import { CLIENT_ID, CLIENT_NAME, settingsNow } from "./identity";
import { nestTree } from "./models/tree";
import { toolOutputClearedText } from "./models/clear";
import { info as showInfo, showMessage } from "./notifications";
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
import { testLog } from "./testLog";


export class PiClient {
  client: LanguageClient | undefined;
  private readonly clientDisposables: vscode.Disposable[] = [];
  private crashes: number[] = [];
  private running = false;
  /** piLsp.server.path (user level) the running server was started with. */
  private serverPath: string | undefined;
  /** Version mismatches already shown ("server/extension"), so each is said once. */
  private readonly toldMismatch = new Set<string>();

  constructor(private readonly pi: PiContext) {}

  async start(): Promise<void> {
    const pi = this.pi;
    const settings = settingsNow();
    this.serverPath = settings.serverPath;
    const found = findServer(pi.extension.extensionPath, settings.serverPath, process.env.PATH ?? "", os.homedir());
    if (!found.ok) {
      pi.output.appendLine(`[pi-lsp] ${found.message.text}`);
      pi.status.render("$(error) Pi: pi-lsp not found", found.message.text, "error");
      testLog("serverMissing", { message: found.message.text });
      void showMessage(pi, found.message);
      return;
    }
    pi.output.appendLine(`[pi-lsp] starting ${found.command} serve --stdio (${found.source}: ${describeSource(found.source)})`);
    const serverOptions: ServerOptions = {
      command: found.command,
      args: ["serve"], // TransportKind.stdio appends --stdio
      transport: TransportKind.stdio,
      options: { env: { ...process.env } },
    };
    const clientOptions: LanguageClientOptions = {
      outputChannel: pi.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => toInitializationOptions(settingsNow()),
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.onServerClosed(),
      },
      initializationFailedHandler: (error) => {
        const msg = error instanceof Error ? error.message : String(error);
        void showMessage(pi, {
          severity: "error",
          text: `pi-lsp failed to initialize: ${msg}. Check "Pi: Show Server Output"; if the binary is old or not pi-lsp, fix piLsp.server.path.`,
          actions: ["showOutput", "openSettings"],
        });
        return false;
      },
      middleware: {
        executeCommand: (command, args, next) => pi.executeCommand(command, args, next),
        handleWorkDoneProgress: (token, params, next) => pi.jobs.handleWorkDoneProgress(token, params, next),
      },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    this.client = client;
    this.clientDisposables.push(
      client.onNotification(Notifications.sessionChanged, (p: SessionChanged) => {
        testLog("sessionChanged", { ...p });
        pi.drafts.leafMoved(p.session, p.leafId);
        if (p.current !== false) {
          pi.status.ownerChanged(p);
          pi.status.summarizerChanged(p);
        }
        pi.status.render();
        if (p.current !== false) pi.views.scheduleRefresh();
      }),
      client.onNotification(Notifications.draftReady, (p: DraftReady) => {
        testLog("draftReady", { ...p });
        pi.drafts.draftReady(p);
        pi.status.render();
      }),
      client.onNotification(Notifications.contextUsage, (p: ContextUsage) => {
        if (p.current === false) return; // another session of the folder changed: the views show the current one
        pi.status.usage = p;
        pi.status.render();
      }),
      client.onNotification(Notifications.fileOps, (p: FileOps) => {
        if (p.current === false) return;
        pi.views.updateFiles(p);
      }),
      client.onNotification(Notifications.toolOutputCleared, (p: ToolOutputCleared) => {
        testLog("toolOutputCleared", { ...p, cleared: p.cleared.length });
        void showInfo(toolOutputClearedText(p));
        pi.views.scheduleRefresh();
      }),
      client.onNotification(Notifications.compactionStart, (p: CompactionStart) => {
        pi.status.compacting = p.reason;
        pi.status.render();
      }),
      client.onNotification(Notifications.compactionEnd, (p: CompactionEnd) => {
        pi.status.compacting = undefined;
        if (!p.aborted && !p.errorMessage) pi.drafts.compacted(p.session);
        pi.status.render();
        testLog("compactionEnd", { ...p, result: undefined });
        if (p.reason !== "manual" && p.errorMessage && !p.aborted) {
          void showMessage(pi, {
            severity: "warning",
            text: `Pi's ${p.reason} compaction failed: ${p.errorMessage}`,
            actions: ["showOutput"],
          });
        }
      }),
      client.onDidChangeState((e) => {
        this.running = e.newState === State.Running;
        void vscode.commands.executeCommand("setContext", "piLsp.running", this.running);
        if (e.newState === State.Stopped) pi.status.render("$(debug-disconnect) Pi: stopped", "pi-lsp is not running. Click to restart.", "warning", C.restartServer);
      }),
    );
    try {
      await client.start();
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      pi.output.appendLine(`[pi-lsp] start failed: ${msg}`);
      testLog("startFailed", { message: msg });
      pi.status.render("$(error) Pi: pi-lsp failed", msg, "error", C.showOutput);
      return;
    }
    const info = client.initializeResult?.serverInfo;
    pi.output.appendLine(`[pi-lsp] running ${info?.name ?? "?"} ${info?.version ?? ""} (${found.command}, ${describeSource(found.source)})`);
    const extensionVersion = String(pi.extension.extension.packageJSON.version ?? "");
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
      pi.output.appendLine(`[pi-lsp] ${mismatch}`);
      void showMessage(pi, { severity: "warning", text: mismatch, actions: ["openSettings", "showOutput"] });
    }
    pi.status.render();
    await pi.views.refresh();
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
      this.pi.output.appendLine(`[pi-lsp] the server exited unexpectedly; restarting (${this.crashes.length}/3)`);
      return { action: CloseAction.Restart, handled: true };
    }
    void showMessage(this.pi, {
      severity: "error",
      text: `pi-lsp crashed ${this.crashes.length} times in 3 minutes and was not restarted. "Pi: Show Server Output" has its log; fix piLsp.server.path if it points at the wrong binary, then run "Pi: Restart Server".`,
      actions: ["showOutput", "openSettings"],
    });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  async onConfigurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration(CLIENT_ID)) return;
    this.pi.status.render();
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
    void showMessage(this.pi, {
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
