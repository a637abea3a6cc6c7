// Showing a written compaction summary: used by the compaction, context and preview
// commands alike (a module of its own, so none of them imports another for it).

import * as vscode from "vscode";
import { testLog } from "../testLog";

/** Opens a compaction's summary as a Markdown document. */
export async function openSummary(summary: string, id: string, tokensBefore: number): Promise<void> {
  const content = `<!-- Pi compaction ${id}: ${tokensBefore} tokens before -->\n\n${summary}\n`;
  const doc = await vscode.workspace.openTextDocument({ language: "markdown", content });
  await vscode.window.showTextDocument(doc, { preview: true });
  testLog("summaryOpened", { id });
}
