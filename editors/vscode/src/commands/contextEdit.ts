// The LLM context: "Pi: Show Context" and editing what the model sees (hide, replace or restore
// one message with a context_edit entry; the history keeps the original), from the palette,
// the context-by-size pick or a tree row.

import * as path from "node:path";
import * as vscode from "vscode";
import { customRequest, plain } from "../request";
import type { PiContext } from "../context";
import { formatTokens } from "../models/status";
import { oneLine, ViewNode } from "../models/tree";
import { info } from "../notifications";
import { ContextResult, EditContextParams, EditContextResult, Methods } from "../protocol";
import { pickContextItem } from "../views/contextBySize";
import { openSummary } from "./summary";

export async function showContext(pi: PiContext): Promise<ContextResult | undefined> {
  const c = await customRequest<ContextResult>(pi, "Reading the context", Methods.context);
  if (!c) return undefined;
  const size =
    typeof c.tokens === "number"
      ? `${c.tokens.toLocaleString("en-US")} of ${c.contextWindow.toLocaleString("en-US")} tokens (${Math.round(c.percent ?? (c.tokens / c.contextWindow) * 100)}%)`
      : `size unknown until the next reply, window ${c.contextWindow.toLocaleString("en-US")} tokens`;
  const text = `Pi context: ${c.messageCount} messages, ${size} — ${path.basename(c.session)}`;
  const buttons = c.lastCompaction ? ["Show Last Compaction Summary"] : [];
  void vscode.window.showInformationMessage(text, ...buttons).then((pick) => {
    if (pick && c.lastCompaction) void openSummary(c.lastCompaction.summary, c.lastCompaction.id, c.lastCompaction.tokensBefore);
  });
  return c;
}

/** pi.editContext with params: the edit, a message with the figure before and after, a refresh. */
export async function editContext(pi: PiContext, params: EditContextParams): Promise<EditContextResult | undefined> {
  if (!pi.server.requireClient()) return undefined;
  const what = params.action === "omit" ? "Hiding from the context" : params.action === "replace" ? "Replacing in the context" : "Restoring to the context";
  const r = await plain<EditContextResult>(pi, what, "pi.editContext", params);
  if (!r) return undefined;
  const verb = params.action === "omit" ? "Hidden from" : params.action === "replace" ? "Replaced in" : "Restored to";
  void info(`${verb} the context: ${params.entryId}. Context ${formatTokens(r.tokensBefore)} → ${formatTokens(r.tokensAfter)} tokens.`);
  await pi.views.refresh();
  return r;
}

/** The replacement text, asked in an input box (Escape cancels). */
function askReplacement(entryId: string, current?: string): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: `Pi: Replace ${entryId} in Context`,
    prompt: "What the model sees instead of this message (the history keeps the original)",
    value: current ? oneLine(current, 200) : "",
    ignoreFocusOut: true,
  });
}

/** Palette: pick a message of the context (largest first), then what to do with it. */
export async function editContextInteractive(pi: PiContext): Promise<EditContextResult | undefined> {
  const item = await pickContextItem(pi, "Pi: Edit Context");
  if (!item) return undefined;
  type ActionItem = vscode.QuickPickItem & { action: EditContextParams["action"] };
  const actions: ActionItem[] = [];
  if (item.contextEdit !== "omitted") actions.push({ action: "omit", label: "Hide from Context" });
  actions.push({ action: "replace", label: "Replace in Context…" });
  if (item.contextEdit) actions.push({ action: "restore", label: "Restore to Context" });
  const pick = await vscode.window.showQuickPick(actions, { title: `Pi: Edit Context · ${item.entryId}` });
  if (!pick) return undefined;
  if (pick.action === "replace") {
    const text = await askReplacement(item.entryId, item.preview);
    if (text === undefined) return undefined;
    return editContext(pi, { entryId: item.entryId, action: "replace", text });
  }
  return editContext(pi, { entryId: item.entryId, action: pick.action });
}

/** Palette "Pi: Context by Size": the largest messages first; picking one hides it (or restores a hidden one). */
export async function contextBySizeInteractive(pi: PiContext): Promise<EditContextResult | undefined> {
  const item = await pickContextItem(pi, "Pi: Context by Size");
  if (!item) return undefined;
  if (item.contextEdit === "omitted") return editContext(pi, { entryId: item.entryId, action: "restore" });
  return editContext(pi, { entryId: item.entryId, action: "omit" });
}

/** Tree rows "Hide from Context" and "Restore to Context". */
export async function editRow(pi: PiContext, node: ViewNode | undefined, action: "omit" | "restore"): Promise<void> {
  const target = pi.views.target(node);
  if (target && pi.server.requireClient()) await editContext(pi, { entryId: target.entryId, action });
}

/** Tree row "Replace in Context…": the row's text is the input's default. */
export async function replaceRow(pi: PiContext, node?: ViewNode): Promise<void> {
  const target = pi.views.target(node);
  if (!target || !pi.server.requireClient()) return;
  const text = await askReplacement(target.entryId, target.label);
  if (text === undefined) return;
  await editContext(pi, { entryId: target.entryId, action: "replace", text });
}
