// Compaction: pi.compact with its instructions box, "Pi: Preview Compaction" (the summary in an
// editor; saving it compacts, commands/preview.ts) and the summary of the last compaction.

import * as vscode from "vscode";
import { customRequest, plain } from "../request";
import type { PiContext } from "../context";
import { canPin, coverageText, entityLabel, keepInstructions } from "../models/clear";
import { CompactionDraft } from "../models/preview";
import { formatTokens } from "../models/status";
import { info, showMessage } from "../notifications";
import { runJob } from "../progress";
import { CompactionPreview, CompactResult, ContextResult, Entity, Methods, PinResult, PreviewCompactionParams, PreviewCompactionResult } from "../protocol";
import { testLog } from "../testLog";
import { openPreview } from "./preview";
import { openSummary } from "./summary";

/** Asks for the optional instructions of a summary (`more` ends the prompt): trimmed, "" for
 * none, undefined when the user cancels. */
async function askInstructions(title: string, more: string): Promise<string | undefined> {
  const input = await vscode.window.showInputBox({
    title,
    prompt: `Optional instructions for the summary (press Enter for none, Escape to cancel)${more}`,
    placeHolder: "e.g. Keep the decisions about the parser; drop the test output",
    ignoreFocusOut: true,
  });
  return input?.trim();
}

/** pi.compact's arguments as the server takes them (instructions optional). */
type CompactParams = { instructions?: string } & Record<string, unknown>;

export async function compact(pi: PiContext, params: CompactParams | undefined): Promise<CompactResult | undefined> {
  if (!pi.server.requireClient()) return undefined;
  if (params === undefined) {
    const instructions = await askInstructions("Pi: Compact Session", "");
    if (instructions === undefined) return undefined;
    params = instructions ? { instructions } : {};
  }
  const result = await runJob<CompactResult>(pi, "Compacting session", "Compaction", "pi.compact", params);
  if (!result) return undefined;
  if ("nothingToCompact" in result && result.nothingToCompact) {
    void showMessage(pi, { severity: "info", text: `Nothing to compact: ${result.reason}`, actions: [] });
  } else if ("entry" in result) {
    const by = result.via === "pi" ? ` (by the live pi ${result.pid ?? ""})`.replace(" )", ")") : "";
    const text = `Compacted the session${by}: ${formatTokens(result.tokensBefore)} → ${formatTokens(result.tokensAfter ?? NaN)} tokens.`;
    void info(text, "Show Summary").then((pick) => {
      if (pick === "Show Summary") void openSummary(result.entry.summary, result.entry.id, result.tokensBefore);
    });
  }
  await pi.views.refresh();
  return result;
}

/**
 * "Pi: Preview Compaction": optional instructions, pi/previewCompaction, the summary in an
 * editor. With `instructions` given (a dropped entity added to them) there is no input box.
 */
export async function previewCompaction(pi: PiContext, given?: { instructions?: string }): Promise<CompactionPreview | undefined> {
  if (!pi.server.requireClient()) return undefined;
  let instructions = given?.instructions?.trim() || undefined;
  if (!given) {
    const input = await askInstructions("Pi: Preview Compaction", ". The summary opens in an editor; saving it compacts.");
    if (input === undefined) return undefined;
    instructions = input || undefined;
  }
  const params: PreviewCompactionParams = instructions ? { instructions } : {};
  const result = await runJob<PreviewCompactionResult>(pi, "Previewing compaction", "Compaction preview", Methods.previewCompaction, params, true);
  if (!result) return undefined;
  if ("nothingToCompact" in result) {
    void showMessage(pi, { severity: "info", text: `Nothing to compact: ${result.reason}`, actions: [] });
    return undefined;
  }
  const draft: CompactionDraft = { kind: "compaction", preview: result };
  if (instructions) draft.instructions = instructions;
  await openPreview(pi, draft);
  return result;
}

/**
 * "Pi: Keep a Dropped Entity…": the entities the previewed summary drops; choosing one pins its
 * message (a pinnable one: every later summary quotes it) or adds "Keep: <text>" to the
 * instructions, then previews again.
 */
export async function keepDroppedEntity(pi: PiContext): Promise<CompactionPreview | undefined> {
  if (!pi.server.requireClient()) return undefined;
  const draft = pi.previews.store.lastCompaction();
  if (!draft) {
    void showMessage(pi, { severity: "info", text: 'No compaction preview is open: run "Pi: Preview Compaction" first.', actions: [] });
    return undefined;
  }
  const missing = draft.preview.coverage?.missing ?? [];
  if (missing.length === 0) {
    void showMessage(pi, { severity: "info", text: "The previewed summary carries every critical entity of the range it summarizes.", actions: [] });
    return undefined;
  }
  type Item = vscode.QuickPickItem & { entity: Entity };
  const items: Item[] = missing.map((e) => ({
    entity: e,
    label: entityLabel(e),
    description: canPin(e) ? `pin message ${e.entryId}` : 'add "Keep: …" to the instructions',
  }));
  const pick = await vscode.window.showQuickPick(items, {
    title: `Pi: Keep a Dropped Entity · the summary ${coverageText(draft.preview.coverage) ?? ""}`,
    placeHolder: "Entities the summary drops: choose one to keep, then the summary is previewed again",
    matchOnDescription: true,
  });
  if (!pick) return undefined;
  const e = pick.entity;
  testLog("keepEntity", { kind: e.kind, text: e.text, pin: canPin(e), entryId: e.entryId });
  if (canPin(e)) {
    const r = await plain<PinResult>(pi, "Pinning", "pi.pin", { entryId: e.entryId, pinned: true });
    if (!r) return undefined;
    void info(`Pinned ${r.entryId}: later summaries quote it verbatim. Previewing again.`);
    await pi.views.refresh();
    return previewCompaction(pi, { instructions: draft.instructions });
  }
  return previewCompaction(pi, { instructions: keepInstructions(draft.instructions, e) });
}

export async function showLastCompactionSummary(pi: PiContext): Promise<void> {
  const c = await customRequest<ContextResult>(pi, "Reading the context", Methods.context);
  if (!c) return;
  if (!c.lastCompaction) {
    void showMessage(pi, {
      severity: "info",
      text: 'The current path of this session has no compaction yet. "Pi: Compact Session" makes one.',
      actions: [],
    });
    return;
  }
  await openSummary(c.lastCompaction.summary, c.lastCompaction.id, c.lastCompaction.tokensBefore);
}

/** A compaction summary, read-only, in a Markdown editor. */

