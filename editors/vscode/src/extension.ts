// VS Code extension for pi-lsp: a thin client on vscode-languageclient.
//
// vscode-languageclient registers the server's commands (pi.compact, pi.navigate, ...) itself from
// initialize's executeCommandProvider.commands; this extension never registers those ids again.
// It gives them palette titles (package.json) and adds the interactive part through
// middleware.executeCommand: an InputBox for compaction instructions, QuickPicks for sessions and
// entries, a progress notification with a Cancel button for long jobs, and messages that say what
// to do when something fails. Everything the views show comes from the pure models in ./models.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ProgressToken,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
  WorkDoneProgressBegin,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from "vscode-languageclient/node";
import { EXTENSION_COMMANDS as C } from "./models/commands";
import { Action, describeError, errorKind, UserMessage } from "./models/errors";
import { findServer } from "./models/server";
import { buildFilesModel, FileGroup, FileItem, FilesModel } from "./models/files";
import { didChangeConfigurationParams, readSettings, PiLspSettings, toInitializationOptions } from "./models/settings";
import { DEFAULT_RESERVE_TOKENS, formatTokens, statusView } from "./models/status";
import { buildTreeModel, flattenEntries, kindName, oneLine, parentMap, TreeModel, ViewNode } from "./models/tree";
import {
  CompactResult,
  ContextResult,
  ContextUsage,
  CompactionEnd,
  CompactionStart,
  FileOps,
  FilesResult,
  LabelResult,
  Methods,
  PinResult,
  NavigateParams,
  NavigateResult,
  Notifications,
  SessionChanged,
  SessionsResult,
  TreeResult,
  UndoCompactionResult,
} from "./protocol";

const CLIENT_ID = "piLsp"; // also the settings section: vscode-languageclient reads piLsp.trace.server
const CLIENT_NAME = "Pi (pi-lsp)";

let extension: PiExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new PiExtension(context);
  context.subscriptions.push(extension);
  await extension.start();
}

export async function deactivate(): Promise<void> {
  await extension?.stopClient();
  extension = undefined;
}

// ---------------------------------------------------------------------------------------------
// Test log: when PI_LSP_VSCODE_TEST_LOG names a file, the extension appends one JSON line per
// notable event (client started, views refreshed, progress, command results). The end-to-end
// test reads it next to what it sees on screen. Off (no file) in normal use.

function testLog(event: string, data: Record<string, unknown> = {}): void {
  const file = process.env.PI_LSP_VSCODE_TEST_LOG;
  if (!file) return;
  try {
    fs.appendFileSync(file, JSON.stringify({ t: Date.now(), event, ...data }) + "\n");
  } catch {
    // a test aid only
  }
}

// ---------------------------------------------------------------------------------------------

function settingsNow(): PiLspSettings {
  const cfg = vscode.workspace.getConfiguration(CLIENT_ID);
  return readSettings((key) => {
    const i = cfg.inspect(key);
    return i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
  });
}

// ---------------------------------------------------------------------------------------------
// Progress notifications with a Cancel button.

interface JobSink {
  progress: vscode.Progress<{ message?: string; increment?: number }>;
  token?: ProgressToken;
  reported: number;
}

type WorkDoneParams = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

// ---------------------------------------------------------------------------------------------

