// The status bar item: context usage against the compaction threshold, "compacting…" while a
// compaction runs, a ready draft, and the "live" indicator when a pi with pi-lsp's bridge holds
// the current session (then compaction, navigation and labels are done by that pi).

import * as path from "node:path";
import * as vscode from "vscode";
import { settingsNow } from "./identity";
import { EXTENSION_COMMANDS as C } from "./models/commands";
import { DEFAULT_RESERVE_TOKENS, DraftTracker, statusView } from "./models/status";
import { ContextResult, ContextUsage, SessionChanged, SummarizerChoice } from "./protocol";
import { testLog } from "./testLog";

/** What the status bar is given: the drafts it marks ready, and the channel its owner and summarizer lines go to. */
export interface StatusBarDeps {
  readonly drafts: Pick<DraftTracker, "readyFor">;
  readonly output: vscode.OutputChannel;
}

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  usage: ContextUsage | undefined;
  compacting: string | undefined;
  lastContext: ContextResult | undefined;
  /** The live pi (with pi-lsp's bridge) of the current session, and the last owner line written. */
  private live: { pid: number; piVersion?: string } | undefined;
  private ownerLine = "";
  /** The summarizer and model a compaction of the current session would use, and the last line written about it. */
  private summarizer: SummarizerChoice | undefined;
  private summarizerLine = "";
  /** The session the Pi Session view shows (set by its refresh; none before the first). */
  private treeSession: string | undefined;

  constructor(private readonly deps: StatusBarDeps) {
    this.item = vscode.window.createStatusBarItem("piLsp.context", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Pi Context Usage";
    this.item.command = C.treeCompact;
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  /**
   * Follows the summarizer the server would compact the current session with ("Compact with
   * claude-sonnet-4-5 via anthropic"); the output channel says whether the session's model is
   * usable, and why not with its fix.
   */
  summarizerChanged(p: SessionChanged): void {
    this.summarizer = p.summarizer;
    const c = p.summarizer;
    if (!c) return;
    const line = c.notice ? `[pi-lsp] ${c.notice}` : `[pi-lsp] ${c.label}${c.credential ? ` (key: ${c.credential})` : ""}`;
    if (line !== this.summarizerLine) {
      this.summarizerLine = line;
      this.deps.output.appendLine(line);
      testLog("summarizer", { kind: c.kind, label: c.label, notice: c.notice ?? null });
    }
  }

  /** Follows the owner of the current session: "live" when a pi with the bridge holds it. */
  ownerChanged(p: SessionChanged): void {
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
      this.deps.output.appendLine(line);
      testLog("owner", { live: !!this.live, pid: o?.pid ?? null });
    }
  }

  /**
   * What a refresh of the views read: the session the tree now shows (undefined: none) and
   * its context figure (undefined: not read), drawn at once.
   */
  refreshed(treeSession: string | undefined, context: ContextResult | undefined): void {
    this.treeSession = treeSession;
    this.lastContext = context;
    this.usage = context
      ? { session: context.session, tokens: context.tokens, contextWindow: context.contextWindow, percent: context.percent, current: true, estimate: context.estimate, source: context.source }
      : undefined;
    this.render();
  }

  /** With `text`: a fixed state (server missing, stopped, failed). Without: the usage view. */
  render(text?: string, tooltip?: string, level?: "warning" | "error", command?: string): void {
    const status = this.item;
    if (text) {
      status.text = text;
      status.tooltip = tooltip;
      status.command = command ?? C.treeCompact;
      status.backgroundColor = level ? new vscode.ThemeColor(`statusBarItem.${level}Background`) : undefined;
      status.show();
      return;
    }
    const reserve = settingsNow().reserveTokens ?? DEFAULT_RESERVE_TOKENS;
    const session = this.usage?.session ?? this.treeSession;
    const draftReady = this.deps.drafts.readyFor(session);
    const view = statusView(this.usage, reserve, draftReady);
    const live = this.live ? " $(broadcast) live" : "";
    status.text = (this.compacting ? `$(sync~spin) Pi compacting (${this.compacting})…` : view.text) + live;
    const md = new vscode.MarkdownString(view.tooltip.replace(/\n/g, "  \n"));
    if (this.live) {
      md.appendMarkdown(`  \nLive: pi ${this.live.pid} holds this session with the pi-lsp bridge; compaction, navigation and labels are done by that pi.`);
    } else if (this.summarizer) {
      md.appendMarkdown(`  \n${escapeMarkdown(this.summarizer.label)}`);
      if (this.summarizer.fix) md.appendMarkdown(`  \nFix: \`${this.summarizer.fix.replace(/`/g, "'")}\``);
    }
    md.appendMarkdown(`  \n[Preview and edit the compaction](command:${C.previewCompaction})`);
    if (this.lastContext?.lastCompaction) {
      md.appendMarkdown(`  \n[Show the last compaction summary](command:${C.showLastCompactionSummary})`);
    }
    md.isTrusted = { enabledCommands: [C.showLastCompactionSummary, C.previewCompaction] };
    status.tooltip = md;
    status.command = { command: C.treeCompact, title: "Compact the Pi session" };
    status.backgroundColor =
      view.level === "normal" ? undefined : new vscode.ThemeColor(`statusBarItem.${view.level === "error" ? "error" : "warning"}Background`);
    status.show();
    testLog("status", { text: status.text, level: view.level, draftReady, live: !!this.live });
  }
}

/** Text shown as is in a MarkdownString. */
function escapeMarkdown(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, "\\$&");
}
