// The context picture of the Pi: Show Context Picture panel, from pi/contextBreakdown, as HTML
// with plain SVG (no chart library: two charts of a few hundred points need none, and the panel
// stays a few kilobytes with nothing to load from the network). Pure: no vscode import.
//
// Colours are VS Code's chart colour variables (--vscode-charts-*), so the picture follows the
// theme; every figure of a chart is also in the text beside it (tables, the titles of the
// shapes, aria labels), so nothing depends on colour or on a pointer.

import type { ContextBreakdownResult, KindTokens, SizePoint } from "../protocol";
import { formatTokens } from "./status";

/** The chart colour variable of a kind (tool results share one, summaries another). */
export function kindColour(kind: string): string {
  if (kind === "system") return "var(--vscode-charts-purple)";
  if (kind === "user") return "var(--vscode-charts-blue)";
  if (kind === "assistant") return "var(--vscode-charts-green)";
  if (kind === "thinking") return "var(--vscode-charts-lines)";
  if (kind === "toolCall") return "var(--vscode-charts-yellow)";
  if (kind.startsWith("toolResult:")) return "var(--vscode-charts-orange)";
  if (kind === "compactionSummary" || kind === "branchSummary") return "var(--vscode-charts-red)";
  return "var(--vscode-charts-foreground)";
}

