// Marks on entries: labels, pins (quoted verbatim by every later summary) and undoing a
// compaction, from the palette (an entry picker) or from a tree row.

import * as vscode from "vscode";
import { plain } from "../request";
import type { PiContext } from "../context";
import { flattenEntries, ViewNode } from "../models/tree";
import { info } from "../notifications";
import { LabelResult, PinResult, UndoCompactionResult } from "../protocol";
import { pickEntry } from "./navigation";

export async function undoCompaction(pi: PiContext, params: object): Promise<UndoCompactionResult | undefined> {
  if (!pi.server.requireClient()) return undefined;
  const result = await plain<UndoCompactionResult>(pi, "Undoing the compaction", "pi.undoCompaction", params);
  if (result) {
    void info(`Undid compaction ${result.compactionId}: the session continues from the entries before it.`);
    await pi.views.refresh();
  }
  return result;
}

/** pi.label with arguments (a script or another extension): no prompt, a refresh soon after. */
export async function label(pi: PiContext, params: object): Promise<LabelResult | undefined> {
  const r = await plain<LabelResult>(pi, "Labelling", "pi.label", params);
  pi.views.scheduleRefresh();
  return r;
}

export async function labelInteractive(pi: PiContext, entryId?: string, current?: string): Promise<LabelResult | undefined> {
  if (!pi.server.requireClient()) return undefined;
  if (!entryId) {
    const entry = await pickEntry(pi, "Pi: Label Entry");
    if (!entry) return undefined;
    entryId = entry.id;
  }
  const text = await vscode.window.showInputBox({
    title: `Pi: Label ${entryId}`,
    prompt: "Label for this entry (empty clears it)",
    value: current ?? "",
    ignoreFocusOut: true,
  });
  if (text === undefined) return undefined;
  const params = text.trim() ? { entryId, label: text.trim() } : { entryId };
  const r = await plain<LabelResult>(pi, "Labelling", "pi.label", params);
  await pi.views.refresh();
  return r;
}

/** pi.pin with arguments: no prompt and no message, the views refreshed. */
export async function pin(pi: PiContext, params: object): Promise<PinResult | undefined> {
  const r = await plain<PinResult>(pi, "Pinning", "pi.pin", params);
  await pi.views.refresh();
  return r;
}

/** Palette "Pi: Pin Entry": pick an entry; a pinned one is unpinned. */
export async function pinInteractive(pi: PiContext): Promise<PinResult | undefined> {
  if (!pi.server.requireClient()) return undefined;
  const entry = await pickEntry(pi, "Pi: Pin Entry (pinned entries are quoted verbatim in every later summary)");
  if (!entry) return undefined;
  let pinned = false;
  try {
    pinned = flattenEntries(await pi.server.fetchTree()).some((n) => n.id === entry.id && n.pinned === true);
  } catch {
    // treat as not pinned
  }
  const r = await plain<PinResult>(pi, !pinned ? "Pinning" : "Unpinning", "pi.pin", { entryId: entry.id, pinned: !pinned });
  if (r) void info(r.pinned ? `Pinned ${r.entryId}: later summaries quote it verbatim.` : `Unpinned ${r.entryId}.`);
  await pi.views.refresh();
  return r;
}

/** Tree row "Label…": the current label (in the row's description) is the input's default. */
export async function labelRow(pi: PiContext, node?: ViewNode): Promise<void> {
  const target = pi.views.target(node);
  if (!target) return;
  const current = /\[([^\]]*)\]/.exec(target.description)?.[1]?.trim();
  await labelInteractive(pi, target.entryId, current);
}

/** Tree row "Pin" toggles (on a pinned entry it unpins); "Unpin" always unpins. */
export async function pinRow(pi: PiContext, node: ViewNode | undefined, pinned?: boolean): Promise<void> {
  const target = pi.views.target(node);
  if (target && pi.server.requireClient()) await vscode.commands.executeCommand("pi.pin", { entryId: target.entryId, pinned: pinned ?? !target.pinned });
}

export async function undoCompactionRow(pi: PiContext): Promise<void> {
  if (!pi.server.requireClient()) return;
  await vscode.commands.executeCommand("pi.undoCompaction", {});
}
