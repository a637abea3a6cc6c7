import { test } from "node:test";
import * as assert from "node:assert/strict";
import { eventLabel, kindTitle, pictureFigures, renderPicture } from "../models/contextPicture";
import type { ContextBreakdownResult } from "../protocol";

const answer: ContextBreakdownResult = {
  session: "/s/2026_abc.jsonl",
  leafId: "e5",
  total: 1500,
  usageTokens: null,
  contextWindow: 128000,
  reserveTokens: 16384,
  threshold: 111616,
  kinds: [
    { kind: "system", tokens: 1000, entries: 1, largest: [{ entryId: "e0", tokens: 1000, preview: "(system prompt)" }] },
    { kind: "toolResult:read", tokens: 300, entries: 2, largest: [{ entryId: "e2", tokens: 200, preview: "<script>alert(1)</script>" }, { entryId: "e3", tokens: 100, preview: "b" }] },
    { kind: "compactionSummary", tokens: 200, entries: 1, largest: [{ entryId: "e4", tokens: 200, preview: "## Goal" }] },
  ],
  history: [
    { entryId: "e1", tokens: 900, source: "usage", event: null },
    { entryId: "e4", tokens: 1500, source: "estimate", event: "compaction", tokensBefore: 4000 },
    { entryId: "e5", tokens: 1400, source: "estimate", event: "context_edit", cleared: true },
  ],
};

test("the picture has every figure as text, one segment per kind, a marker per event", () => {
  const html = renderPicture(answer);
  for (const k of answer.kinds) {
    assert.match(html, new RegExp(`<tr data-kind="${k.kind}">.*?<td class="n tokens">${k.tokens.toLocaleString("en-US")}</td>`));
    assert.match(html, new RegExp(`<rect class="seg" data-kind="${k.kind}" data-entry="${k.largest[0]!.entryId}"`));
  }
  assert.equal((html.match(/<rect class="seg"/g) ?? []).length, 3);
  assert.match(html, /id="kinds-total">1,500</);
  assert.match(html, /Pi compacts above <span id="threshold" data-tokens="111616">111,616<\/span>/);
  assert.equal((html.match(/<circle class="ev /g) ?? []).length, 2);
  assert.match(html, /<circle class="ev clear" data-entry="e5"/);
  assert.match(html, /Compaction e4: 4,000 → 1,500 tokens/);
  assert.ok(!html.includes("<script>"), "previews are escaped");
  assert.match(html, /data-command="pi.clearToolOutput"/);
  assert.match(html, /data-command="pi.compact"/);
});

test("titles and figures", () => {
  assert.match(kindTitle(answer.kinds[1]!, answer.total), /^toolResult:read: 300 tokens \(20\.0% of the context\), 2 entries\n  e2  200/);
  assert.equal(eventLabel(answer.history![0]!), "Reply e1: 900 tokens (usage Pi recorded)");
  assert.deepEqual(pictureFigures(answer), {
    total: 1500,
    kinds: [
      { kind: "system", tokens: 1000, entries: 1 },
      { kind: "toolResult:read", tokens: 300, entries: 2 },
      { kind: "compactionSummary", tokens: 200, entries: 1 },
    ],
    points: 3,
    events: 2,
  });
});
