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
import { buildFilesModel, FileGroup, FileItem, FilesModel, StaleInfo, staleText } from "./models/files";
import {
  BranchDraft,
  commitCompactionParams,
  commitProblem,
  committedMessage,
  CompactionDraft,
  missingPinned,
  navigateSummaryParams,
  parsePreviewPath,
  pinnedDroppedText,
  PREVIEW_SCHEME,
  previewOpenedMessage,
  previewPath,
  PreviewStore,
  AUTO_SAVE_TEXT,
  saveCommits,
  sessionChangedText,
  SummaryDraft,
} from "./models/preview";
import { didChangeConfigurationParams, readSettings, PiLspSettings, toInitializationOptions } from "./models/settings";
import { DEFAULT_RESERVE_TOKENS, DraftTracker, formatTokens, statusView } from "./models/status";
import { buildTreeModel, flattenEntries, kindName, nestTree, oneLine, parentMap, TreeModel, ViewNode } from "./models/tree";
import {
  BranchSummaryPreview,
  CommitCompactionResult,
  CompactionPreview,
  CompactResult,
  ContextBySizeResult,
  ContextResult,
  EditContextParams,
  EditContextResult,
  DraftReady,
  ContextUsage,
  CompactionEnd,
  CompactionStart,
  FileOps,
  FilesResult,
  LabelResult,
  Methods,
  PinResult,
  NavigateParams,
  PreviewCompactionResult,
  NavigateResult,
  Notifications,
  SessionChanged,
  SessionsResult,
  FlatTreeResult,
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
  private readonly previews = new PreviewStore();
  private readonly previewFs: PreviewFileSystem;
  private readonly drafts = new DraftTracker();
  /** pi-summary: documents committed by a save, closed once VS Code has marked them saved. */
  private readonly closeAfterSave = new Set<string>();
  /** Why each pi-summary: document is being saved (onWillSaveTextDocument comes before writeFile). */
  private readonly saveReasons = new Map<string, vscode.TextDocumentSaveReason>();
  private readonly autoSaveNoticeShown = new Set<string>();
  private readonly status: vscode.StatusBarItem;
  private readonly treeView: vscode.TreeView<ViewNode>;
  private readonly sinks: JobSink[] = [];
  private readonly sinkByToken = new Map<ProgressToken, JobSink>();
  private refreshTimer: NodeJS.Timeout | undefined;
  private usage: ContextUsage | undefined;
  private compacting: string | undefined;
  private lastContext: ContextResult | undefined;
  /** The live pi (with pi-lsp's bridge) of the current session, and the last owner line written. */
  private live: { pid: number; piVersion?: string } | undefined;
  private ownerLine = "";
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
    this.previewFs = new PreviewFileSystem(this.previews, (uri, text) => this.commitPreview(uri, text));
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(PREVIEW_SCHEME, this.previewFs, { isCaseSensitive: true }),
      vscode.workspace.onDidSaveTextDocument((doc) => void this.afterPreviewSaved(doc)),
      vscode.workspace.onWillSaveTextDocument((e) => {
        if (e.document.uri.scheme === PREVIEW_SCHEME) this.saveReasons.set(e.document.uri.toString(), e.reason);
      }),
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
        this.drafts.leafMoved(p.session, p.leafId);
        if (p.current !== false) this.ownerChanged(p);
        this.renderStatus();
        if (p.current !== false) this.scheduleRefresh();
      }),
      client.onNotification(Notifications.draftReady, (p: DraftReady) => {
        testLog("draftReady", { ...p });
        this.drafts.draftReady(p);
        this.renderStatus();
      }),
      client.onNotification(Notifications.contextUsage, (p: ContextUsage) => {
        if (p.current === false) return; // another session of the folder changed: the views show the current one
        this.usage = p;
        this.renderStatus();
      }),
      client.onNotification(Notifications.fileOps, (p: FileOps) => {
        if (p.current === false) return;
        this.updateFiles(p);
      }),
      client.onNotification(Notifications.compactionStart, (p: CompactionStart) => {
        this.compacting = p.reason;
        this.renderStatus();
      }),
      client.onNotification(Notifications.compactionEnd, (p: CompactionEnd) => {
        this.compacting = undefined;
        if (!p.aborted && !p.errorMessage) this.drafts.compacted(p.session);
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

  /** The session tree, asked for in its flat form (no depth) and nested here. */
  private async fetchTree(): Promise<TreeResult> {
    return nestTree(await this.custom<FlatTreeResult>(Methods.tree, { flat: true }));
  }

  private async custom<T>(method: string, params: object, token?: vscode.CancellationToken): Promise<T> {
    const client = this.client;
    if (!client) throw Object.assign(new Error("pi-lsp is not running"), { code: -32097 });
    // Never pass an undefined token: vscode-jsonrpc would send it as a second positional param.
    return (await (token ? client.sendRequest(method, params, token) : client.sendRequest(method, params))) as T;
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

  /**
   * Run a long command in a progress notification with a Cancel button. `command` is a server
   * command (workspace/executeCommand), or with `asRequest` the custom request of that name.
   */
  private async runJob<T>(title: string, what: string, command: string, params: object, asRequest = false): Promise<T | undefined> {
    const r = await this.runJobOnce<T>(title, command, params, asRequest);
    if (r.ok) return r.value;
    if (await this.forceAfterOwnedByPi(what, r.error, params)) return this.runJob<T>(title, what, command, { ...params, force: true }, asRequest);
    void this.showMessage(describeError(what, r.error));
    return undefined;
  }

  private runJobOnce<T>(title: string, command: string, params: object, asRequest = false): Thenable<{ ok: true; value: T } | { ok: false; error: unknown }> {
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
          const result = asRequest ? await this.custom<T>(command, params, token) : await this.execute<T>(command, params, token);
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
      case "pi.editContext":
        if (interactive) return this.editContextInteractive();
        return this.editContext(arg as unknown as EditContextParams);
      case "pi.contextBySize":
        if (interactive) return this.contextBySizeInteractive();
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
      const by = result.via === "pi" ? ` (by the live pi ${result.pid ?? ""})`.replace(" )", ")") : "";
      const text = `Compacted the session${by}: ${formatTokens(result.tokensBefore)} → ${formatTokens(result.tokensAfter ?? NaN)} tokens.`;
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
      tree = await this.fetchTree();
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

  private async askSummary(): Promise<{ summarize: boolean; instructions?: string; edit?: boolean } | undefined> {
    type Item = vscode.QuickPickItem & { mode: "none" | "summarize" | "instructions" | "edit" };
    const items: Item[] = [
      { mode: "none", label: "No summary", description: "Just move the leaf; the branch you leave stays in the file" },
      { mode: "summarize", label: "Summarize", description: "Add a summary of the branch you leave" },
      { mode: "instructions", label: "Summarize with instructions…", description: "Tell the summarizer what to focus on" },
      { mode: "edit", label: "Summarize and edit…", description: "Open the summary in an editor first; saving it moves the session" },
    ];
    const pick = await vscode.window.showQuickPick(items, { title: "Pi: Navigate — summary of the branch you leave" });
    if (!pick) return undefined;
    if (pick.mode === "none") return { summarize: false };
    if (pick.mode === "summarize") return { summarize: true };
    if (pick.mode === "edit") return { summarize: true, edit: true };
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
      if (s.edit) {
        await this.previewBranchSummary(params.targetId);
        return undefined;
      }
      params = { ...params, summarize: s.summarize, ...(s.instructions ? { instructions: s.instructions } : {}) };
    }
    const result = params.summarize
      ? await this.runJob<NavigateResult>("Summarizing branch", "Navigation", "pi.navigate", params)
      : await this.plain<NavigateResult>("Navigation", "pi.navigate", params);
    if (!result) return undefined;
    const parts = [`Moved the session to ${params.targetId}${(result as { via?: string }).via === "pi" ? " (by the live pi)" : ""}.`];
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
      pinned = flattenEntries(await this.fetchTree()).some((n) => n.id === entry.id && n.pinned === true);
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

  // ----- context edits: hide, replace or restore one message in the LLM context --------------

  /** pi.editContext with params: the edit, a message with the figure before and after, a refresh. */
  private async editContext(params: EditContextParams): Promise<EditContextResult | undefined> {
    if (!this.requireClient()) return undefined;
    const what = params.action === "omit" ? "Hiding from the context" : params.action === "replace" ? "Replacing in the context" : "Restoring to the context";
    const r = await this.plain<EditContextResult>(what, "pi.editContext", params);
    if (!r) return undefined;
    const verb = params.action === "omit" ? "Hidden from" : params.action === "replace" ? "Replaced in" : "Restored to";
    const text = `${verb} the context: ${params.entryId}. Context ${formatTokens(r.tokensBefore)} → ${formatTokens(r.tokensAfter)} tokens.`;
    testLog("message", { severity: "info", text });
    void vscode.window.showInformationMessage(text);
    await this.refresh();
    return r;
  }

  /** The replacement text, asked in an input box (Escape cancels). */
  private async askReplacement(entryId: string, current?: string): Promise<string | undefined> {
    return vscode.window.showInputBox({
      title: `Pi: Replace ${entryId} in Context`,
      prompt: "What the model sees instead of this message (the history keeps the original)",
      value: current ? oneLine(current, 200) : "",
      ignoreFocusOut: true,
    });
  }

  /** Palette: pick a message of the context (largest first), then what to do with it. */
  private async editContextInteractive(): Promise<EditContextResult | undefined> {
    const item = await this.pickContextItem("Pi: Edit Context");
    if (!item) return undefined;
    type ActionItem = vscode.QuickPickItem & { action: EditContextParams["action"] };
    const actions: ActionItem[] = [];
    if (item.contextEdit !== "omitted") actions.push({ action: "omit", label: "Hide from Context" });
    actions.push({ action: "replace", label: "Replace in Context…" });
    if (item.contextEdit) actions.push({ action: "restore", label: "Restore to Context" });
    const pick = await vscode.window.showQuickPick(actions, { title: `Pi: Edit Context · ${item.entryId}` });
    if (!pick) return undefined;
    if (pick.action === "replace") {
      const text = await this.askReplacement(item.entryId, item.preview);
      if (text === undefined) return undefined;
      return this.editContext({ entryId: item.entryId, action: "replace", text });
    }
    return this.editContext({ entryId: item.entryId, action: pick.action });
  }

  /** Palette "Pi: Context by Size": the largest messages first; picking one hides it (or restores a hidden one). */
  private async contextBySizeInteractive(): Promise<EditContextResult | undefined> {
    const item = await this.pickContextItem("Pi: Context by Size");
    if (!item) return undefined;
    if (item.contextEdit === "omitted") return this.editContext({ entryId: item.entryId, action: "restore" });
    return this.editContext({ entryId: item.entryId, action: "omit" });
  }

  private async pickContextItem(title: string): Promise<ContextBySizeResult["messages"][number] | undefined> {
    if (!this.requireClient()) return undefined;
    let r: ContextBySizeResult;
    try {
      r = await this.custom<ContextBySizeResult>(Methods.contextBySize, {});
    } catch (err) {
      void this.showMessage(describeError("Reading the context", err));
      return undefined;
    }
    type Item = vscode.QuickPickItem & { m: ContextBySizeResult["messages"][number] };
    const items: Item[] = r.messages
      .filter((m) => m.editable)
      .map((m) => ({
        m,
        label: `${m.contextEdit === "omitted" ? "$(eye-closed) " : m.contextEdit === "replaced" ? "$(replace) " : ""}${formatTokens(m.contextEdit === "omitted" ? (m.originalTokens ?? 0) : m.tokens)} tokens · ${m.role}${m.toolName ? ` ${m.toolName}` : ""}`,
        description: `${m.entryId}${m.contextEdit === "omitted" ? " · hidden (pick to restore)" : m.contextEdit === "replaced" ? " · replaced" : ""}`,
        detail: m.preview,
      }));
    testLog("contextBySize", { items: items.map((i) => ({ entryId: i.m.entryId, tokens: i.m.tokens, contextEdit: i.m.contextEdit ?? null })) });
    const total = typeof r.tokens === "number" ? r.tokens : r.projectedTokens;
    const pick = await vscode.window.showQuickPick(items, {
      title: `${title} · ${formatTokens(total)} tokens in context`,
      placeHolder: "Largest first. Pick a message to hide it from the model's context (history is kept).",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    return pick?.m;
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

  // ----- preview and edit: pi-summary: documents ----------------------------------------------

  /** "Pi: Preview Compaction": optional instructions, pi/previewCompaction, the summary in an editor. */
  private async previewCompaction(): Promise<CompactionPreview | undefined> {
    if (!this.requireClient()) return undefined;
    const input = await vscode.window.showInputBox({
      title: "Pi: Preview Compaction",
      prompt: "Optional instructions for the summary (press Enter for none, Escape to cancel). The summary opens in an editor; saving it compacts.",
      placeHolder: "e.g. Keep the decisions about the parser; drop the test output",
      ignoreFocusOut: true,
    });
    if (input === undefined) return undefined;
    const instructions = input.trim() || undefined;
    const params = instructions ? { instructions } : {};
    const result = await this.runJob<PreviewCompactionResult>("Previewing compaction", "Compaction preview", Methods.previewCompaction, params, true);
    if (!result) return undefined;
    if ("nothingToCompact" in result) {
      void this.showMessage({ severity: "info", text: `Nothing to compact: ${result.reason}`, actions: [] });
      return undefined;
    }
    const draft: CompactionDraft = { kind: "compaction", preview: result };
    if (instructions) draft.instructions = instructions;
    await this.openPreview(draft);
    return result;
  }

  /** "Summarize and edit…": pi/previewBranchSummary, the summary in an editor; saving navigates. */
  private async previewBranchSummary(targetId: string, instructions?: string): Promise<BranchSummaryPreview | undefined> {
    if (!this.requireClient()) return undefined;
    let leafId: string | null = null;
    try {
      leafId = (await this.fetchTree()).leafId;
    } catch (err) {
      void this.showMessage(describeError("Reading the session tree", err));
      return undefined;
    }
    const params = instructions ? { targetId, instructions } : { targetId };
    const result = await this.runJob<BranchSummaryPreview>("Summarizing branch", "Branch summary preview", Methods.previewBranchSummary, params, true);
    if (!result) return undefined;
    const draft: BranchDraft = { kind: "branch", preview: result, leafId: result.leafId !== undefined ? result.leafId : leafId };
    if (instructions) draft.instructions = instructions;
    await this.openPreview(draft);
    return result;
  }

  private async openPreview(draft: SummaryDraft): Promise<void> {
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: previewPath(draft) });
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    let revert = false;
    const existing = this.previews.get(uri.path);
    // Edits kept by auto-save leave the document clean but differ from the previewed text.
    const edited = !!existing && !existing.committed && existing.content !== existing.draft.preview.summary;
    if (existing && open && (open.isDirty || edited)) {
      const replace = "Replace";
      const pick = await vscode.window.showWarningMessage(
        "The open preview has edits that are not committed. Replace them with the new summary?",
        { modal: true },
        replace,
      );
      if (pick !== replace) {
        await vscode.window.showTextDocument(open, { preview: false });
        return;
      }
      revert = true;
    }
    this.previews.put(draft);
    this.previewFs.changed(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    if (revert || doc.getText() !== draft.preview.summary) {
      await vscode.commands.executeCommand("workbench.action.files.revert");
    }
    if (doc.languageId !== "markdown") await vscode.languages.setTextDocumentLanguage(doc, "markdown");
    testLog("previewOpened", {
      kind: draft.kind,
      uri: uri.toString(),
      session: draft.preview.session,
      summary: draft.preview.summary,
      ...(draft.kind === "compaction"
        ? { spanKey: draft.preview.spanKey, fromDraft: draft.preview.fromDraft, pinned: draft.preview.pinned, audit: draft.preview.audit }
        : { targetId: draft.preview.targetId, entries: draft.preview.entries }),
      editorText: editor.document.getText(),
    });
    let text = previewOpenedMessage(draft);
    if (draft.kind === "compaction") {
      const missing = missingPinned(draft.preview.summary, draft.preview.pinned);
      if (missing.length > 0) text += ` ${pinnedDroppedText(missing)} Quote ${missing.length === 1 ? "it" : "them"} before saving, or commit anyway when asked.`;
    }
    void vscode.window.showInformationMessage(text);
  }

  /** FileSystemProvider.writeFile of a pi-summary: document: commit its text. Throws to fail the save. */
  private async commitPreview(uri: vscode.Uri, text: string): Promise<void> {
    const stored = this.previews.get(uri.path);
    if (!stored || !parsePreviewPath(uri.path)) {
      throw vscode.FileSystemError.Unavailable("This is not an open Pi preview. Run \"Pi: Preview Compaction\" to make one.");
    }
    if (stored.committed) {
      throw vscode.FileSystemError.Unavailable(
        stored.draft.kind === "compaction"
          ? 'This preview was already committed. Run "Pi: Preview Compaction" again for a new one.'
          : "This branch summary was already committed. Use Summarize and edit… again for a new one.",
      );
    }
    const problem = commitProblem(text);
    if (problem) throw vscode.FileSystemError.Unavailable(`Not saved: ${problem}.`);
    if (!this.client || !this.client.isRunning()) {
      throw vscode.FileSystemError.Unavailable('pi-lsp is not running: run "Pi: Restart Server", then save again.');
    }
    const reason = this.saveReasons.get(uri.toString());
    this.saveReasons.delete(uri.toString());
    if (!saveCommits(reason)) {
      // files.autoSave (afterDelay by default in VS Code for the Web) must never commit a half-edited summary.
      this.previews.write(uri.path, text, false);
      testLog("previewAutoSaved", { kind: stored.draft.kind, uri: uri.toString(), reason });
      if (!this.autoSaveNoticeShown.has(uri.toString())) {
        this.autoSaveNoticeShown.add(uri.toString());
        void vscode.window.showInformationMessage(AUTO_SAVE_TEXT);
      }
      return;
    }
    testLog("previewSave", { kind: stored.draft.kind, uri: uri.toString(), text, reason });
    const draft = stored.draft;
    if (draft.kind === "compaction") await this.commitCompactionDraft(uri, draft, text);
    else await this.commitBranchDraft(uri, draft, text);
  }

  private async commitCompactionDraft(uri: vscode.Uri, draft: CompactionDraft, text: string): Promise<void> {
    let accept = false;
    let force = false;
    for (;;) {
      const params = { ...commitCompactionParams(draft, text, accept), ...(force ? { force: true } : {}) };
      let r: CommitCompactionResult;
      try {
        r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "Pi: compacting with the edited summary" }, () =>
          this.custom<CommitCompactionResult>(Methods.commitCompaction, params),
        );
      } catch (err) {
        const kind = errorKind(err);
        testLog("previewCommitError", { kind: draft.kind, code: (err as { code?: unknown }).code, errorKind: kind, message: String((err as Error).message ?? err) });
        if (kind === "pinnedDropped" && !accept) {
          const missing = missingPinned(text, draft.preview.pinned);
          const commit: vscode.MessageItem = { title: "Commit anyway" };
          const keep: vscode.MessageItem = { title: "Keep editing", isCloseAffordance: true };
          testLog("message", { severity: "warning", text: pinnedDroppedText(missing), modal: true });
          const pick = await vscode.window.showWarningMessage(
            pinnedDroppedText(missing),
            { modal: true, detail: "Commit anyway writes the summary without them. Keep editing leaves the document open and unsaved: quote the pinned messages, then save again." },
            commit,
            keep,
          );
          if (pick === commit) {
            accept = true;
            continue;
          }
          throw vscode.FileSystemError.Unavailable("Not compacted: the summary drops a pinned message. Quote it, then save again.");
        }
        if (!force && (await this.forceAfterOwnedByPi("Compaction", err, params))) {
          force = true;
          continue;
        }
        if (kind === "sessionChanged" || (err as { code?: unknown }).code === -32801) {
          this.offerPreviewAgain(draft);
          throw vscode.FileSystemError.Unavailable(sessionChangedText("compaction"));
        }
        throw vscode.FileSystemError.Unavailable(describeError("Compaction", err).text);
      }
      const edited = r.entry.details?.edited ?? text !== draft.preview.summary;
      this.previews.write(uri.path, text, true);
      this.closeAfterSave.add(uri.toString());
      this.drafts.compacted(draft.preview.session);
      testLog("previewCommitted", { kind: draft.kind, uri: uri.toString(), entryId: r.entry.id, edited, tokensBefore: r.tokensBefore, tokensAfter: r.tokensAfter });
      const msg = committedMessage(r, edited);
      testLog("message", { severity: "info", text: msg });
      void vscode.window.showInformationMessage(msg, "Show Summary").then((pick) => {
        if (pick === "Show Summary") void this.openSummary(r.entry.summary, r.entry.id, r.tokensBefore);
      });
      this.scheduleRefresh();
      return;
    }
  }

  private async commitBranchDraft(uri: vscode.Uri, draft: BranchDraft, text: string): Promise<void> {
    // expectLeafId (from the preview) makes the server refuse when the branch left behind changed.
    let params: NavigateParams = navigateSummaryParams(draft, text);
    let r: NavigateResult;
    for (;;) {
      try {
        const p = params;
        r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "Pi: moving with the edited branch summary" }, () =>
          this.execute<NavigateResult>("pi.navigate", p),
        );
        break;
      } catch (err) {
        testLog("previewCommitError", { kind: draft.kind, code: (err as { code?: unknown }).code, errorKind: errorKind(err), message: String((err as Error).message ?? err) });
        if (!params.force && (await this.forceAfterOwnedByPi("Navigation", err, params))) {
          params = { ...params, force: true };
          continue;
        }
        if (errorKind(err) === "sessionChanged" || (err as { code?: unknown }).code === -32801) {
          this.offerPreviewAgain(draft);
          throw vscode.FileSystemError.Unavailable(sessionChangedText("branch"));
        }
        throw vscode.FileSystemError.Unavailable(describeError("Navigation", err).text);
      }
    }
    this.previews.write(uri.path, text, true);
    this.closeAfterSave.add(uri.toString());
    testLog("previewCommitted", { kind: draft.kind, uri: uri.toString(), leafId: r.leafId, summaryEntryId: r.summaryEntry?.id, edited: text !== draft.preview.summary });
    const parts = [`Moved the session to ${draft.preview.targetId} with ${text !== draft.preview.summary ? "your edited" : "the previewed"} branch summary.`];
    const buttons: string[] = [];
    if (r.editorText) {
      parts.push("That entry was a user message: its text is ready to send again.");
      buttons.push("Copy Message");
    }
    const msg = parts.join(" ");
    testLog("message", { severity: "info", text: msg });
    void vscode.window.showInformationMessage(msg, ...buttons).then((pick) => {
      if (pick === "Copy Message" && r.editorText) void vscode.env.clipboard.writeText(r.editorText);
    });
    this.scheduleRefresh();
  }

  /** The save failed because the previewed span (or branch) is gone: say so, and offer a new preview. */
  private offerPreviewAgain(draft: SummaryDraft): void {
    const again = draft.kind === "compaction" ? "Preview Again" : "Summarize and Edit Again";
    const text = sessionChangedText(draft.kind);
    testLog("message", { severity: "warning", text });
    void vscode.window.showWarningMessage(text, again).then((pick) => {
      if (pick !== again) return;
      if (draft.kind === "compaction") void this.previewCompaction();
      else void this.previewBranchSummary(draft.preview.targetId, draft.instructions);
    });
  }

  /** A committed preview is closed once VS Code has marked it saved (so closing never asks to save). */
  private async afterPreviewSaved(doc: vscode.TextDocument): Promise<void> {
    const key = doc.uri.toString();
    if (doc.uri.scheme !== PREVIEW_SCHEME || !this.closeAfterSave.delete(key)) return;
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === key);
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
    this.previews.delete(doc.uri.path);
    testLog("previewClosed", { uri: key });
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
      if (s.edit) {
        await this.previewBranchSummary(target.entryId);
        return;
      }
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
      // Pin toggles: on a pinned entry it unpins (pinned: false).
      const target = node ?? this.treeView.selection[0];
      if (target && this.requireClient()) await vscode.commands.executeCommand("pi.pin", { entryId: target.entryId, pinned: !target.pinned });
    });
    reg(C.treeUnpin, async (node?: ViewNode) => {
      const target = node ?? this.treeView.selection[0];
      if (target && this.requireClient()) await vscode.commands.executeCommand("pi.pin", { entryId: target.entryId, pinned: false });
    });
    reg(C.treeHideFromContext, async (node?: ViewNode) => {
      const target = node ?? this.treeView.selection[0];
      if (target && this.requireClient()) await this.editContext({ entryId: target.entryId, action: "omit" });
    });
    reg(C.treeReplaceInContext, async (node?: ViewNode) => {
      const target = node ?? this.treeView.selection[0];
      if (!target || !this.requireClient()) return;
      const text = await this.askReplacement(target.entryId, target.label);
      if (text === undefined) return;
      await this.editContext({ entryId: target.entryId, action: "replace", text });
    });
    reg(C.treeRestoreToContext, async (node?: ViewNode) => {
      const target = node ?? this.treeView.selection[0];
      if (target && this.requireClient()) await this.editContext({ entryId: target.entryId, action: "restore" });
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
    reg(C.previewCompaction, () => this.previewCompaction());
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
      this.fetchTree(),
      this.custom<FilesResult>(Methods.files, {}),
      this.custom<ContextResult>(Methods.context, {}),
    ]);
    if (tree.status === "fulfilled" && tree.value) {
      const changed = this.tree.set(buildTreeModel(tree.value));
      const model = this.tree.model!;
      this.drafts.leafMoved(model.session, model.leafId);
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
      this.usage = { session: ctx.value.session, tokens: ctx.value.tokens, contextWindow: ctx.value.contextWindow, percent: ctx.value.percent, current: true };
    } else {
      this.lastContext = undefined;
      this.usage = undefined;
    }
    this.renderStatus();
    if (files.status === "fulfilled" && files.value) {
      this.updateFiles({ ...files.value, current: true });
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
    this.decorations.set(model.modified, model.stale);
    testLog("filesRefreshed", { total: model.total, modified: [...model.modified], stale: [...model.stale.keys()] });
  }

  /** Follows the owner of the current session: "live" when a pi with the bridge holds it. */
  private ownerChanged(p: SessionChanged): void {
    const o = p.owner;
    this.live = o && o.bridge ? { pid: o.pid, piVersion: o.piVersion } : undefined;
    let line: string;
    if (this.live) {
      line = `[pi-lsp] live: pi ${o!.pid} (Pi ${o!.piVersion ?? "?"}) holds ${path.basename(p.session)} with the pi-lsp bridge; compact, navigate and label go through it`;
    } else if (o) {
      line = `[pi-lsp] pi ${o.pid} holds ${path.basename(p.session)} without the pi-lsp bridge: writes are refused; load it with "pi -e <pi-lsp>/editors/pi/extension.ts" or "pi install <pi-lsp>/editors/pi"`;
    } else {
      line = `[pi-lsp] no live pi holds ${path.basename(p.session)} (no bridge attached)`;
    }
    if (line !== this.ownerLine) {
      this.ownerLine = line;
      this.output.appendLine(line);
      testLog("owner", { live: !!this.live, pid: o?.pid ?? null });
    }
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
    const session = this.usage?.session ?? this.tree.model?.session;
    const draftReady = this.drafts.readyFor(session);
    const view = statusView(this.usage, reserve, draftReady);
    const live = this.live ? " $(broadcast) live" : "";
    this.status.text = (this.compacting ? `$(sync~spin) Pi compacting (${this.compacting})…` : view.text) + live;
    const md = new vscode.MarkdownString(view.tooltip.replace(/\n/g, "  \n"));
    if (this.live) {
      md.appendMarkdown(`  \nLive: pi ${this.live.pid} holds this session with the pi-lsp bridge; compaction, navigation and labels are done by that pi.`);
    }
    md.appendMarkdown(`  \n[Preview and edit the compaction](command:${C.previewCompaction})`);
    if (this.lastContext?.lastCompaction) {
      md.appendMarkdown(`  \n[Show the last compaction summary](command:${C.showLastCompactionSummary})`);
    }
    md.isTrusted = { enabledCommands: [C.showLastCompactionSummary, C.previewCompaction] };
    this.status.tooltip = md;
    this.status.command = { command: C.treeCompact, title: "Compact the Pi session" };
    this.status.backgroundColor =
      view.level === "normal" ? undefined : new vscode.ThemeColor(`statusBarItem.${view.level === "error" ? "error" : "warning"}Background`);
    this.status.show();
    testLog("status", { text: this.status.text, level: view.level, draftReady, live: !!this.live });
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
      n.isLeaf
        ? new vscode.ThemeColor("charts.green")
        : n.pinned
          ? new vscode.ThemeColor("charts.orange")
          : n.onPath
            ? undefined
            : new vscode.ThemeColor("disabledForeground"),
    );
    item.accessibilityInformation = { label: `${n.label}${n.pinned ? ", pinned" : ""}${n.isLeaf ? ", current leaf" : ""}` };
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
    const signature = JSON.stringify(model.groups.map((g) => [g.state, g.label, g.items.map((i) => [i.absPath, i.stale?.reason, i.stale?.modifiedAt])]));
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
    item.iconPath = n.stale ? new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground")) : vscode.ThemeIcon.File;
    item.contextValue = `piFile.${n.state}${n.stale ? ".stale" : ""}`;
    item.accessibilityInformation = { label: `${n.label}${n.stale ? `, stale: ${staleText(n.stale).short}` : ""}` };
    item.command = { command: C.filesOpen, title: "Open File", arguments: [n] };
    return item;
  }
}