export function escapeHTML(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const pct = (n: number, of: number) => (of > 0 ? (100 * n) / of : 0);
const pctText = (n: number, of: number) => `${pct(n, of).toFixed(1)}%`;
const num = (n: number) => Math.round(n).toLocaleString("en-US");

/** The text of a kind's hover: its figures and its largest entries. */
export function kindTitle(k: KindTokens, total: number): string {
  const lines = [`${k.kind}: ${num(k.tokens)} tokens (${pctText(k.tokens, total)} of the context), ${k.entries} ${k.entries === 1 ? "entry" : "entries"}`];
  for (const e of k.largest ?? []) lines.push(`  ${e.entryId}  ${num(e.tokens)}  ${e.preview}`);
  if ((k.largest ?? []).length) lines.push("Click to reveal the largest in the tree.");
  return lines.join("\n");
}

/** The label of an event point. */
export function eventLabel(p: SizePoint): string {
  if (p.event === "compaction") return `Compaction ${p.entryId}: ${num(p.tokensBefore ?? 0)} → ${num(p.tokens)} tokens`;
  if (p.event === "branch_summary") return `Branch summary ${p.entryId}: ${num(p.tokens)} tokens after`;
  if (p.event === "context_edit") return `${p.cleared ? "Tool output cleared" : "Context edit"} ${p.entryId}: ${num(p.tokens)} tokens after`;
  return `Reply ${p.entryId}: ${num(p.tokens)} tokens (${p.source === "usage" ? "usage Pi recorded" : "Pi's estimate"})`;
}

/** The "now" bar: one segment per kind, then free space up to the threshold, then the reserve. */
function nowBar(r: ContextBreakdownResult): string {
  const W = 1000;
  const window = Math.max(r.contextWindow, r.total, 1);
  let x = 0;
  const segs: string[] = [];
  for (const k of r.kinds) {
    const w = (k.tokens / window) * W;
    segs.push(
      `<rect class="seg" data-kind="${escapeHTML(k.kind)}" data-entry="${escapeHTML(k.largest?.[0]?.entryId ?? "")}" tabindex="0" role="button" ` +
        `aria-label="${escapeHTML(kindTitle(k, r.total))}" x="${x.toFixed(2)}" y="0" width="${Math.max(w, 0.5).toFixed(2)}" height="40" fill="${kindColour(k.kind)}">` +
        `<title>${escapeHTML(kindTitle(k, r.total))}</title></rect>`,
    );
    x += w;
  }
  const thresholdX = r.threshold !== null && r.threshold !== undefined ? (r.threshold / window) * W : W;
  if (thresholdX > x) {
    const free = (r.threshold ?? r.contextWindow) - r.total;
    segs.push(`<rect class="free" x="${x.toFixed(2)}" y="0" width="${(thresholdX - x).toFixed(2)}" height="40"><title>free: ${num(free)} tokens before Pi compacts</title></rect>`);
  }
  if (r.threshold !== null && r.threshold !== undefined) {
    segs.push(`<rect class="reserve" x="${thresholdX.toFixed(2)}" y="0" width="${(W - thresholdX).toFixed(2)}" height="40"><title>reserve: ${num(r.reserveTokens)} tokens</title></rect>`);
    segs.push(`<line class="threshold" x1="${thresholdX.toFixed(2)}" x2="${thresholdX.toFixed(2)}" y1="-4" y2="44"><title>Pi compacts above ${num(r.threshold)} tokens</title></line>`);
  }
  const label = `The context now: ${num(r.total)} of ${num(r.contextWindow)} tokens (${pctText(r.total, r.contextWindow)})` + (r.threshold !== null && r.threshold !== undefined ? `, Pi compacts above ${num(r.threshold)}` : "");
  return `<svg id="now-bar" class="bar" viewBox="0 -6 ${W} 52" preserveAspectRatio="none" role="img" aria-label="${escapeHTML(label)}">${segs.join("")}</svg>`;
}

/** The "over time" chart: the size after each reply, the events marked, the threshold line. */
function overTime(r: ContextBreakdownResult): string {
  const h = r.history ?? [];
  if (h.length === 0) return `<p class="muted">No reply on this path yet.</p>`;
  const W = 1000;
  const H = 200;
  const peak = Math.max(...h.map((p) => p.tokens), 1);
  const threshold = r.threshold ?? undefined;
  const thresholdShown = threshold !== undefined && threshold <= peak * 3;
  const top = thresholdShown ? Math.max(peak, threshold!) * 1.08 : peak * 1.15;
  const xOf = (i: number) => (h.length === 1 ? W / 2 : (i / (h.length - 1)) * (W - 20) + 10);
  const yOf = (t: number) => H - (t / top) * (H - 10);
  const line = h.map((p, i) => `${xOf(i).toFixed(1)},${yOf(p.tokens).toFixed(1)}`).join(" ");
  const parts = [`<polyline class="size" points="${line}" />`];
  if (thresholdShown) {
    const y = yOf(threshold!).toFixed(1);
    parts.push(`<line class="threshold" x1="0" x2="${W}" y1="${y}" y2="${y}"><title>Pi compacts above ${num(threshold!)} tokens</title></line>`);
  }
  h.forEach((p, i) => {
    const cls = p.event ? (p.event === "context_edit" && p.cleared ? "ev clear" : `ev ${p.event}`) : `pt ${p.source}`;
    const r0 = p.event ? 7 : 3.5;
    parts.push(
      `<circle class="${cls}" data-entry="${escapeHTML(p.entryId)}" tabindex="0" role="button" aria-label="${escapeHTML(eventLabel(p))}" ` +
        `cx="${xOf(i).toFixed(1)}" cy="${yOf(p.tokens).toFixed(1)}" r="${r0}"><title>${escapeHTML(eventLabel(p))}</title></circle>`,
    );
    if (p.event === "compaction" && p.tokensBefore !== undefined) {
      parts.push(`<line class="drop" x1="${xOf(i).toFixed(1)}" x2="${xOf(i).toFixed(1)}" y1="${yOf(p.tokensBefore).toFixed(1)}" y2="${yOf(p.tokens).toFixed(1)}" />`);
    }
  });
  const note = threshold !== undefined && !thresholdShown ? ` Pi compacts above ${num(threshold)} tokens, far above this chart's scale.` : "";
  return (
    `<svg id="over-time" class="chart" viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" role="img" ` +
    `aria-label="${escapeHTML(`The context's size after each of ${h.length} points of the path, peak ${num(peak)} tokens.${note}`)}">${parts.join("")}</svg>` +
    `<p class="muted">Peak ${num(peak)} tokens, now ${num(h[h.length - 1]!.tokens)} (${h[h.length - 1]!.source === "usage" ? "usage" : "estimate"}).${note}</p>`
  );
}

/** The whole picture (the body of the panel's page). */
export function renderPicture(r: ContextBreakdownResult): string {
  const sessionName = r.session.split(/[\\/]/).pop() ?? r.session;
  const head =
    `<h1>Context of <span class="mono">${escapeHTML(sessionName)}</span></h1>` +
    `<p id="summary"><span id="total" data-tokens="${r.total}">${num(r.total)}</span> tokens (Pi's estimate) of the ` +
    `<span id="window" data-tokens="${r.contextWindow}">${num(r.contextWindow)}</span> window (${pctText(r.total, r.contextWindow)}); ` +
    (r.usageTokens !== null && r.usageTokens !== undefined ? `last reply's usage ${num(r.usageTokens)}; ` : `no usage to trust since the last compaction or edit; `) +
    (r.threshold !== null && r.threshold !== undefined
      ? `Pi compacts above <span id="threshold" data-tokens="${r.threshold}">${num(r.threshold)}</span> (reserve ${num(r.reserveTokens)}), ${num(Math.max(0, r.threshold - r.total))} to go.`
      : `automatic compaction is off.`) +
    `</p>`;
  const actions =
    `<div class="actions">` +
    `<button data-command="pi.clearToolOutput">Clear old tool output…</button>` +
    `<button data-command="pi.contextBySize">Hide an entry…</button>` +
    `<button data-command="pi.previewCompaction">Preview compaction</button>` +
    `<button data-command="pi.compact">Compact…</button>` +
    `</div>`;
  const rows = r.kinds
    .map(
      (k) =>
        `<tr data-kind="${escapeHTML(k.kind)}"><td><span class="swatch" style="background:${kindColour(k.kind)}"></span>${escapeHTML(k.kind)}</td>` +
        `<td class="n tokens">${num(k.tokens)}</td><td class="n share">${pctText(k.tokens, r.total)}</td><td class="n entries">${k.entries}</td></tr>`,
    )
    .join("");
  const free = r.threshold !== null && r.threshold !== undefined ? Math.max(0, r.threshold - r.total) : Math.max(0, r.contextWindow - r.total);
  const table =
    `<table id="kinds"><thead><tr><th>kind</th><th class="n">tokens</th><th class="n">share</th><th class="n">entries</th></tr></thead><tbody>${rows}</tbody>` +
    `<tfoot><tr><td>total</td><td class="n" id="kinds-total">${num(r.total)}</td><td class="n">${pctText(r.total, r.contextWindow)} of the window</td><td></td></tr>` +
    `<tr class="muted"><td>free</td><td class="n">${num(free)}</td><td class="n">${pctText(free, r.contextWindow)}</td><td></td></tr>` +
    `<tr class="muted"><td>reserve</td><td class="n">${num(r.reserveTokens)}</td><td class="n">${pctText(r.reserveTokens, r.contextWindow)}</td><td></td></tr></tfoot></table>`;
  const all = r.kinds.flatMap((k) => (k.largest ?? []).map((e) => ({ ...e, kind: k.kind }))).sort((a, b) => b.tokens - a.tokens).slice(0, 10);
  const largest =
    `<ol id="largest">` +
    all
      .map(
        (e) =>
          `<li><a href="#" data-entry="${escapeHTML(e.entryId)}" title="Reveal ${escapeHTML(e.entryId)} in the tree">${escapeHTML(e.entryId)}</a> ` +
          `<span class="n">${num(e.tokens)}</span> <span class="kind">${escapeHTML(e.kind)}</span> <span class="preview">${escapeHTML(e.preview)}</span></li>`,
      )
      .join("") +
    `</ol>`;
  const events = (r.history ?? []).filter((p) => p.event);
  const eventList = events.length
    ? `<ul id="events">${events.map((p) => `<li><a href="#" data-entry="${escapeHTML(p.entryId)}">${escapeHTML(eventLabel(p))}</a></li>`).join("")}</ul>`
    : `<p class="muted">No compaction, branch summary or context edit on this path.</p>`;
  const legend =
    `<p class="legend muted"><span class="mark compaction"></span> compaction <span class="mark branch_summary"></span> branch summary ` +
    `<span class="mark context_edit"></span> context edit <span class="mark clear"></span> tool output cleared <span class="mark threshold"></span> threshold</p>`;
  return (
    head +
    actions +
    `<h2>Now</h2>` +
    nowBar(r) +
    table +
    `<h2>Largest entries</h2>` +
    largest +
    `<h2>Over time</h2>` +
    overTime(r) +
    legend +
    eventList
  );
}

/** What the panel shows, as figures: for the test log (the e2e test compares them with the server's). */
export function pictureFigures(r: ContextBreakdownResult): { total: number; kinds: { kind: string; tokens: number; entries: number }[]; points: number; events: number } {
  return {
    total: r.total,
    kinds: r.kinds.map((k) => ({ kind: k.kind, tokens: k.tokens, entries: k.entries })),
    points: (r.history ?? []).length,
    events: (r.history ?? []).filter((p) => p.event).length,
  };
}

/** formatTokens, for the panel's title. */
export const shortTokens = formatTokens;