class PiExtension implements vscode.Disposable {
  private readonly output: vscode.OutputChannel;
  private client: LanguageClient | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly clientDisposables: vscode.Disposable[] = [];
  private readonly tree = new SessionTreeProvider();
  private readonly files = new FilesProvider();
  private readonly decorations = new ModifiedFilesDecorations();
  private readonly status: vscode.StatusBarItem;
  private readonly treeView: vscode.TreeView<ViewNode>;
  private readonly sinks: JobSink[] = [];
  private readonly sinkByToken = new Map<ProgressToken, JobSink>();
  private refreshTimer: NodeJS.Timeout | undefined;
  private usage: ContextUsage | undefined;
  private compacting: string | undefined;
  private lastContext: ContextResult | undefined;
  private crashes: number[] = [];
  private running = false;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel(CLIENT_NAME);
    this.status = vscode.window.createStatusBarItem("piLsp.context", vscode.StatusBarAlignment.Right, 100);
    this.status.name = "Pi Context Usage";
    this.status.command = C.treeCompact;
    this.renderStatus();
    this.treeView = vscode.window.createTreeView("piLsp.sessionTree", {
      treeDataProvider: this.tree,
      showCollapseAll: true,
    });
    const filesView = vscode.window.createTreeView("piLsp.files", { treeDataProvider: this.files });
    this.disposables.push(
      this.output,
      this.status,
      this.treeView,
      filesView,
      this.treeView.onDidChangeVisibility((e) => {
        if (e.visible) void this.revealLeaf();
      }),
      vscode.window.registerFileDecorationProvider(this.decorations),
      vscode.workspace.onDidChangeConfiguration((e) => void this.onConfigurationChanged(e)),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.scheduleRefresh()),
    );
    this.registerCommands();
    void vscode.commands.executeCommand("setContext", "piLsp.hasSession", false);
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  // ----- lifecycle ---------------------------------------------------------------------------

  async start(): Promise<void> {
    const settings = settingsNow();
    const found = findServer(this.context.extensionPath, settings.serverPath, process.env.PATH ?? "", os.homedir());
    if (!found.ok) {
      this.output.appendLine(`[pi-lsp] ${found.message.text}`);
      this.renderStatus("$(error) Pi: pi-lsp not found", found.message.text, "error");
      testLog("serverMissing", { message: found.message.text });
      void this.showMessage(found.message);
      return;
    }
    this.output.appendLine(`[pi-lsp] starting ${found.command} serve --stdio (${found.source})`);
    const serverOptions: ServerOptions = {
      command: found.command,
      args: ["serve"], // TransportKind.stdio appends --stdio
      transport: TransportKind.stdio,
      options: { env: { ...process.env } },
    };
    const clientOptions: LanguageClientOptions = {
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => toInitializationOptions(settingsNow()),
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.onServerClosed(),
      },
      initializationFailedHandler: (error) => {
        const msg = error instanceof Error ? error.message : String(error);
        void this.showMessage({
          severity: "error",
          text: `pi-lsp failed to initialize: ${msg}. Check "Pi: Show Server Output"; if the binary is old or not pi-lsp, fix piLsp.server.path.`,
          actions: ["showOutput", "openSettings"],
        });
        return false;
      },
      middleware: {
        executeCommand: (command, args, next) => this.executeCommand(command, args, next),
        handleWorkDoneProgress: (token, params, next) => this.handleWorkDoneProgress(token, params, next),
      },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    this.client = client;
    this.clientDisposables.push(
      client.onNotification(Notifications.sessionChanged, (p: SessionChanged) => {
        testLog("sessionChanged", { ...p });
        this.scheduleRefresh();
      }),
      client.onNotification(Notifications.contextUsage, (p: ContextUsage) => {
        this.usage = p;
        this.renderStatus();
      }),
      client.onNotification(Notifications.fileOps, (p: FileOps) => this.updateFiles(p)),
      client.onNotification(Notifications.compactionStart, (p: CompactionStart) => {
        this.compacting = p.reason;
        this.renderStatus();
      }),
      client.onNotification(Notifications.compactionEnd, (p: CompactionEnd) => {
        this.compacting = undefined;
        this.renderStatus();
        testLog("compactionEnd", { ...p, result: undefined });
        if (p.reason !== "manual" && p.errorMessage && !p.aborted) {
          void this.showMessage({
            severity: "warning",
            text: `Pi's ${p.reason} compaction failed: ${p.errorMessage}`,
            actions: ["showOutput"],
          });
        }
      }),
      client.onDidChangeState((e) => {
        this.running = e.newState === State.Running;
        void vscode.commands.executeCommand("setContext", "piLsp.running", this.running);
        if (e.newState === State.Stopped) this.renderStatus("$(debug-disconnect) Pi: stopped", "pi-lsp is not running. Click to restart.", "warning", C.restartServer);
      }),
    );
    try {
      await client.start();
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      this.output.appendLine(`[pi-lsp] start failed: ${msg}`);
      testLog("startFailed", { message: msg });
      this.renderStatus("$(error) Pi: pi-lsp failed", msg, "error", C.showOutput);
      return;
    }
    const info = client.initializeResult?.serverInfo;
    this.output.appendLine(`[pi-lsp] running ${info?.name ?? "?"} ${info?.version ?? ""}`);
    testLog("started", {
      serverInfo: info,
      commands: client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [],
      command: found.command,
    });
    this.renderStatus();
    await this.refresh();
  }

  async stopClient(): Promise<void> {
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

  private async restart(): Promise<void> {
    await this.stopClient();
    this.crashes = [];
    await this.start();
  }

  private async onServerClosed(): Promise<{ action: CloseAction; handled: boolean }> {
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < 3 * 60_000);
    this.crashes.push(now);
    testLog("serverClosed", { crashes: this.crashes.length });
    if (this.crashes.length <= 3) {
      this.output.appendLine(`[pi-lsp] the server exited unexpectedly; restarting (${this.crashes.length}/3)`);
      return { action: CloseAction.Restart, handled: true };
    }
    void this.showMessage({
      severity: "error",
      text: `pi-lsp crashed ${this.crashes.length} times in 3 minutes and was not restarted. "Pi: Show Server Output" has its log; fix piLsp.server.path if it points at the wrong binary, then run "Pi: Restart Server".`,
      actions: ["showOutput", "openSettings"],
    });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private async onConfigurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration(CLIENT_ID)) return;
    if (e.affectsConfiguration(`${CLIENT_ID}.server.path`)) {
      const pick = await vscode.window.showInformationMessage(
        "piLsp.server.path changed. Restart pi-lsp to use it?",
        "Restart",
      );
      if (pick === "Restart") await this.restart();
      return;
    }
    this.renderStatus();
    const client = this.client;
    if (client && client.isRunning()) {
      await client.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(settingsNow()));
    }
  }

  // ----- messages ----------------------------------------------------------------------------

  private async showMessage(m: UserMessage): Promise<void> {
    const labels: Record<Action, string> = {
      openSettings: "Open Settings",
      selectSession: "Select Session",
      showOutput: "Show Output",
      useExtractive: "Use Extractive Summarizer",
      refresh: "Refresh",
    };
    const buttons = m.actions.map((a) => labels[a]);
    testLog("message", { severity: m.severity, text: m.text });
    const show =
      m.severity === "error"
        ? vscode.window.showErrorMessage
        : m.severity === "warning"
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    const pick = await show(m.text, ...buttons);
    const action = m.actions.find((a) => labels[a] === pick);
    switch (action) {
      case "openSettings":
        await vscode.commands.executeCommand("workbench.action.openSettings", "piLsp");
        break;
      case "selectSession":
        await vscode.commands.executeCommand("pi.selectSession");
        break;
      case "showOutput":
        this.output.show(true);
        break;
      case "refresh":
        await this.refresh();
        break;
      case "useExtractive":
        await vscode.workspace
          .getConfiguration(CLIENT_ID)
          .update("summarizer.kind", "extractive", vscode.ConfigurationTarget.Global);
        break;
    }
  }

  // ----- requests ----------------------------------------------------------------------------

  private requireClient(): LanguageClient | undefined {
    if (this.client && this.client.isRunning()) return this.client;
    void this.showMessage({
      severity: "error",
      text: 'pi-lsp is not running. Run "Pi: Restart Server"; "Pi: Show Server Output" says why it stopped.',
      actions: ["showOutput"],
    });
    return undefined;
  }

  /** workspace/executeCommand without languageclient's own error handling, so errors reach describeError. */
  private async execute<T>(command: string, params: object, token?: vscode.CancellationToken): Promise<T> {
    const client = this.client;
    if (!client) throw Object.assign(new Error("pi-lsp is not running"), { code: -32097 });
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [params] }, token)) as T;
  }

  private async custom<T>(method: string, params: object): Promise<T> {
    const client = this.client;
    if (!client) throw Object.assign(new Error("pi-lsp is not running"), { code: -32097 });
    return (await client.sendRequest(method, params)) as T;
  }

  /**
   * When Pi itself is writing the session the server refuses to write (data.kind ownedByPi);
   * the user may write anyway (force: true).
   */
  private async forceAfterOwnedByPi(what: string, err: unknown, params: object): Promise<boolean> {
    if (errorKind(err) !== "ownedByPi" || (params as { force?: boolean }).force) return false;
    const text = `${what}: a running pi process is writing this session (${String((err as Error).message ?? err)}). Writing at the same time can interleave with Pi's own entries.`;
    testLog("message", { severity: "warning", text });
    const pick = await vscode.window.showWarningMessage(text, { modal: true }, "Write Anyway");
    return pick === "Write Anyway";
  }

  /** Run a long command in a progress notification with a Cancel button. */
  private async runJob<T>(title: string, what: string, command: string, params: object): Promise<T | undefined> {
    const r = await this.runJobOnce<T>(title, command, params);
    if (r.ok) return r.value;
    if (await this.forceAfterOwnedByPi(what, r.error, params)) return this.runJob<T>(title, what, command, { ...params, force: true });
    void this.showMessage(describeError(what, r.error));
    return undefined;
  }

  private runJobOnce<T>(title: string, command: string, params: object): Thenable<{ ok: true; value: T } | { ok: false; error: unknown }> {
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Pi: ${title}`, cancellable: true },
      async (progress, token) => {
        const sink: JobSink = { progress, reported: 0 };
        this.sinks.push(sink);
        testLog("jobStart", { command, title });
        const sub = token.onCancellationRequested(() => {
          testLog("jobCancel", { command });
          // The request is cancelled by sendRequest ($/cancelRequest); the progress token too.
          if (sink.token !== undefined && this.client) {
            void this.client.sendNotification(WorkDoneProgressCancelNotification.type, { token: sink.token });
          }
        });
        try {
          const result = await this.execute<T>(command, params, token);
          testLog("jobDone", { command, result: result as unknown });
          return { ok: true as const, value: result };
        } catch (err) {
          testLog("jobError", { command, error: { code: (err as { code?: unknown }).code, message: String((err as Error).message ?? err), data: (err as { data?: unknown }).data } });
          return { ok: false as const, error: err };
        } finally {
          sub.dispose();
          const i = this.sinks.indexOf(sink);
          if (i >= 0) this.sinks.splice(i, 1);
          if (sink.token !== undefined) this.sinkByToken.delete(sink.token);
        }
      },
    );
  }

  private handleWorkDoneProgress(token: ProgressToken, params: WorkDoneParams, next: (token: ProgressToken, params: WorkDoneParams) => void): void {
    let sink = this.sinkByToken.get(token);
    if (!sink && params.kind === "begin") {
      sink = this.sinks.find((s) => s.token === undefined);
      if (sink) {
        sink.token = token;
        this.sinkByToken.set(token, sink);
      }
    }
    testLog("progress", {
      token,
      kind: params.kind,
      title: params.kind === "begin" ? params.title : undefined,
      message: params.message,
      percentage: params.kind !== "end" ? params.percentage : undefined,
      notification: sink !== undefined,
    });
    if (!sink) {
      next(token, params); // not ours: languageclient shows it in the status bar
      return;
    }
    if (params.kind === "end") {
      this.sinkByToken.delete(token);
      next(token, params); // lets languageclient dispose its (never shown) progress part
      return;
    }
    const pct = params.percentage;
    let increment: number | undefined;
    if (typeof pct === "number") {
      const clamped = Math.max(0, Math.min(100, pct));
      increment = Math.max(0, clamped - sink.reported);
      sink.reported += increment;
    }
    const message = params.message ?? (params.kind === "begin" ? params.title : undefined);
    sink.progress.report({ message, increment });
  }

  // ----- command middleware: the interactive side of the server's commands -----------------

  private async executeCommand(command: string, args: unknown[], next: (command: string, args: unknown[]) => unknown): Promise<unknown> {
    const first = args[0];
    const arg = first !== null && typeof first === "object" ? (first as Record<string, unknown>) : undefined;
    const interactive = arg === undefined; // palette, keybinding, status bar: no arguments
    testLog("command", { command, interactive });
    switch (command) {
      case "pi.compact":
        return this.compact(interactive ? undefined : arg);
      case "pi.navigate":
        return this.navigate(interactive ? undefined : (arg as unknown as NavigateParams));
      case "pi.undoCompaction":
        return this.undoCompaction(arg ?? {});
      case "pi.pin":
        if (interactive) return this.pinInteractive();
        return this.plain<PinResult>("Pinning", command, arg).then(async (r) => {
          await this.refresh();
          return r;
        });
      case "pi.label":
        if (interactive) return this.labelInteractive();
        return this.plain<LabelResult>("Labelling", command, arg).then((r) => {
          this.scheduleRefresh();
          return r;
        });
      case "pi.selectSession":
      case "pi.sessions":
        if (interactive) return this.selectSessionInteractive();
        if (command === "pi.selectSession") {
          const r = await this.plain<{ session: string }>("Selecting the session", command, arg);
          await this.refresh();
          return r;
        }
        return next(command, args);
      case "pi.tree":
        if (interactive) {
          await vscode.commands.executeCommand("piLsp.sessionTree.focus");
          await this.refresh();
          await this.revealLeaf();
          return this.tree.model ? { session: this.tree.model.session, leafId: this.tree.model.leafId } : undefined;
        }
        return next(command, args);
      case "pi.files":
        if (interactive) {
          await vscode.commands.executeCommand("piLsp.files.focus");
          await this.refresh();
          return undefined;
        }
        return next(command, args);
      case "pi.context":
        if (interactive) return this.showContext();
        return next(command, args);
      default:
        return next(command, args);
    }
  }

  /** A short command: errors become messages, the result (or undefined) is returned. */
  private async plain<T>(what: string, command: string, params: object): Promise<T | undefined> {
    try {
      const r = await this.execute<T>(command, params);
      testLog("commandResult", { command, result: r as unknown });
      return r;
    } catch (err) {
      testLog("commandError", { command, message: String((err as Error).message ?? err), data: (err as { data?: unknown }).data });
      if (await this.forceAfterOwnedByPi(what, err, params)) return this.plain<T>(what, command, { ...params, force: true });
      void this.showMessage(describeError(what, err));
      return undefined;
    }
  }

  private async compact(params: Record<string, unknown> | undefined): Promise<CompactResult | undefined> {
    if (!this.requireClient()) return undefined;
    if (params === undefined) {
      const instructions = await vscode.window.showInputBox({
        title: "Pi: Compact Session",
        prompt: "Optional instructions for the summary (press Enter for none, Escape to cancel)",
        placeHolder: "e.g. Keep the decisions about the parser; drop the test output",
        ignoreFocusOut: true,
      });
      if (instructions === undefined) return undefined;
      params = instructions.trim() ? { instructions: instructions.trim() } : {};
    }
    const result = await this.runJob<CompactResult>("Compacting session", "Compaction", "pi.compact", params);
    if (!result) return undefined;
    if ("nothingToCompact" in result && result.nothingToCompact) {
      void this.showMessage({ severity: "info", text: `Nothing to compact: ${result.reason}`, actions: [] });
    } else if ("entry" in result) {
      const text = `Compacted the session: ${formatTokens(result.tokensBefore)} → ${formatTokens(result.tokensAfter)} tokens.`;
      testLog("message", { severity: "info", text });
      void vscode.window.showInformationMessage(text, "Show Summary").then((pick) => {
        if (pick === "Show Summary") void this.openSummary(result.entry.summary, result.entry.id, result.tokensBefore);
      });
    }
    await this.refresh();
    return result;
  }

  private async pickEntry(title: string): Promise<{ id: string; label: string } | undefined> {
    let tree: TreeResult;
    try {
      tree = await this.custom<TreeResult>(Methods.tree, {});
    } catch (err) {
      void this.showMessage(describeError("Reading the session tree", err));
      return undefined;
    }
    const entries = flattenEntries(tree).filter((n) => n.type !== "label");
    type Item = vscode.QuickPickItem & { id: string };
    const items: Item[] = entries.reverse().map((n) => ({
      id: n.id,
      label: `${n.isLeaf ? "$(circle-filled) " : n.onPath ? "" : "$(git-branch) "}${oneLine(n.preview, 90) || kindName(n.type, n.role)}`,
      description: `${kindName(n.type, n.role)}${n.label ? ` · [${n.label}]` : ""}${n.isLeaf ? " · current" : ""}`,
      detail: n.id,
    }));
    const pick = await vscode.window.showQuickPick(items, { title, placeHolder: "Entry (newest first)", matchOnDescription: true, matchOnDetail: true });
    return pick ? { id: pick.id, label: pick.label } : undefined;
  }

  private async askSummary(): Promise<{ summarize: boolean; instructions?: string } | undefined> {
    type Item = vscode.QuickPickItem & { mode: "none" | "summarize" | "instructions" };
    const items: Item[] = [
      { mode: "none", label: "No summary", description: "Just move the leaf; the branch you leave stays in the file" },
      { mode: "summarize", label: "Summarize", description: "Add a summary of the branch you leave" },
      { mode: "instructions", label: "Summarize with instructions…", description: "Tell the summarizer what to focus on" },
    ];
    const pick = await vscode.window.showQuickPick(items, { title: "Pi: Navigate — summary of the branch you leave" });
    if (!pick) return undefined;
    if (pick.mode === "none") return { summarize: false };
    if (pick.mode === "summarize") return { summarize: true };
    const instructions = await vscode.window.showInputBox({
      title: "Pi: Summarize the branch you leave",
      prompt: "Instructions for the branch summary",
      ignoreFocusOut: true,
    });
    if (instructions === undefined) return undefined;
    return { summarize: true, instructions: instructions.trim() || undefined };
  }

  private async navigate(params: NavigateParams | undefined, askForSummary = false): Promise<NavigateResult | undefined> {
    if (!this.requireClient()) return undefined;
    if (!params || !params.targetId) {
      const entry = await this.pickEntry("Pi: Navigate Session Tree");
      if (!entry) return undefined;
      params = { ...(params ?? {}), targetId: entry.id };
      askForSummary = true;
    }
    if (askForSummary) {
      const s = await this.askSummary();
      if (!s) return undefined;
      params = { ...params, summarize: s.summarize, ...(s.instructions ? { instructions: s.instructions } : {}) };
    }
    const result = params.summarize
      ? await this.runJob<NavigateResult>("Summarizing branch", "Navigation", "pi.navigate", params)
      : await this.plain<NavigateResult>("Navigation", "pi.navigate", params);
    if (!result) return undefined;
    const parts = [`Moved the session to ${params.targetId}.`];
    if (result.summaryEntry) parts.push("A summary of the branch you left was added.");
    const buttons: string[] = [];
    if (result.editorText) {
      parts.push("That entry was a user message: its text is ready to send again.");
      buttons.push("Copy Message");
    }
    const text = parts.join(" ");
    testLog("message", { severity: "info", text });
    void vscode.window.showInformationMessage(text, ...buttons).then((pick) => {
      if (pick === "Copy Message" && result.editorText) void vscode.env.clipboard.writeText(result.editorText);
    });
    await this.refresh();
    return result;
  }

  private async undoCompaction(params: Record<string, unknown>): Promise<UndoCompactionResult | undefined> {
    if (!this.requireClient()) return undefined;
    const result = await this.plain<UndoCompactionResult>("Undoing the compaction", "pi.undoCompaction", params);
    if (result) {
      const text = `Undid compaction ${result.compactionId}: the session continues from the entries before it.`;
      testLog("message", { severity: "info", text });
      void vscode.window.showInformationMessage(text);
      await this.refresh();
    }
    return result;
  }

  private async labelInteractive(entryId?: string, current?: string): Promise<LabelResult | undefined> {
    if (!this.requireClient()) return undefined;
    if (!entryId) {
      const entry = await this.pickEntry("Pi: Label Entry");
      if (!entry) return undefined;
      entryId = entry.id;
    }
    const label = await vscode.window.showInputBox({
      title: `Pi: Label ${entryId}`,
      prompt: "Label for this entry (empty clears it)",
      value: current ?? "",
      ignoreFocusOut: true,
    });
    if (label === undefined) return undefined;
    const params = label.trim() ? { entryId, label: label.trim() } : { entryId };
    const r = await this.plain<LabelResult>("Labelling", "pi.label", params);
    await this.refresh();
    return r;
  }

  private async pinInteractive(): Promise<PinResult | undefined> {
    if (!this.requireClient()) return undefined;
    const entry = await this.pickEntry("Pi: Pin Entry (pinned entries are quoted verbatim in every later summary)");
    if (!entry) return undefined;
    let pinned = false;
    try {
      pinned = flattenEntries(await this.custom<TreeResult>(Methods.tree, {})).some((n) => n.id === entry.id && n.pinned === true);
    } catch {
      // treat as not pinned
    }
    return this.setPinned(entry.id, !pinned);
  }

  private async setPinned(entryId: string, pinned: boolean): Promise<PinResult | undefined> {
    const r = await this.plain<PinResult>(pinned ? "Pinning" : "Unpinning", "pi.pin", { entryId, pinned });
    if (r) {
      const text = r.pinned ? `Pinned ${r.entryId}: later summaries quote it verbatim.` : `Unpinned ${r.entryId}.`;
      testLog("message", { severity: "info", text });
      void vscode.window.showInformationMessage(text);
    }
    await this.refresh();
    return r;
  }

  private async selectSessionInteractive(): Promise<{ session: string } | undefined> {
    if (!this.requireClient()) return undefined;
    let list: SessionsResult;
    try {
      list = await this.custom<SessionsResult>(Methods.sessions, {});
    } catch (err) {
      void this.showMessage(describeError("Listing the sessions", err));
      return undefined;
    }
    if (list.sessions.length === 0) {
      void this.showMessage({
        severity: "info",
        text: "Pi has no session for this workspace yet: start Pi in this folder, then run this again.",
        actions: [],
      });
      return undefined;
    }
    type Item = vscode.QuickPickItem & { path: string };
    const items: Item[] = list.sessions.map((s) => ({
      path: s.path,
      label: `${s.path === list.current ? "$(check) " : ""}${s.name || oneLine(s.firstMessage, 80) || path.basename(s.path)}`,
      description: `${new Date(s.modified).toLocaleString()} · ${s.messageCount} messages`,
      detail: s.name ? `${oneLine(s.firstMessage, 100)} — ${s.path}` : s.path,
    }));
    const pick = await vscode.window.showQuickPick(items, {
      title: "Pi: Select Session",
      placeHolder: "Sessions of this workspace, newest first",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!pick) return undefined;
    const r = await this.plain<{ session: string }>("Selecting the session", "pi.selectSession", { path: pick.path });
    await this.refresh();
    return r;
  }

  private async showContext(): Promise<ContextResult | undefined> {
    if (!this.requireClient()) return undefined;
    let c: ContextResult;
    try {
      c = await this.custom<ContextResult>(Methods.context, {});
    } catch (err) {
      void this.showMessage(describeError("Reading the context", err));
      return undefined;
    }
    const size =
      typeof c.tokens === "number"
        ? `${c.tokens.toLocaleString("en-US")} of ${c.contextWindow.toLocaleString("en-US")} tokens (${Math.round(c.percent ?? (c.tokens / c.contextWindow) * 100)}%)`
        : `size unknown until the next reply, window ${c.contextWindow.toLocaleString("en-US")} tokens`;
    const text = `Pi context: ${c.messageCount} messages, ${size} — ${path.basename(c.session)}`;
    const buttons = c.lastCompaction ? ["Show Last Compaction Summary"] : [];
    void vscode.window.showInformationMessage(text, ...buttons).then((pick) => {
      if (pick && c.lastCompaction) void this.openSummary(c.lastCompaction.summary, c.lastCompaction.id, c.lastCompaction.tokensBefore);
    });
    return c;
  }

  private async showLastCompactionSummary(): Promise<void> {
    if (!this.requireClient()) return;
    let c: ContextResult;
    try {
      c = await this.custom<ContextResult>(Methods.context, {});
    } catch (err) {
      void this.showMessage(describeError("Reading the context", err));
      return;
    }
    if (!c.lastCompaction) {
      void this.showMessage({
        severity: "info",
        text: 'The current path of this session has no compaction yet. "Pi: Compact Session" makes one.',
        actions: [],
      });
      return;
    }
    await this.openSummary(c.lastCompaction.summary, c.lastCompaction.id, c.lastCompaction.tokensBefore);
  }

  private async openSummary(summary: string, id: string, tokensBefore: number): Promise<void> {
    const content = `<!-- Pi compaction ${id}: ${tokensBefore} tokens before -->\n\n${summary}\n`;
    const doc = await vscode.workspace.openTextDocument({ language: "markdown", content });
    await vscode.window.showTextDocument(doc, { preview: true });
    testLog("summaryOpened", { id });
  }

  // ----- extension-side commands (piLsp.*; never the server's pi.* ids) --------------------

  private registerCommands(): void {
    const reg = (id: string, fn: (...args: any[]) => unknown) => this.disposables.push(vscode.commands.registerCommand(id, fn));
    reg(C.treeRefresh, () => this.refresh());
    reg(C.treeCompact, () => (this.requireClient() ? vscode.commands.executeCommand("pi.compact") : undefined));
    reg(C.treeSelectSession, () => (this.requireClient() ? vscode.commands.executeCommand("pi.selectSession") : undefined));
    reg(C.treeNavigateHere, async (node?: ViewNode) => {
      const target = node ?? this.treeView.selection[0];
      if (!target || !this.requireClient()) return;
      const s = await this.askSummary();
      if (!s) return;
      const params: NavigateParams = { targetId: target.entryId, summarize: s.summarize };
      if (s.instructions) params.instructions = s.instructions;
      await vscode.commands.executeCommand("pi.navigate", params);
    });
    reg(C.treeLabel, async (node?: ViewNode) => {
      const target = node ?? this.treeView.selection[0];
      if (!target) return;
      const current = /\[([^\]]*)\]/.exec(target.description)?.[1]?.trim();
      await this.labelInteractive(target.entryId, current);
    });
    reg(C.treePin, async (node?: ViewNode) => {
      const target = node ?? this.treeView.selection[0];
      if (target && this.requireClient()) await vscode.commands.executeCommand("pi.pin", { entryId: target.entryId, pinned: true });
    });
    reg(C.treeUnpin, async (node?: ViewNode) => {
      const target = node ?? this.treeView.selection[0];
      if (target && this.requireClient()) await vscode.commands.executeCommand("pi.pin", { entryId: target.entryId, pinned: false });
    });
    reg(C.treeUndoCompaction, async () => {
      if (!this.requireClient()) return;
      await vscode.commands.executeCommand("pi.undoCompaction", {});
    });
    reg(C.filesOpen, async (item?: FileItem) => {
      if (!item) return;
      try {
        await vscode.window.showTextDocument(vscode.Uri.file(item.absPath), { preview: true });
      } catch (err) {
        void this.showMessage({
          severity: "warning",
          text: `Cannot open ${item.absPath}: ${err instanceof Error ? err.message : String(err)} (the agent may have deleted or moved it).`,
          actions: [],
        });
      }
    });
    reg(C.showLastCompactionSummary, () => this.showLastCompactionSummary());
    reg(C.restartServer, () => this.restart());
    reg(C.showOutput, () => this.output.show(true));
  }

  // ----- views -------------------------------------------------------------------------------

  private scheduleRefresh(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.refresh();
    }, 150);
  }

  private workspaceCwd(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  }

  async refresh(): Promise<void> {
    const client = this.client;
    if (!client || !client.isRunning()) return;
    const [tree, files, ctx] = await Promise.allSettled([
      this.custom<TreeResult>(Methods.tree, {}),
      this.custom<FilesResult>(Methods.files, {}),
      this.custom<ContextResult>(Methods.context, {}),
    ]);
    if (tree.status === "fulfilled" && tree.value) {
      const changed = this.tree.set(buildTreeModel(tree.value));
      const model = this.tree.model!;
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
    if (ctx.status === "fulfilled" && ctx.value) {
      this.lastContext = ctx.value;
      this.usage = { session: ctx.value.session, tokens: ctx.value.tokens, contextWindow: ctx.value.contextWindow, percent: ctx.value.percent };
    } else {
      this.lastContext = undefined;
      this.usage = undefined;
    }
    this.renderStatus();
    if (files.status === "fulfilled" && files.value) {
      this.updateFiles({ session: this.tree.model?.session ?? "", ...files.value });
    } else {
      this.updateFiles(undefined);
    }
  }

  /** Scroll the Pi Session view to the current leaf (when the view is visible). */
  private async revealLeaf(): Promise<void> {
    const leaf = this.tree.model?.leaf;
    if (!leaf || !this.treeView.visible) return;
    try {
      await this.treeView.reveal(leaf, { select: false, focus: false, expand: false });
    } catch {
      // the view may be collapsed or hidden
    }
  }

  private updateFiles(ops: FileOps | undefined): void {
    const cwd = this.workspaceCwd() ?? (ops?.session ? path.dirname(ops.session) : process.cwd());
    const model = buildFilesModel(ops ?? { readFiles: [], modifiedFiles: [] }, cwd, os.homedir());
    this.files.set(model);
    this.decorations.set(model.modified);
    testLog("filesRefreshed", { total: model.total, modified: [...model.modified] });
  }

  private renderStatus(text?: string, tooltip?: string, level?: "warning" | "error", command?: string): void {
    if (text) {
      this.status.text = text;
      this.status.tooltip = tooltip;
      this.status.command = command ?? C.treeCompact;
      this.status.backgroundColor = level ? new vscode.ThemeColor(`statusBarItem.${level}Background`) : undefined;
      this.status.show();
      return;
    }
    const reserve = settingsNow().reserveTokens ?? DEFAULT_RESERVE_TOKENS;
    const view = statusView(this.usage, reserve);
    this.status.text = this.compacting ? `$(sync~spin) Pi compacting (${this.compacting})…` : view.text;
    const md = new vscode.MarkdownString(view.tooltip.replace(/\n/g, "  \n"));
    if (this.lastContext?.lastCompaction) {
      md.appendMarkdown(`  \n[Show the last compaction summary](command:${C.showLastCompactionSummary})`);
      md.isTrusted = { enabledCommands: [C.showLastCompactionSummary] };
    }
    this.status.tooltip = md;
    this.status.command = { command: C.treeCompact, title: "Compact the Pi session" };
    this.status.backgroundColor =
      view.level === "normal" ? undefined : new vscode.ThemeColor(`statusBarItem.${view.level === "error" ? "error" : "warning"}Background`);
    this.status.show();
    testLog("status", { text: this.status.text, level: view.level });
  }
}

// ---------------------------------------------------------------------------------------------

class SessionTreeProvider implements vscode.TreeDataProvider<ViewNode> {
  private readonly changed = new vscode.EventEmitter<ViewNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  model: TreeModel | undefined;
  private parents = new Map<ViewNode, ViewNode | undefined>();
  private signature = "";

  set(model: TreeModel | undefined): boolean {
    // Session files are append-only: every change (labels and names too) adds an entry. Re-render
    // only on a real change, so a click on a row never races a needless refresh.
    const signature = model ? `${model.session}|${model.leafId}|${model.entryCount}` : "";
    if (signature === this.signature) return false;
    this.signature = signature;
    this.model = model;
    this.parents = model ? parentMap(model.items) : new Map();
    this.changed.fire(undefined);
    return true;
  }

  getChildren(element?: ViewNode): ViewNode[] {
    if (!element) return this.model?.items ?? [];
    return element.children;
  }

  getParent(element: ViewNode): ViewNode | undefined {
    return this.parents.get(element);
  }

  getTreeItem(n: ViewNode): vscode.TreeItem {
    const containsLeaf = n.kind === "branch" && n.description.includes("current");
    const state =
      n.children.length === 0
        ? vscode.TreeItemCollapsibleState.None
        : containsLeaf
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(
      n.isLeaf ? { label: n.label, highlights: [[0, Math.min(n.label.length, 200)]] } : n.label,
      state,
    );
    item.id = n.key;
    item.description = n.description;
    item.tooltip = n.tooltip;
    item.contextValue = n.contextValue;
    item.iconPath = new vscode.ThemeIcon(
      n.icon,
      n.isLeaf ? new vscode.ThemeColor("charts.green") : n.onPath ? undefined : new vscode.ThemeColor("disabledForeground"),
    );
    item.accessibilityInformation = { label: `${n.label}${n.isLeaf ? ", current leaf" : ""}` };
    return item;
  }
}

type FilesNode = FileGroup | FileItem;

class FilesProvider implements vscode.TreeDataProvider<FilesNode> {
  private readonly changed = new vscode.EventEmitter<FilesNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private model: FilesModel | undefined;
  private signature = "";

  set(model: FilesModel): void {
    const signature = JSON.stringify(model.groups.map((g) => [g.state, g.items.map((i) => i.absPath)]));
    if (signature === this.signature) return;
    this.signature = signature;
    this.model = model;
    this.changed.fire(undefined);
  }

  getChildren(element?: FilesNode): FilesNode[] {
    if (!element) return this.model?.groups ?? [];
    return "items" in element ? element.items : [];
  }

  getTreeItem(n: FilesNode): vscode.TreeItem {
    if ("items" in n) {
      const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${n.state}`;
      item.iconPath = new vscode.ThemeIcon(n.state === "modified" ? "edit" : "eye");
      item.contextValue = `piFilesGroup.${n.state}`;
      return item;
    }
    const uri = vscode.Uri.file(n.absPath);
    const item = new vscode.TreeItem(uri, vscode.TreeItemCollapsibleState.None);
    item.id = `${n.state}:${n.absPath}`;
    item.label = n.label;
    item.description = n.description;
    item.tooltip = n.tooltip;
    item.iconPath = vscode.ThemeIcon.File;
    item.contextValue = `piFile.${n.state}`;
    item.command = { command: C.filesOpen, title: "Open File", arguments: [n] };
    return item;
  }
}

class ModifiedFilesDecorations implements vscode.FileDecorationProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri[]>();
  readonly onDidChangeFileDecorations = this.changed.event;
  private modified = new Set<string>();

  set(next: Set<string>): void {
    if (next.size === this.modified.size && [...next].every((p) => this.modified.has(p))) return;
    const touched = new Set<string>([...this.modified, ...next]);
    this.modified = new Set(next);
    if (touched.size > 0) this.changed.fire([...touched].map((p) => vscode.Uri.file(p)));
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    if (uri.scheme !== "file" || !this.modified.has(uri.fsPath)) return undefined;
    return new vscode.FileDecoration("π", "Modified by the Pi agent on the current path of the session");
  }
}
