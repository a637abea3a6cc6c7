// Rewind and cut points from the session tree: "Rewind Files to Here…" (one vscode.diff per
// file the agent changed after the entry, then the accepted files applied as one WorkspaceEdit,
// so the editor's undo takes them back), "Summarize Up to Here" (a compaction kept from the
// entry), "Summarize From Here" (back to the entry's parent with a branch summary) and
// "Condense Range…" (the context messages from the entry to another replaced by a summary).

import * as vscode from "vscode";
import type { PiContext } from "../context";
import { EXTENSION_COMMANDS as C } from "../models/commands";
import { formatTokens } from "../models/status";
import { ViewNode } from "../models/tree";
import { info } from "../notifications";
import { customRequest, plain } from "../request";
import { testLog } from "../testLog";
import { CondenseResult, FlatTreeResult, Methods, RewindFile, RewindResult } from "../protocol";
import { navigate } from "./navigation";

/** The scheme of the read-only documents that hold what a rewind would write. */
export const REWIND_SCHEME = "pi-rewind";

/** Contents of pi-rewind: documents, by URI, for the diffs of the last preview. */
class RewindContents implements vscode.TextDocumentContentProvider {
  private docs = new Map<string, string>();
  private changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  set(uri: vscode.Uri, text: string): void {
    this.docs.set(uri.toString(), text);
    this.changed.fire(uri);
  }
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString()) ?? "";
  }
}

const contents = new RewindContents();

/** The registrations of this file: the pi-rewind: documents and the tree's four commands. */
export function registerRewind(pi: PiContext): vscode.Disposable[] {
  const reg = (id: string, fn: (node?: ViewNode) => unknown) => vscode.commands.registerCommand(id, fn);
  return [
    vscode.workspace.registerTextDocumentContentProvider(REWIND_SCHEME, contents),
    reg(REWIND_COMMANDS.rewindHere, (node) => rewindFilesTo(pi, node?.entryId)),
    reg(REWIND_COMMANDS.summarizeUpTo, (node) => summarizeUpTo(pi, node?.entryId)),
    reg(REWIND_COMMANDS.summarizeFrom, (node) => summarizeFrom(pi, node?.entryId)),
    reg(REWIND_COMMANDS.condenseRange, (node) => condenseRange(pi, node?.entryId)),
  ];
}

/** The extension-side command ids of the tree's rewind menu. */
export const REWIND_COMMANDS = {
  rewindHere: C.treeRewindFilesHere,
  summarizeUpTo: C.treeSummarizeUpToHere,
  summarizeFrom: C.treeSummarizeFromHere,
  condenseRange: C.treeCondenseRange,
} as const;

function diskUri(f: RewindFile): vscode.Uri {
  return vscode.Uri.file(f.absPath);
}

function targetUri(entryId: string, f: RewindFile): vscode.Uri {
  return vscode.Uri.from({ scheme: REWIND_SCHEME, path: "/" + f.path, query: `entry=${entryId}&side=target` });
}

function currentUri(entryId: string, f: RewindFile): vscode.Uri {
  return vscode.Uri.from({ scheme: REWIND_SCHEME, path: "/" + f.path, query: `entry=${entryId}&side=current` });
}

type FileItem = vscode.QuickPickItem & { file: RewindFile };

/**
 * Rewind Files to Here…: previews the rewind (pi/rewind dryRun), opens one diff per file (the
 * file now on the left, what it held at the entry on the right), asks which to bring back
 * (conflicts unticked), and applies them as one WorkspaceEdit, saved; Undo in the editor takes
 * each back.
 */
export async function rewindFilesTo(pi: PiContext, entryId: string | undefined, pick?: (items: FileItem[]) => Thenable<readonly FileItem[] | undefined>): Promise<RewindResult | undefined> {
  if (!entryId || !pi.server.requireClient()) return undefined;
  const preview = await customRequest<RewindResult>(pi, "Previewing the rewind", Methods.rewind, { entryId, dryRun: true });
  if (!preview) return undefined;
  testLog("rewindPreview", { entryId, files: preview.files.map((f) => f.path), conflicts: preview.conflicts, notRestorable: preview.notRestorable, bashCommands: preview.bashCommands });
  if (preview.files.length === 0) {
    void info(`Nothing to rewind to ${entryId}: no file the agent changed after it differs.${notes(preview)}`);
    return preview;
  }
  for (const f of preview.files) {
    contents.set(targetUri(entryId, f), f.targetExists ? f.target : "");
    const left = f.exists ? diskUri(f) : currentUri(entryId, f);
    if (!f.exists) contents.set(left, "");
    const what = f.targetExists ? (f.exists ? "" : " (deleted since)") : " (created after the entry: removed)";
    await vscode.commands.executeCommand("vscode.diff", left, targetUri(entryId, f), `${f.path}: now ↔ at ${entryId}${what}${f.conflict ? " — CONFLICT" : ""}`, { preview: false });
  }
  const items: FileItem[] = preview.files.map((f) => ({
    file: f,
    label: f.path,
    description: f.conflict ? "conflict: changed since the agent's last change" : f.targetExists ? (f.exists ? "restore" : "recreate") : "remove (created after the entry)",
    picked: !f.conflict,
  }));
  const chosen = await (pick ?? ((its) => vscode.window.showQuickPick(its, { canPickMany: true, title: `Pi: Rewind Files to ${entryId}`, placeHolder: `Files to bring back (one WorkspaceEdit: Undo takes them back)${notes(preview)}`, ignoreFocusOut: true })))(items);
  if (!chosen || chosen.length === 0) {
    testLog("rewindApplied", { entryId, files: [] });
    return undefined;
  }
  const edit = new vscode.WorkspaceEdit();
  const touched: vscode.Uri[] = [];
  for (const { file: f } of chosen) {
    const uri = diskUri(f);
    const meta = { label: `Rewind to ${entryId}`, needsConfirmation: false };
    if (!f.targetExists) {
      edit.deleteFile(uri, { ignoreIfNotExists: true }, meta);
    } else if (!f.exists) {
      edit.createFile(uri, { overwrite: true, contents: new TextEncoder().encode(f.target) }, meta);
    } else {
      const doc = await vscode.workspace.openTextDocument(uri);
      edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), f.target, meta);
      touched.push(uri);
    }
  }
  const ok = await vscode.workspace.applyEdit(edit, { isRefactoring: true });
  if (ok) {
    for (const uri of touched) {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      await doc?.save();
    }
  }
  testLog("rewindApplied", { entryId, files: chosen.map((c) => c.file.path), ok });
  void info(ok ? `Rewound ${chosen.length} file${chosen.length === 1 ? "" : "s"} to ${entryId} (Undo takes each back).${notes(preview)}` : "The rewind could not be applied.");
  return preview;
}

