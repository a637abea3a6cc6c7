// The context-by-size quick pick: the editable messages of the LLM context, largest first.

import * as vscode from "vscode";
import { customRequest } from "../request";
import type { PiContext } from "../context";
import { formatTokens } from "../models/status";
import { ContextBySizeResult, ContextItem, Methods } from "../protocol";
import { testLog } from "../testLog";

export async function pickContextItem(pi: PiContext, title: string): Promise<ContextItem | undefined> {
  const r = await customRequest<ContextBySizeResult>(pi, "Reading the context", Methods.contextBySize);
  if (!r) return undefined;
  type Item = vscode.QuickPickItem & { m: ContextItem };
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
