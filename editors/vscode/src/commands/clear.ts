// "Pi: Clear Old Tool Output": a dry run of pi.clearToolOutput, its preview in a modal
// (each tool, its arguments and its tokens), then the clear itself or a restore of every
// cleared result. Each cleared result is one context_edit entry; nothing is deleted.

import * as vscode from "vscode";
import { plain } from "../request";
import type { PiContext } from "../context";
import { clearDetail, clearedText, clearQuestion, NOTHING_TO_CLEAR } from "../models/clear";
import { info } from "../notifications";
import { ClearToolOutputParams, ClearToolOutputResult } from "../protocol";
import { testLog } from "../testLog";

export const CLEAR = "Clear";
export const RESTORE_ALL = "Restore All Cleared Output";

/** pi.clearToolOutput with arguments (a script, another extension): no question; a message unless it is a dry run. */
export async function clearToolOutput(pi: PiContext, params: ClearToolOutputParams): Promise<ClearToolOutputResult | undefined> {
  if (!pi.server.requireClient()) return undefined;
  const what = params.restore ? "Restoring the cleared tool output" : params.dryRun ? "Previewing the clear" : "Clearing old tool output";
  const r = await plain<ClearToolOutputResult>(pi, what, "pi.clearToolOutput", params);
  if (!r || r.dryRun) return r;
  void info(clearedText(r));
  if (r.cleared.length > 0) await pi.views.refresh();
  return r;
}

/** Palette: preview (dry run), confirm in a modal, clear; or restore everything cleared. */
export async function clearToolOutputInteractive(pi: PiContext): Promise<ClearToolOutputResult | undefined> {
  if (!pi.server.requireClient()) return undefined;
  const preview = await plain<ClearToolOutputResult>(pi, "Previewing the clear", "pi.clearToolOutput", { dryRun: true });
  if (!preview) return undefined;
  if (preview.cleared.length === 0) {
    testLog("message", { severity: "info", text: NOTHING_TO_CLEAR });
    const pick = await vscode.window.showInformationMessage(NOTHING_TO_CLEAR, RESTORE_ALL);
    return pick === RESTORE_ALL ? clearToolOutput(pi, { restore: true }) : undefined;
  }
  const question = clearQuestion(preview);
  testLog("clearPreview", { question, cleared: preview.cleared.length, saved: preview.saved, tokensBefore: preview.tokensBefore, tokensAfter: preview.tokensAfter });
  const pick = await vscode.window.showWarningMessage(question, { modal: true, detail: clearDetail(preview) }, CLEAR, RESTORE_ALL);
  testLog("clearChoice", { pick: pick ?? null });
  if (pick === CLEAR) return clearToolOutput(pi, {});
  if (pick === RESTORE_ALL) return clearToolOutput(pi, { restore: true });
  return undefined;
}
