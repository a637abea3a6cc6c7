import { test } from "node:test";
import * as assert from "node:assert/strict";
import type { ClearToolOutputResult, Coverage } from "../protocol";
import {
  canPin,
  clearDetail,
  clearedText,
  clearQuestion,
  coverageLensTitles,
  coverageText,
  entityLabel,
  keepInstructions,
  NOTHING_TO_CLEAR,
  toolOutputClearedText,
} from "../models/clear";

function result(extra: Partial<ClearToolOutputResult> = {}): ClearToolOutputResult {
  return {
    session: "/s.jsonl",
    leafId: "l",
    cleared: [
      { entryId: "a1", toolName: "read", arguments: '{"path":"notes.txt"}', tokens: 4100, tokensAfter: 40 },
      { entryId: "a2", toolName: "bash", arguments: '{"command":"go test ./...\\n -v"}', tokens: 8000, tokensAfter: 45 },
    ],
    saved: 12015,
    tokensBefore: 40200,
    tokensAfter: 28185,
    dryRun: true,
    restored: false,
    ...extra,
  };
}

test("the clear's question lists each tool, its arguments and its tokens", () => {
  assert.equal(clearQuestion(result()), "Clear 2 old tool results, saving ~12k tokens (context ~40k → ~28k)?");
  assert.equal(clearQuestion(result({ cleared: result().cleared.slice(0, 1) })).startsWith("Clear 1 old tool result,"), true);
  const d = clearDetail(result());
  assert.match(d, /^read \{"path":"notes.txt"\} — ~4.1k tokens\nbash \{"command":"go test \.\/\.\.\.\\n -v"\} — ~8k tokens\n/);
  assert.match(d, /Restore All Cleared Output/);
  const many = result({ cleared: Array.from({ length: 25 }, (_, i) => ({ entryId: `e${i}`, toolName: "read", arguments: "", tokens: 300, tokensAfter: 30 })) });
  assert.match(clearDetail(many), /… and 5 more/);
});

test("what a clear, a restore and nothing to do say", () => {
  assert.equal(clearedText(result({ dryRun: false })), "Cleared 2 old tool results, saving ~12k tokens: context ~40k → ~28k tokens.");
  assert.equal(clearedText(result({ cleared: [], saved: 0 })), NOTHING_TO_CLEAR);
  assert.equal(clearedText(result({ restored: true, saved: -12015, tokensBefore: 28185, tokensAfter: 40200 })), "Restored 2 cleared tool results: context ~28k → ~40k tokens.");
  assert.match(clearedText(result({ restored: true, cleared: [] })), /^Nothing to restore/);
});

test("pi/toolOutputCleared: instead of compacting, or then compacted", () => {
  const p = { ...result({ dryRun: false }), reason: "threshold" as const, compacting: false };
  assert.equal(toolOutputClearedText(p), "pi-lsp cleared 2 old tool results (~12k tokens) instead of compacting.");
  assert.match(toolOutputClearedText({ ...p, compacting: true }), /^pi-lsp cleared 2 old tool results \(~12k tokens\), then compacted/);
});

test("coverage: the figure, the lenses, pin or instructions", () => {
  const cov: Coverage = {
    entities: [
      { kind: "file", text: "notes.txt" },
      { kind: "command", text: "go test ./..." },
      { kind: "constraint", text: "never touch the CLI flags", entryId: "u1", pinnable: true },
      { kind: "url", text: "https://example.com/a", entryId: "a9" },
    ],
    missing: [
      { kind: "constraint", text: "never touch the CLI flags", entryId: "u1", pinnable: true },
      { kind: "url", text: "https://example.com/a", entryId: "a9" },
    ],
    covered: 0.5,
  };
  assert.equal(coverageText(cov), "carries 2 of 4 critical entities (50%)");
  assert.equal(coverageText({ entities: [], missing: [], covered: 1 }), undefined);
  assert.equal(coverageText(undefined), undefined);
  const lenses = coverageLensTitles(cov);
  assert.deepEqual(lenses.map((l) => [l.title, l.action]), [
    ["Pi: this summary carries 2 of 4 critical entities (50%)", true],
    ["Dropped: constraint never touch the CLI flags, url https://example.com/a — Keep one…", true],
  ]);
  assert.deepEqual(coverageLensTitles({ ...cov, missing: [], covered: 1 }).map((l) => [l.title, l.action]), [["Pi: this summary carries 4 of 4 critical entities (100%)", false]]);
  assert.equal(entityLabel(cov.missing[1]!), "url https://example.com/a");
  assert.equal(canPin(cov.missing[0]!), true);
  assert.equal(canPin(cov.missing[1]!), false, "not a user message: not pinnable");
  assert.equal(canPin({ kind: "file", text: "x", entryId: "", pinnable: true }), false);
  assert.equal(keepInstructions(undefined, cov.missing[1]!), "Keep: https://example.com/a");
  assert.equal(keepInstructions("Keep the parser decisions", cov.missing[1]!), "Keep the parser decisions\nKeep: https://example.com/a");
  assert.equal(keepInstructions("Keep: https://example.com/a", cov.missing[1]!), "Keep: https://example.com/a", "added once");
});
