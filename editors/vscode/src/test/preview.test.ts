import { test } from "node:test";
import * as assert from "node:assert/strict";
import type { BranchSummaryPreview, CompactionPreview } from "../protocol";
import {
  AUTO_SAVE_TEXT,
  BranchDraft,
  commitCompactionParams,
  commitProblem,
  committedMessage,
  CompactionDraft,
  documentText,
  missingPinned,
  navigateSummaryParams,
  parsePreviewPath,
  pinnedDroppedText,
  PREVIEW_SCHEME,
  previewOpenedMessage,
  previewPath,
  PreviewStore,
  safeSegment,
  saveCommits,
  sessionChangedText,
  sessionIdOf,
} from "../models/preview";

const SESSION = "/home/me/.pi/agent/sessions/--home-me-proj--/2026-11-29T12-00-00-000Z_01a22765-e894-73b5-a941-59e0b228f617.jsonl";

function compaction(extra: Partial<CompactionPreview> = {}): CompactionDraft {
  return {
    kind: "compaction",
    preview: {
      session: SESSION,
      spanKey: "span-1",
      firstKeptEntryId: "k1",
      isSplitTurn: false,
      messagesToSummarize: 12,
      keptMessages: 3,
      tokensBefore: 1401,
      tokensAfter: 320,
      summary: "## Goal\nKeep notes.\n",
      audit: { fileBlocksIntact: true },
      fromDraft: false,
      pinned: [],
      coverage: { entities: [], missing: [], covered: 1 },
      ...extra,
    },
  };
}

function branch(extra: Partial<BranchSummaryPreview> = {}): BranchDraft {
  return {
    kind: "branch",
    leafId: "leaf1",
    // No leafId: a preview from a server that did not send one.
    preview: { session: SESSION, targetId: "abf5b989", commonAncestorId: "x", entries: 4, summary: "The user explored…", ...extra } as BranchSummaryPreview,
  };
}

test("document naming: pi-summary:/compaction/<session-id>.md and /branch/<session-id>/<target>.md", () => {
  assert.equal(PREVIEW_SCHEME, "pi-summary");
  assert.equal(sessionIdOf(SESSION), "01a22765-e894-73b5-a941-59e0b228f617");
  assert.equal(sessionIdOf("/x/plain.jsonl"), "plain");
  assert.equal(previewPath(compaction()), "/compaction/01a22765-e894-73b5-a941-59e0b228f617.md");
  assert.equal(previewPath(branch()), "/branch/01a22765-e894-73b5-a941-59e0b228f617/abf5b989.md");
  assert.deepEqual(parsePreviewPath(previewPath(compaction())), { kind: "compaction", sessionId: "01a22765-e894-73b5-a941-59e0b228f617" });
  assert.deepEqual(parsePreviewPath(previewPath(branch())), { kind: "branch", sessionId: "01a22765-e894-73b5-a941-59e0b228f617", targetId: "abf5b989" });
  assert.equal(parsePreviewPath("/compaction/a/b.md"), undefined);
  assert.equal(parsePreviewPath("/other.md"), undefined);
  assert.equal(safeSegment("a/b\\c:d?e"), "a-b-c-d-e");
  assert.equal(previewPath(branch({ targetId: "../../etc" })), "/branch/01a22765-e894-73b5-a941-59e0b228f617/..-..-etc.md");
});

test("the document opens with exactly the summary (an unchanged save is not an edit)", () => {
  assert.equal(documentText(compaction()), "## Goal\nKeep notes.\n");
  assert.equal(documentText(branch()), "The user explored…");
});

test("commit params: the text, the span key, the preview's instructions, acceptDroppedPins only when accepted", () => {
  const d = compaction();
  assert.deepEqual(commitCompactionParams(d, "edited"), { session: SESSION, summary: "edited", spanKey: "span-1" });
  d.instructions = "focus on tests";
  assert.deepEqual(commitCompactionParams(d, "edited", true), {
    session: SESSION,
    summary: "edited",
    spanKey: "span-1",
    instructions: "focus on tests",
    acceptDroppedPins: true,
  });
  assert.deepEqual(navigateSummaryParams(branch(), "my summary"), { session: SESSION, targetId: "abf5b989", summarize: true, summary: "my summary", expectLeafId: "leaf1" });
  // the server's own leafId of the preview wins; a null leaf sends no expectLeafId
  assert.equal(navigateSummaryParams(branch({ leafId: "srv" }), "t").expectLeafId, "srv");
  assert.equal("expectLeafId" in navigateSummaryParams(branch({ leafId: null }), "t"), false);
  const b = branch();
  b.instructions = "short";
  assert.equal(navigateSummaryParams(b, "t").instructions, "short");
});

