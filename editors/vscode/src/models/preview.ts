// Preview-and-edit documents: a summary the server generated without writing it
// (pi/previewCompaction, pi/previewBranchSummary) is opened as an ordinary Markdown document
// under the pi-summary: scheme; saving it commits the (possibly edited) text with
// pi/commitCompaction or pi/navigate {summarize: true, summary}. Pure: no vscode import.

import * as path from "node:path";
import type {
  BranchSummaryPreview,
  CommitCompactionParams,
  CommitCompactionResult,
  CompactionPreview,
  NavigateParams,
} from "../protocol";
import { coverageText } from "./clear";
import { formatTokens } from "./status";

export const PREVIEW_SCHEME = "pi-summary";

export type PreviewKind = "compaction" | "branch";

export interface CompactionDraft {
  kind: "compaction";
  preview: CompactionPreview;
  /** The instructions the preview was made with: the commit must repeat them (they are part of the span key). */
  instructions?: string;
}

export interface BranchDraft {
  kind: "branch";
  preview: BranchSummaryPreview;
  /** The session's leaf when the preview was made: a save after the leaf moved is refused. */
  leafId: string | null;
  instructions?: string;
}

export type SummaryDraft = CompactionDraft | BranchDraft;

/** The id Pi gives a session: the part of `<timestamp>_<id>.jsonl` after the last "_". */
export function sessionIdOf(sessionPath: string): string {
  const base = path.basename(sessionPath).replace(/\.jsonl$/, "");
  const i = base.lastIndexOf("_");
  const id = i >= 0 ? base.slice(i + 1) : base;
  return safeSegment(id || "session");
}