function notes(r: RewindResult): string {
  const parts: string[] = [];
  if (r.notRestorable.length) parts.push(` Not restorable: ${r.notRestorable.map((n) => `${n.path} (${n.reason})`).join("; ")}.`);
  if (r.bashCommands.length) parts.push(` Commands not undone: ${r.bashCommands.join("; ")}.`);
  return parts.join("");
}

/** Summarize Up to Here: a compaction whose kept part starts at the entry. */
export async function summarizeUpTo(pi: PiContext, entryId: string | undefined): Promise<unknown> {
  if (!entryId || !pi.server.requireClient()) return undefined;
  const r = await plain<{ tokensBefore?: number; tokensAfter?: number }>(pi, "Summarizing up to here", "pi.compact", { keepFrom: entryId });
  if (r && typeof r.tokensBefore === "number") void info(`Summarized the context before ${entryId}: ${formatTokens(r.tokensBefore)} → ${formatTokens(r.tokensAfter ?? 0)} tokens.`);
  await pi.views.refresh();
  return r;
}

/** Summarize From Here: back to the entry's parent, with a branch summary of what is left. */
export async function summarizeFrom(pi: PiContext, entryId: string | undefined): Promise<unknown> {
  if (!entryId || !pi.server.requireClient()) return undefined;
  const tree = await customRequest<FlatTreeResult>(pi, "Reading the tree", Methods.tree, { flat: true });
  const parent = tree?.nodes.find((n) => n.id === entryId)?.parentId;
  if (!parent) {
    void info(`${entryId} has no parent: there is nothing before it to keep.`);
    return undefined;
  }
  return navigate(pi, { targetId: parent, summarize: true });
}

/** "Carries 3 of 4 critical entities; missing: file src/x.go", as the compaction preview says it. */
function coverageLine(r: CondenseResult): string {
  const c = r.coverage;
  if (!c || c.entities.length === 0) return "The range names no critical entity.";
  const carried = c.entities.length - c.missing.length;
  const missing = c.missing.slice(0, 5).map((m) => `${m.kind} ${m.text}`).join("; ");
  return `The summary carries ${carried} of ${c.entities.length} critical entities of the range${missing ? `; missing: ${missing}` : ""}.`;
}

/** Condense Range…: from the entry to one the user names, previewed, then written. */
export async function condenseRange(pi: PiContext, fromId: string | undefined, toId?: string, confirm?: (r: CondenseResult) => Thenable<boolean>): Promise<CondenseResult | undefined> {
  if (!fromId || !pi.server.requireClient()) return undefined;
  toId ??= await vscode.window.showInputBox({ title: `Pi: Condense from ${fromId}`, prompt: "The id of the last message of the range (the tree shows ids)", ignoreFocusOut: true });
  if (!toId) return undefined;
  const preview = await customRequest<CondenseResult>(pi, "Previewing the condensed range", Methods.condense, { fromId, toId, dryRun: true });
  if (!preview) return undefined;
  testLog("condensePreview", { fromId, toId, targets: preview.targets, tokensBefore: preview.tokensBefore, tokensAfter: preview.tokensAfter });
  const ask =
    confirm ??
    (async (r: CondenseResult) =>
      (await vscode.window.showInformationMessage(
        `Condense ${r.targets.length} messages (${fromId} … ${toId}) into a summary? Context ${formatTokens(r.tokensBefore)} → ~${formatTokens(r.tokensAfter)} tokens.`,
        { modal: true, detail: `${coverageLine(r)}\n\n${r.summary.slice(0, 1500)}` },
        "Condense",
      )) === "Condense");
  if (!(await ask(preview))) return undefined;
  const r = await plain<CondenseResult>(pi, "Condensing the range", "pi.condense", { fromId, toId });
  if (r) void info(`Condensed ${r.targets.length} messages: context ${formatTokens(r.tokensBefore)} → ${formatTokens(r.tokensAfter)} tokens (the history is untouched; pi-lsp condense FILE ${fromId} --restore brings them back).`);
  await pi.views.refresh();
  return r;
}