test("only explicit saves commit (auto-save keeps the text)", () => {
  assert.equal(saveCommits(1), true);
  assert.equal(saveCommits(undefined), true);
  assert.equal(saveCommits(2), false);
  assert.equal(saveCommits(3), false);
  assert.match(AUTO_SAVE_TEXT, /only an explicit Save/);
});

test("empty summaries are not committed; pinned texts a summary drops", () => {
  assert.match(commitProblem("  \n ") ?? "", /empty/);
  assert.equal(commitProblem("x"), undefined);
  assert.deepEqual(missingPinned("quote: keep the CLI flags", ["keep the CLI flags", "never drop\nthis"]), ["never drop\nthis"]);
  assert.deepEqual(missingPinned("never drop this", ["never drop\nthis"]), []);
  assert.deepEqual(missingPinned("x", null), []);
  assert.match(pinnedDroppedText(["keep the CLI flags"]), /does not quote a pinned message: "keep the CLI flags"/);
  assert.match(pinnedDroppedText(["a", "b"]), /2 pinned messages/);
});

test("messages", () => {
  assert.equal(
    committedMessage({ entry: { type: "compaction", id: "c", parentId: null, timestamp: "", summary: "s", firstKeptEntryId: "k", tokensBefore: 1401 }, tokensBefore: 1401, tokensAfter: 320, audit: { fileBlocksIntact: true } }, true),
    "Compacted the session with your edited summary: 1.4k → 320 tokens.",
  );
  assert.match(previewOpenedMessage(compaction({ fromDraft: true })), /from the background draft.*12 messages summarized, 3 kept, 1.4k → 320 tokens.*save \(Ctrl\+S\)/);
  assert.match(previewOpenedMessage(branch()), /4 entries.*move to abf5b989/);
  // The coverage figure and what to do about a dropped entity.
  const cov = { entities: [{ kind: "file", text: "notes.txt" }, { kind: "command", text: "go test ./..." }, { kind: "error", text: "exit 1" }], missing: [{ kind: "error", text: "exit 1", entryId: "u1", pinnable: true }], covered: 2 / 3 };
  assert.match(previewOpenedMessage(compaction({ coverage: cov })), /The summary carries 2 of 3 critical entities \(67%\)\. It drops 1: "Pi: Keep a Dropped Entity…"/);
  assert.doesNotMatch(previewOpenedMessage(compaction()), /critical entit/);
  assert.match(sessionChangedText("compaction"), /Preview Compaction" again/);
  assert.match(sessionChangedText("branch"), /again/);
});

test("PreviewStore: put, write (committed), strictly increasing mtimes, delete", () => {
  const s = new PreviewStore();
  const p = s.put(compaction(), 1000);
  assert.equal(p, "/compaction/01a22765-e894-73b5-a941-59e0b228f617.md");
  const first = s.get(p)!;
  assert.equal(first.content, "## Goal\nKeep notes.\n");
  assert.equal(first.committed, false);
  const m0 = first.mtime;
  s.write(p, "edited", true, 1000);
  assert.equal(s.get(p)!.content, "edited");
  assert.equal(s.get(p)!.committed, true);
  assert.ok(s.get(p)!.mtime > m0);
  // a new preview of the same session replaces the document
  s.put(compaction({ summary: "new" }), 1000);
  assert.equal(s.get(p)!.content, "new");
  assert.equal(s.get(p)!.committed, false);
  assert.equal(s.write("/nope.md", "x", true), undefined);
  s.put(branch());
  assert.equal(s.paths().length, 2);
  assert.equal(s.delete(p), true);
  assert.deepEqual(s.paths(), ["/branch/01a22765-e894-73b5-a941-59e0b228f617/abf5b989.md"]);
});

test("PreviewStore.lastCompaction: the newest compaction preview not committed", () => {
  const s = new PreviewStore();
  assert.equal(s.lastCompaction(), undefined);
  const a = compaction();
  const b = compaction({ session: SESSION.replace("01a22765", "02b33876") });
  s.put(a, 1000);
  const pb = s.put(b, 2000);
  s.put(branch(), 3000);
  assert.equal(s.lastCompaction(), b);
  s.write(pb, "x", true, 4000);
  assert.equal(s.lastCompaction(), a);
});