class ModifiedFilesDecorations implements vscode.FileDecorationProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri[]>();
  readonly onDidChangeFileDecorations = this.changed.event;
  private modified = new Set<string>();
  private stale = new Map<string, StaleInfo>();
  private signature = "";

  set(modified: Set<string>, stale: Map<string, StaleInfo>): void {
    const signature = JSON.stringify([[...modified].sort(), [...stale.entries()].map(([p, s]) => [p, s.reason]).sort()]);
    if (signature === this.signature) return;
    this.signature = signature;
    const touched = new Set<string>([...this.modified, ...this.stale.keys(), ...modified, ...stale.keys()]);
    this.modified = new Set(modified);
    this.stale = new Map(stale);
    if (touched.size > 0) this.changed.fire([...touched].map((p) => vscode.Uri.file(p)));
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    if (uri.scheme !== "file") return undefined;
    const st = this.stale.get(uri.fsPath);
    if (st) {
      // Distinct from the modified badge: the agent's view of this file is out of date.
      const why = st.reason === "deleted" ? "deleted" : "changed on disk";
      return new vscode.FileDecoration("π!", `Pi: ${why} since the agent read it`, new vscode.ThemeColor("list.warningForeground"));
    }
    if (!this.modified.has(uri.fsPath)) return undefined;
    return new vscode.FileDecoration("π", "Modified by the Pi agent on the current path of the session");
  }
}

