// Status bar text and colour level from pi/contextUsage. Pure: no vscode import.
//
// Pi compacts automatically when the context exceeds the window minus the reserve
// (DEFAULT reserveTokens = 16384). The item turns "warning" when the context reaches
// WARNING_FRACTION of that threshold and "error" from the threshold on.

export const DEFAULT_RESERVE_TOKENS = 16384;
export const WARNING_FRACTION = 0.85;

export type StatusLevel = "normal" | "warning" | "error";

export interface StatusView {
  text: string;
  tooltip: string;
  level: StatusLevel;
}

export function formatTokens(n: number): string {
  if (!Number.isFinite(n) || n < 0) return "?";
  if (n < 1000) return String(Math.round(n));
  if (n < 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}

/** Token count at which Pi compacts by itself, for a window and reserve. */
export function compactionThreshold(contextWindow: number, reserveTokens = DEFAULT_RESERVE_TOKENS): number {
  if (!(contextWindow > 0)) return 0;
  const reserve = reserveTokens >= 0 && reserveTokens < contextWindow ? reserveTokens : DEFAULT_RESERVE_TOKENS;
  return Math.max(0, contextWindow - Math.min(reserve, contextWindow));
}

export function statusLevel(tokens: number, contextWindow: number, reserveTokens?: number): StatusLevel {
  const threshold = compactionThreshold(contextWindow, reserveTokens);
  if (threshold <= 0) return "normal";
  if (tokens >= threshold) return "error";
  if (tokens >= threshold * WARNING_FRACTION) return "warning";
  return "normal";
}

/** Marker appended to the status text while a background summary draft is ready. */
export const DRAFT_MARKER = "$(zap)";
export const DRAFT_TOOLTIP = "A summary draft is ready: compaction will be instant.";

/** pi/contextUsage as the status reads it: Pi's figure, or (null) Pi's estimate and which one it is. */
export interface UsageFigures {
  tokens: number | null;
  contextWindow: number;
  percent?: number | null;
  estimate?: number | null;
  source?: string;
}

export function statusView(
  usage: UsageFigures | undefined,
  reserveTokens?: number,
  draftReady = false,
): StatusView {
  const v = baseStatusView(usage, reserveTokens);
  if (!draftReady) return v;
  const lines = v.tooltip.split("\n");
  lines.splice(Math.max(1, lines.length - 1), 0, DRAFT_TOOLTIP);
  return { ...v, text: `${v.text} ${DRAFT_MARKER}`, tooltip: lines.join("\n") };
}

function baseStatusView(usage: UsageFigures | undefined, reserveTokens?: number): StatusView {
  if (!usage) {
    return { text: "$(pulse) Pi", tooltip: "Pi: no session context yet. Click to compact the session.", level: "normal" };
  }
  const known = typeof usage.tokens === "number" && Number.isFinite(usage.tokens);
  const estimate = usage.estimate;
  if (!known && typeof estimate === "number" && Number.isFinite(estimate)) {
    // Pi has no figure after a compaction until the next reply: show its estimate, marked "~".
    return figureView(estimate, usage.contextWindow, null, reserveTokens, true,
      "Pi's estimate (the sum of its messages' estimates): no reply since the compaction has reported usage yet; the next reply brings Pi's real figure.");
  }
  if (!known) {
    // Pi's own answer right after a compaction: the size is known again after the next reply.
    const win = usage.contextWindow > 0 ? formatTokens(usage.contextWindow) : "?";
    return {
      text: `$(pulse) Pi ?/${win}`,
      tooltip: "Pi context: unknown until the agent's next reply (the session was just compacted).\nClick to compact the session.",
      level: "normal",
    };
  }
  const estimated = usage.source === "estimate";
  return figureView(usage.tokens as number, usage.contextWindow, usage.percent, reserveTokens, estimated,
    estimated
      ? "Pi's estimate (the sum of its messages' estimates): no usage to rest on since the last context edit."
      : "From the last reply's usage (plus estimates of what follows it).");
}

function figureView(
  tokens: number,
  contextWindow: number,
  percent: number | null | undefined,
  reserveTokens: number | undefined,
  estimated: boolean,
  source: string,
): StatusView {
  const pct =
    typeof percent === "number" && Number.isFinite(percent) ? percent : contextWindow > 0 ? (tokens / contextWindow) * 100 : 0;
  const pctText = `${Math.round(pct)}%`;
  const level = statusLevel(tokens, contextWindow, reserveTokens);
  const threshold = compactionThreshold(contextWindow, reserveTokens);
  const win = contextWindow > 0 ? formatTokens(contextWindow) : "?";
  const approx = estimated ? "~" : "";
  const text = estimated && percent == null ? `$(pulse) Pi ~${formatTokens(tokens)}/${win}` : `$(pulse) Pi ${approx}${formatTokens(tokens)}/${win} (${pctText})`;
  const lines = [
    `Pi context: ${estimated ? "about " : ""}${tokens.toLocaleString("en-US")} of ${contextWindow.toLocaleString("en-US")} tokens (${pctText})`,
    source,
  ];
  if (threshold > 0) {
    lines.push(`Pi compacts automatically above ${threshold.toLocaleString("en-US")} tokens.`);
  }
  if (level === "error") lines.push("Over the compaction threshold: compact now.");
  else if (level === "warning") lines.push("Close to the compaction threshold.");
  lines.push("Click to compact the session.");
  return { text, tooltip: lines.join("\n"), level };
}

/**
 * Whether a background draft (pi/draftReady) is ready for the current session. The server drafts
 * the span a compaction would summarize and sends pi/draftReady when the draft is done; it sends
 * nothing when a draft goes stale, so the marker is cleared when the session's leaf moves (a
 * grown span is drafted again and announced again), when the session compacts, and when another
 * session becomes current.
 */
export class DraftTracker {
  private ready: { session: string; leafId: string | null | undefined; tokensBefore: number; incremental: boolean } | undefined;
  private leaves = new Map<string, string | null>();

  /** pi/sessionChanged, and every tree refresh: the session's current leaf. */
  leafMoved(session: string, leafId: string | null): void {
    const before = this.leaves.get(session);
    this.leaves.set(session, leafId);
    const r = this.ready;
    if (!r || r.session !== session) return;
    if (r.leafId === undefined) {
      // The draft arrived before the leaf was known: the first leaf seen is the draft's.
      if (before !== undefined && before !== leafId) this.ready = undefined;
      else r.leafId = leafId;
      return;
    }
    if (r.leafId !== leafId) this.ready = undefined;
  }

  /** pi/draftReady. */
  draftReady(p: { session: string; tokensBefore: number; incremental: boolean }): void {
    this.ready = { session: p.session, leafId: this.leaves.get(p.session), tokensBefore: p.tokensBefore, incremental: p.incremental };
  }

  /** A compaction of the session ended (pi/compactionEnd) or was committed. */
  compacted(session: string): void {
    if (this.ready?.session === session) this.ready = undefined;
  }

  clear(): void {
    this.ready = undefined;
  }

  /** Is a draft ready for this (current) session? */
  readyFor(session: string | undefined): boolean {
    return !!session && this.ready?.session === session;
  }
}
