import { test } from "node:test";
import * as assert from "node:assert/strict";
import { compactionThreshold, formatTokens, statusLevel, statusView, DEFAULT_RESERVE_TOKENS, DRAFT_MARKER, DraftTracker, WARNING_FRACTION } from "../models/status";

test("formatTokens", () => {
  assert.equal(formatTokens(0), "0");
  assert.equal(formatTokens(950), "950");
  assert.equal(formatTokens(1000), "1k");
  assert.equal(formatTokens(1234), "1.2k");
  assert.equal(formatTokens(12_345), "12k");
  assert.equal(formatTokens(200_000), "200k");
  assert.equal(formatTokens(1_500_000), "1.5M");
  assert.equal(formatTokens(Number.NaN), "?");
});

test("threshold is the window minus the reserve", () => {
  assert.equal(compactionThreshold(200_000), 200_000 - DEFAULT_RESERVE_TOKENS);
  assert.equal(compactionThreshold(200_000, 50_000), 150_000);
  assert.equal(compactionThreshold(0), 0);
  assert.equal(compactionThreshold(10_000, 20_000), 0); // reserve larger than the window: default reserve, floored at 0
});

test("colour levels around the threshold", () => {
  const win = 100_000;
  const thr = win - DEFAULT_RESERVE_TOKENS; // 83616
  assert.equal(statusLevel(0, win), "normal");
  assert.equal(statusLevel(Math.floor(thr * WARNING_FRACTION) - 1, win), "normal");
  assert.equal(statusLevel(Math.ceil(thr * WARNING_FRACTION), win), "warning");
  assert.equal(statusLevel(thr - 1, win), "warning");
  assert.equal(statusLevel(thr, win), "error");
  assert.equal(statusLevel(150_000, win), "error");
  assert.equal(statusLevel(60_000, win, 50_000), "error"); // a bigger reserve moves the threshold down
  assert.equal(statusLevel(5, 0), "normal"); // unknown window
});

test("status text and tooltip", () => {
  const v = statusView({ tokens: 12_345, contextWindow: 200_000, percent: 6.17 });
  assert.equal(v.text, "$(pulse) Pi 12k/200k (6%)");
  assert.equal(v.level, "normal");
  assert.match(v.tooltip, /12,345 of 200,000 tokens/);
  assert.match(v.tooltip, /Click to compact/);
  const w = statusView({ tokens: 190_000, contextWindow: 200_000, percent: 95 });
  assert.equal(w.level, "error");
  assert.match(w.tooltip, /compact now/);
  const noPct = statusView({ tokens: 50_000, contextWindow: 100_000 } as never);
  assert.equal(noPct.text, "$(pulse) Pi 50k/100k (50%)");
  assert.equal(statusView(undefined).text, "$(pulse) Pi");
  // Pi reports tokens: null right after a compaction (unknown until the next reply)
  const unknown = statusView({ tokens: null, contextWindow: 128_000, percent: null });
  assert.equal(unknown.text, "$(pulse) Pi ?/128k");
  assert.equal(unknown.level, "normal");
  assert.match(unknown.tooltip, /unknown until the agent's next reply/);
  // pi-lsp adds Pi's estimate: shown, marked as one, never "?"
  const est = statusView({ tokens: null, contextWindow: 128_000, percent: null, estimate: 227, source: "estimate" });
  assert.equal(est.text, "$(pulse) Pi ~227/128k");
  assert.match(est.tooltip, /about 227 of 128,000 tokens/);
  assert.match(est.tooltip, /Pi's estimate.*next reply brings Pi's real figure/);
  const edited = statusView({ tokens: 5_000, contextWindow: 128_000, percent: 3.9, estimate: null, source: "estimate" });
  assert.equal(edited.text, "$(pulse) Pi ~5k/128k (4%)");
  const real = statusView({ tokens: 5_000, contextWindow: 128_000, percent: 3.9, estimate: null, source: "usage" });
  assert.equal(real.text, "$(pulse) Pi 5k/128k (4%)");
  assert.match(real.tooltip, /last reply's usage/);
});

test("a ready draft adds a marker and a tooltip line", () => {
  const v = statusView({ tokens: 66_560, contextWindow: 128_000, percent: 52 }, undefined, true);
  assert.equal(v.text, `$(pulse) Pi 67k/128k (52%) ${DRAFT_MARKER}`);
  assert.match(v.tooltip, /a summary draft is ready: compaction will be instant/i);
  assert.match(v.tooltip, /Click to compact the session\.$/);
  assert.equal(statusView({ tokens: 66_560, contextWindow: 128_000, percent: 52 }, undefined, false).text, "$(pulse) Pi 67k/128k (52%)");
  assert.equal(statusView(undefined, undefined, true).text, `$(pulse) Pi ${DRAFT_MARKER}`);
});

test("DraftTracker: ready for its session until the leaf moves, a compaction, or clear", () => {
  const d = new DraftTracker();
  d.leafMoved("/s/a.jsonl", "L1");
  assert.equal(d.readyFor("/s/a.jsonl"), false);
  d.draftReady({ session: "/s/a.jsonl", tokensBefore: 80_000, incremental: false });
  assert.equal(d.readyFor("/s/a.jsonl"), true);
  assert.equal(d.readyFor("/s/b.jsonl"), false); // another session is current
  assert.equal(d.readyFor(undefined), false);
  d.leafMoved("/s/a.jsonl", "L1"); // a refresh with the same leaf keeps it
  d.leafMoved("/s/b.jsonl", "X"); // other sessions do not matter
  assert.equal(d.readyFor("/s/a.jsonl"), true);
  d.leafMoved("/s/a.jsonl", "L2"); // the span grew: the draft is stale until the next pi/draftReady
  assert.equal(d.readyFor("/s/a.jsonl"), false);
  d.draftReady({ session: "/s/a.jsonl", tokensBefore: 81_000, incremental: true });
  assert.equal(d.readyFor("/s/a.jsonl"), true);
  d.compacted("/s/b.jsonl");
  assert.equal(d.readyFor("/s/a.jsonl"), true);
  d.compacted("/s/a.jsonl");
  assert.equal(d.readyFor("/s/a.jsonl"), false);
  // a draft that arrives before the leaf is known takes the first leaf seen
  const e = new DraftTracker();
  e.draftReady({ session: "/s/c.jsonl", tokensBefore: 1, incremental: false });
  e.leafMoved("/s/c.jsonl", "K1");
  assert.equal(e.readyFor("/s/c.jsonl"), true);
  e.leafMoved("/s/c.jsonl", "K2");
  assert.equal(e.readyFor("/s/c.jsonl"), false);
  e.draftReady({ session: "/s/c.jsonl", tokensBefore: 1, incremental: false });
  e.clear();
  assert.equal(e.readyFor("/s/c.jsonl"), false);
});
