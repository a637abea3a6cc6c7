// Clearing old tool output (pi/clearToolOutput) and the compaction preview's coverage, in
// words: the texts of the confirmation, the results and the notification, and the choices for
// a dropped entity. Pure: no vscode import.

import type { ClearToolOutputResult, Coverage, Entity, ToolOutputCleared } from "../protocol";
import { formatTokens } from "./status";

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** "~1.2k": the token figures of a clear are estimates. */
export function approx(tokens: number): string {
  return `~${formatTokens(tokens)}`;
}

function oneLine(s: string, max: number): string {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** The question a dry run asks: "Clear 3 old tool results, saving ~12k tokens (context ~40k → ~28k)?" */
export function clearQuestion(r: ClearToolOutputResult): string {
  return `Clear ${plural(r.cleared.length, "old tool result")}, saving ${approx(r.saved)} tokens (context ${approx(r.tokensBefore)} → ${approx(r.tokensAfter)})?`;
}

/** The dry run's list, one line per result: "read notes.txt — ~4.1k tokens". */
export function clearDetail(r: ClearToolOutputResult, max = 20): string {
  const lines = r.cleared.slice(0, max).map((c) => `${c.toolName}${c.arguments ? ` ${oneLine(c.arguments, 80)}` : ""} — ${approx(c.tokens)} tokens`);
  if (r.cleared.length > max) lines.push(`… and ${r.cleared.length - max} more`);
  lines.push("", "Each result is replaced in the context by a placeholder naming the tool, its arguments and its size; the session history keeps the output, and Restore All Cleared Output brings it back.");
  return lines.join("\n");
}

export const NOTHING_TO_CLEAR =
  "Nothing to clear: no tool result outside the recent part of the context is large enough to be worth clearing.";

/** What a real clear (or restore) did. */
export function clearedText(r: ClearToolOutputResult): string {
  const n = r.cleared.length;
  if (r.restored) {
    if (n === 0) return "Nothing to restore: no tool output of the current path is cleared.";
    return `Restored ${plural(n, "cleared tool result")}: context ${approx(r.tokensBefore)} → ${approx(r.tokensAfter)} tokens.`;
  }
  if (n === 0) return NOTHING_TO_CLEAR;
  return `Cleared ${plural(n, "old tool result")}, saving ${approx(r.saved)} tokens: context ${approx(r.tokensBefore)} → ${approx(r.tokensAfter)} tokens.`;
}

/** pi/toolOutputCleared, the first tier of an automatic compaction. */
export function toolOutputClearedText(p: ToolOutputCleared): string {
  const what = `pi-lsp cleared ${plural(p.cleared.length, "old tool result")} (${approx(p.saved)} tokens)`;
  return p.compacting ? `${what}, then compacted: the context was still over the threshold.` : `${what} instead of compacting.`;
}

/** "carries 12 of 15 critical entities (80%)" */
export function coverageText(c: Coverage | undefined): string | undefined {
  if (!c || c.entities.length === 0) return undefined;
  const carried = c.entities.length - c.missing.length;
  return `carries ${carried} of ${plural(c.entities.length, "critical entity", "critical entities")} (${Math.round(c.covered * 100)}%)`;
}

/** One line per dropped entity: "file notes.txt". */
export function entityLabel(e: Entity): string {
  return `${e.kind} ${oneLine(e.text, 100)}`;
}

/** Pinning quotes the entity's message verbatim in every later summary; only a pinnable entity with its entry can be pinned. */
export function canPin(e: Entity): e is Entity & { entryId: string } {
  return e.pinnable === true && typeof e.entryId === "string" && e.entryId !== "";
}

/** The instructions with "Keep: <text>" added (once). */
export function keepInstructions(instructions: string | undefined, e: Entity): string {
  const keep = `Keep: ${oneLine(e.text, 300)}`;
  const base = (instructions ?? "").trim();
  if (base.includes(keep)) return base;
  return base ? `${base}\n${keep}` : keep;
}

export interface LensTitle {
  title: string;
  tooltip: string;
  /** Whether the lens runs "Keep a Dropped Entity…". */
  action: boolean;
}

/** The CodeLenses over a compaction preview: the coverage figure, then the entities it drops (at most a few named). */
export function coverageLensTitles(c: Coverage | undefined, named = 3): LensTitle[] {
  const cov = coverageText(c);
  if (!c || !cov) return [];
  const out: LensTitle[] = [{ title: `Pi: this summary ${cov}`, tooltip: "Files modified, commands, error strings, URLs, ids, the user's constraints and latest request of the summarized range", action: c.missing.length > 0 }];
  if (c.missing.length > 0) {
    const names = c.missing.slice(0, named).map((e) => `${e.kind} ${oneLine(e.text, 40)}`).join(", ");
    const more = c.missing.length > named ? ` and ${c.missing.length - named} more` : "";
    out.push({ title: `Dropped: ${names}${more} — Keep one…`, tooltip: "Pin its message, or add it to the instructions and preview again", action: true });
  }
  return out;
}