/**
 * The pi-summary: scheme: previewed summaries as ordinary (Markdown) documents. Reading gives the
 * stored text; writing (Save) commits it through the extension and fails the save when the
 * server refuses, so the document stays dirty and the user can fix it and save again.
 */
class PreviewFileSystem implements vscode.FileSystemProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  private readonly started = Date.now();

  constructor(
    private readonly store: PreviewStore,
    private readonly commit: (uri: vscode.Uri, text: string) => Promise<void>,
  ) {}

  changed(uri: vscode.Uri): void {
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  private isDir(p: string): boolean {
    return p === "/" || p === "" || p === "/compaction" || p === "/branch" || this.store.paths().some((x) => x.startsWith(p.endsWith("/") ? p : p + "/"));
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const d = this.store.get(uri.path);
    if (d) return { type: vscode.FileType.File, ctime: this.started, mtime: d.mtime, size: Buffer.byteLength(d.content, "utf8") };
    if (this.isDir(uri.path)) return { type: vscode.FileType.Directory, ctime: this.started, mtime: this.started, size: 0 };
    throw vscode.FileSystemError.FileNotFound(uri);
  }

  readDirectory(uri: vscode.Uri): [string, vscode.FileType][] {
    const dir = uri.path.endsWith("/") ? uri.path : uri.path + "/";
    const out = new Map<string, vscode.FileType>();
    for (const p of this.store.paths()) {
      if (!p.startsWith(dir)) continue;
      const rest = p.slice(dir.length).split("/");
      out.set(rest[0]!, rest.length > 1 ? vscode.FileType.Directory : vscode.FileType.File);
    }
    return [...out.entries()];
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const d = this.store.get(uri.path);
    if (!d) throw vscode.FileSystemError.FileNotFound(uri);
    return Buffer.from(d.content, "utf8");
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    await this.commit(uri, Buffer.from(content).toString("utf8"));
    this.changed(uri);
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions("Pi previews have no folders to create.");
  }

  delete(uri: vscode.Uri): void {
    this.store.delete(uri.path);
    this.emitter.fire([{ type: vscode.FileChangeType.Deleted, uri }]);
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions("Pi previews cannot be renamed: save commits them.");
  }
}
