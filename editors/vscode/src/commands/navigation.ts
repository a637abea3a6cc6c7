// Moving around the session tree: pi.navigate with its entry and summary pickers, "Summarize and
// edit…" (pi/previewBranchSummary, saved through commands/preview.ts), "Navigate Here…" on a tree
// row, and the palette forms of pi.tree and pi.files (focus the view).

import * as vscode from "vscode";
import { plain } from "../request";
import type { PiContext } from "../context";
import { describeError } from "../models/errors";
import { FileItem } from "../models/files";
import { BranchDraft } from "../models/preview";
import { flattenEntries, kindName, oneLine, ViewNode } from "../models/tree";
import { showMessage } from "../notifications";
import { runJob } from "../progress";
import { BranchSummaryPreview, Methods, NavigateParams, NavigateResult, PreviewBranchSummaryParams, TreeResult } from "../protocol";
import { infoMoved } from "./navigated";
import { openPreview } from "./preview";

/** pi.navigate's result: a navigation done by the live pi says so (the server's `via`). */
type NavigateAnswer = NavigateResult & { via?: string };

export async function pickEntry(pi: PiContext, title: string): Promise<{ id: string; label: string } | undefined> {
  let tree: TreeResult;
  try {
    tree = await pi.server.fetchTree();
  } catch (err) {
    void showMessage(pi, describeError("Reading the session tree", err));
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

async function askSummary(): Promise<{ summarize: boolean; instructions?: string; edit?: boolean } | undefined> {
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

export async function navigate(pi: PiContext, params: NavigateParams | undefined, askForSummary = false): Promise<NavigateResult | undefined> {
  if (!pi.server.requireClient()) return undefined;
  if (!params || !params.targetId) {
    const entry = await pickEntry(pi, "Pi: Navigate Session Tree");
    if (!entry) return undefined;
    params = { ...(params ?? {}), targetId: entry.id };
    askForSummary = true;
  }
  if (askForSummary) {
    const s = await askSummary();
    if (!s) return undefined;
    if (s.edit) {
      await previewBranchSummary(pi, params.targetId);
      return undefined;
    }
    params = { ...params, summarize: s.summarize, ...(s.instructions ? { instructions: s.instructions } : {}) };
  }
  const result = params.summarize
    ? await runJob<NavigateAnswer>(pi, "Summarizing branch", "Navigation", "pi.navigate", params)
    : await plain<NavigateAnswer>(pi, "Navigation", "pi.navigate", params);
  if (!result) return undefined;
  const parts = [`Moved the session to ${params.targetId}${result.via === "pi" ? " (by the live pi)" : ""}.`];
  if (result.summaryEntry) parts.push("A summary of the branch you left was added.");
  infoMoved(parts, result.editorText);
  await pi.views.refresh();
  return result;
}

/** "Summarize and edit…": pi/previewBranchSummary, the summary in an editor; saving navigates. */
export async function previewBranchSummary(pi: PiContext, targetId: string, instructions?: string): Promise<BranchSummaryPreview | undefined> {
  if (!pi.server.requireClient()) return undefined;
  let leafId: string | null = null;
  try {
    leafId = (await pi.server.fetchTree()).leafId;
  } catch (err) {
    void showMessage(pi, describeError("Reading the session tree", err));
    return undefined;
  }
  const params: PreviewBranchSummaryParams = instructions ? { targetId, instructions } : { targetId };
  const result = await runJob<BranchSummaryPreview>(pi, "Summarizing branch", "Branch summary preview", Methods.previewBranchSummary, params, true);
  if (!result) return undefined;
  const draft: BranchDraft = { kind: "branch", preview: result, leafId: result.leafId !== undefined ? result.leafId : leafId };
  if (instructions) draft.instructions = instructions;
  await openPreview(pi, draft);
  return result;
}

/** Palette "Pi: Show Session Tree": the view, refreshed and scrolled to the leaf. */
export async function showTree(pi: PiContext): Promise<{ session: string; leafId: string | null } | undefined> {
  await vscode.commands.executeCommand("piLsp.sessionTree.focus");
  await pi.views.refresh();
  await pi.views.revealLeaf();
  const model = pi.views.tree.model;
  return model ? { session: model.session, leafId: model.leafId } : undefined;
}

/** Palette "Pi: Show Files": the Files view, refreshed. */
export async function showFiles(pi: PiContext): Promise<undefined> {
  await vscode.commands.executeCommand("piLsp.files.focus");
  await pi.views.refresh();
  return undefined;
}

/** Tree row "Navigate Here…": the summary choice, then pi.navigate (through the middleware). */
export async function navigateHere(pi: PiContext, node?: ViewNode): Promise<void> {
  const target = pi.views.target(node);
  if (!target || !pi.server.requireClient()) return;
  const s = await askSummary();
  if (!s) return;
  if (s.edit) {
    await previewBranchSummary(pi, target.entryId);
    return;
  }
  const params: NavigateParams = { targetId: target.entryId, summarize: s.summarize };
  if (s.instructions) params.instructions = s.instructions;
  await vscode.commands.executeCommand("pi.navigate", params);
}

/** Files view row: open the file (the agent may have moved or deleted it since). */
export async function openFile(pi: PiContext, item?: FileItem): Promise<void> {
  if (!item) return;
  try {
    await vscode.window.showTextDocument(vscode.Uri.file(item.absPath), { preview: true });
  } catch (err) {
    void showMessage(pi, {
      severity: "warning",
      text: `Cannot open ${item.absPath}: ${err instanceof Error ? err.message : String(err)} (the agent may have deleted or moved it).`,
      actions: [],
    });
  }
}