/** A path segment safe in a URI and a tab title (no "/", "\", ":", control characters). */
export function safeSegment(s: string): string {
  return s.replace(/[\u0000-\u001f/\\:?#%*"<>|]+/g, "-").slice(0, 120) || "-";
}

/** Path (under the pi-summary: scheme) of the document of a draft. */
export function previewPath(draft: SummaryDraft): string {
  const id = sessionIdOf(draft.preview.session);
  if (draft.kind === "compaction") return `/compaction/${id}.md`;
  return `/branch/${id}/${safeSegment(draft.preview.targetId)}.md`;
}

export interface ParsedPreviewPath {
  kind: PreviewKind;
  sessionId: string;
  targetId?: string;
}

export function parsePreviewPath(p: string): ParsedPreviewPath | undefined {
  let m = /^\/compaction\/([^/]+)\.md$/.exec(p);
  if (m) return { kind: "compaction", sessionId: m[1]! };
  m = /^\/branch\/([^/]+)\/([^/]+)\.md$/.exec(p);
  if (m) return { kind: "branch", sessionId: m[1]!, targetId: m[2]! };
  return undefined;
}

/** The text the document opens with: exactly the summary, so an unchanged save commits it unedited. */
export function documentText(draft: SummaryDraft): string {
  return draft.preview.summary;
}

/** pi/commitCompaction params for the document's text. */
export function commitCompactionParams(draft: CompactionDraft, text: string, acceptDroppedPins = false): CommitCompactionParams {
  const p: CommitCompactionParams = { session: draft.preview.session, summary: text, spanKey: draft.preview.spanKey };
  if (draft.instructions) p.instructions = draft.instructions;
  if (acceptDroppedPins) p.acceptDroppedPins = true;
  return p;
}

/** pi.navigate params that commit the document's text as the branch summary. */
export function navigateSummaryParams(draft: BranchDraft, text: string): NavigateParams {
  const p: NavigateParams = { session: draft.preview.session, targetId: draft.preview.targetId, summarize: true, summary: text };
  if (draft.instructions) p.instructions = draft.instructions;
  // The server refuses (sessionChanged) when the leaf moved since the preview: the branch left differs.
  const leaf = draft.preview.leafId !== undefined ? draft.preview.leafId : draft.leafId;
  if (leaf) p.expectLeafId = leaf;
  return p;
}

/** Only an explicit save (Ctrl+S, File > Save) commits; auto-save (VS Code for the Web saves after a delay by default) only keeps the text. */
export function saveCommits(reason: number | undefined): boolean {
  // vscode.TextDocumentSaveReason: Manual = 1, AfterDelay = 2, FocusOut = 3. Unknown: an explicit save.
  return reason === undefined || reason === 1;
}

export const AUTO_SAVE_TEXT =
  "Auto-save kept your edits to the Pi preview, but nothing was written to the session: only an explicit Save (Ctrl+S) commits it.";

/** Why a text cannot be committed at all (checked before any request), or undefined. */
export function commitProblem(text: string): string | undefined {
  if (text.trim() === "") return "the summary is empty: write one, or close the document without saving";
  return undefined;
}

/** The pinned texts a summary does not quote (the server's audit, computed on the client for the modal). */
export function missingPinned(text: string, pinned: readonly string[] | null | undefined): string[] {
  return (pinned ?? []).filter((p) => !text.includes(p) && !text.includes(p.replace(/\n/g, " ")));
}

export function committedMessage(r: CommitCompactionResult, edited: boolean): string {
  const how = edited ? "your edited summary" : "the previewed summary";
  return `Compacted the session with ${how}: ${formatTokens(r.tokensBefore)} → ${formatTokens(r.tokensAfter)} tokens.`;
}

export function previewOpenedMessage(draft: SummaryDraft): string {
  if (draft.kind === "compaction") {
    const p = draft.preview;
    const from = p.fromDraft ? " (from the background draft)" : "";
    const cov = coverageText(p.coverage);
    const dropped = p.coverage?.missing.length ? ` It drops ${p.coverage.missing.length}: "Pi: Keep a Dropped Entity…" pins its message or adds it to the instructions.` : "";
    const coverage = cov ? ` The summary ${cov}.${dropped}` : "";
    return `Compaction preview${from}: ${p.messagesToSummarize} messages summarized, ${p.keptMessages} kept, ${formatTokens(p.tokensBefore)} → ${formatTokens(p.tokensAfter)} tokens.${coverage} Edit the summary, then save (Ctrl+S) to compact; close without saving to drop it.`;
  }
  const p = draft.preview;
  return `Branch summary preview: ${p.entries} ${p.entries === 1 ? "entry" : "entries"} of the branch you leave. Edit it, then save (Ctrl+S) to move to ${p.targetId} with this summary; close without saving to stay.`;
}

export function sessionChangedText(kind: PreviewKind): string {
  return kind === "compaction"
    ? 'Not compacted: the session changed since this preview (nothing was written). Run "Pi: Preview Compaction" again.'
    : "Not moved: the session changed since this preview (nothing was written). Use Summarize and edit… again.";
}

export function pinnedDroppedText(missing: readonly string[]): string {
  const quoted = missing.map((m) => `"${m.length > 80 ? m.slice(0, 79) + "…" : m}"`).join(", ");
  return `The summary does not quote ${missing.length === 1 ? "a pinned message" : `${missing.length} pinned messages`}${quoted ? `: ${quoted}` : ""}. Pinned messages are meant to survive compaction verbatim.`;
}

/**
 * In-memory contents of the pi-summary: documents. The FileSystemProvider in extension.ts reads
 * and writes through it; a successful commit marks the document committed.
 */
export interface StoredPreview {
  draft: SummaryDraft;
  content: string;
  mtime: number;
  committed: boolean;
}

export class PreviewStore {
  private readonly docs = new Map<string, StoredPreview>();
  private clock = 0;

  /** Put (or replace) the draft's document; returns its path. */
  put(draft: SummaryDraft, now = Date.now()): string {
    const p = previewPath(draft);
    this.docs.set(p, { draft, content: documentText(draft), mtime: this.tick(now), committed: false });
    return p;
  }

  get(p: string): StoredPreview | undefined {
    return this.docs.get(p);
  }

  /** Record saved text (after a successful commit). */
  write(p: string, content: string, committed: boolean, now = Date.now()): StoredPreview | undefined {
    const d = this.docs.get(p);
    if (!d) return undefined;
    d.content = content;
    d.committed = committed;
    d.mtime = this.tick(now);
    return d;
  }

  delete(p: string): boolean {
    return this.docs.delete(p);
  }

  paths(): string[] {
    return [...this.docs.keys()];
  }

  /** The newest compaction preview not committed yet (the one "Keep a Dropped Entity…" works on). */
  lastCompaction(): CompactionDraft | undefined {
    let best: StoredPreview | undefined;
    for (const d of this.docs.values()) if (d.draft.kind === "compaction" && !d.committed && (!best || d.mtime > best.mtime)) best = d;
    return best?.draft as CompactionDraft | undefined;
  }

  /** Strictly increasing modification times, so VS Code always sees a change. */
  private tick(now: number): number {
    this.clock = Math.max(this.clock + 1, now);
    return this.clock;
  }
}
