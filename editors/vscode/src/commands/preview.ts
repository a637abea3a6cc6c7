// Previewed summaries (compaction and branch) as pi-summary: documents. Saving one commits it:
// pi/commitCompaction or pi.navigate with the edited text. Only an explicit save commits; an
// auto-save keeps the text without writing anything. A refused commit fails the save, so the
// document stays dirty and the user can fix it and save again.

import * as vscode from "vscode";
import type { PiClient } from "../client";
import type { PiContext } from "../context";
import { describeError, errorKind } from "../models/errors";
import {
  AUTO_SAVE_TEXT,
  BranchDraft,
  commitCompactionParams,
  commitProblem,
  committedMessage,
  CompactionDraft,
  missingPinned,
  navigateSummaryParams,
  parsePreviewPath,
  pinnedDroppedText,
  PREVIEW_SCHEME,
  previewOpenedMessage,
  previewPath,
  PreviewStore,
  saveCommits,
  sessionChangedText,
  SummaryDraft,
} from "../models/preview";
import { coverageLensTitles } from "../models/clear";
import { EXTENSION_COMMANDS } from "../models/commands";
import type { DraftTracker } from "../models/status";
import { forceAfterOwnedByPi, info } from "../notifications";
import { CommitCompactionParams, CommitCompactionResult, Methods, NavigateParams, NavigateResult } from "../protocol";
import { testLog } from "../testLog";
import type { Views } from "../views";
import { PreviewFileSystem } from "../views/previewFileSystem";
import { infoMoved } from "./navigated";
import { openSummary } from "./summary";

/**
 * What committing a saved preview uses: the server it commits through, the draft tracker
 * told of a compaction, and the views refreshed after it.
 */
export interface PreviewDeps {
  readonly server: Pick<PiClient, "isRunning" | "custom" | "execute">;
  readonly drafts: Pick<DraftTracker, "compacted">;
  readonly views: Pick<Views, "scheduleRefresh">;
}

export class PreviewState implements vscode.Disposable {
  readonly store = new PreviewStore();
  readonly fs: PreviewFileSystem;
  /** pi-summary: documents committed by a save, closed once VS Code has marked them saved. */
  readonly closeAfterSave = new Set<string>();
  /** Why each pi-summary: document is being saved (onWillSaveTextDocument comes before writeFile). */
  readonly saveReasons = new Map<string, vscode.TextDocumentSaveReason>();
  readonly autoSaveNoticeShown = new Set<string>();
  /** Fired when a preview is put, so the coverage CodeLens of its document is drawn again. */
  readonly lensesChanged = new vscode.EventEmitter<void>();
  private readonly askedAgain = new vscode.EventEmitter<SummaryDraft>();
  /**
   * Fired when the user asks for a new preview after a refused save (the previewed span or
   * branch is gone). The compaction and navigation commands answer it, subscribed in
   * extension.ts, so this module imports neither of them.
   */
  readonly onAskedAgain = this.askedAgain.event;

  constructor(deps: PreviewDeps) {
    const parts: CommitParts = { ...deps, previews: this, askAgain: (draft) => this.askedAgain.fire(draft) };
    this.fs = new PreviewFileSystem(this.store, (uri, text) => commitPreview(parts, uri, text));
  }

  dispose(): void {
    this.lensesChanged.dispose();
    this.askedAgain.dispose();
  }
}

/** What the commit of a saved preview works with: the previews' own state and their dependencies. */
interface CommitParts extends PreviewDeps {
  readonly previews: PreviewState;
  readonly askAgain: (draft: SummaryDraft) => void;
}

/** The pi-summary: file system and the save listeners that commit and then close a preview. */
export function registerPreviews(previews: PreviewState): vscode.Disposable[] {
  return [
    vscode.workspace.registerFileSystemProvider(PREVIEW_SCHEME, previews.fs, { isCaseSensitive: true }),
    vscode.languages.registerCodeLensProvider({ scheme: PREVIEW_SCHEME }, { onDidChangeCodeLenses: previews.lensesChanged.event, provideCodeLenses: (doc) => coverageLenses(previews, doc) }),
    vscode.workspace.onDidSaveTextDocument((doc) => void afterPreviewSaved(previews, doc)),
    vscode.workspace.onWillSaveTextDocument((e) => {
      if (e.document.uri.scheme === PREVIEW_SCHEME) previews.saveReasons.set(e.document.uri.toString(), e.reason);
    }),
  ];
}

export async function openPreview(pi: PiContext, draft: SummaryDraft): Promise<void> {
  const previews = pi.previews;
  const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: previewPath(draft) });
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  let revert = false;
  const existing = previews.store.get(uri.path);
  // Edits kept by auto-save leave the document clean but differ from the previewed text.
  const edited = !!existing && !existing.committed && existing.content !== existing.draft.preview.summary;
  if (existing && open && (open.isDirty || edited)) {
    const replace = "Replace";
    const pick = await vscode.window.showWarningMessage(
      "The open preview has edits that are not committed. Replace them with the new summary?",
      { modal: true },
      replace,
    );
    if (pick !== replace) {
      await vscode.window.showTextDocument(open, { preview: false });
      return;
    }
    revert = true;
  }
  previews.store.put(draft);
  previews.fs.changed(uri);
  previews.lensesChanged.fire();
  const doc = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(doc, { preview: false });
  if (revert || doc.getText() !== draft.preview.summary) {
    await vscode.commands.executeCommand("workbench.action.files.revert");
  }
  if (doc.languageId !== "markdown") await vscode.languages.setTextDocumentLanguage(doc, "markdown");
  testLog("previewOpened", {
    kind: draft.kind,
    uri: uri.toString(),
    session: draft.preview.session,
    summary: draft.preview.summary,
    ...(draft.kind === "compaction"
      ? { spanKey: draft.preview.spanKey, fromDraft: draft.preview.fromDraft, pinned: draft.preview.pinned, audit: draft.preview.audit, coverage: draft.preview.coverage, instructions: draft.instructions }
      : { targetId: draft.preview.targetId, entries: draft.preview.entries }),
    editorText: editor.document.getText(),
  });
  let text = previewOpenedMessage(draft);
  if (draft.kind === "compaction") {
    const missing = missingPinned(draft.preview.summary, draft.preview.pinned);
    if (missing.length > 0) text += ` ${pinnedDroppedText(missing)} Quote ${missing.length === 1 ? "it" : "them"} before saving, or commit anyway when asked.`;
  }
  testLog("message", { severity: "info", text });
  const keep = draft.kind === "compaction" && (draft.preview.coverage?.missing.length ?? 0) > 0 ? [KEEP_ENTITY] : [];
  void vscode.window.showInformationMessage(text, ...keep).then((pick) => {
    if (pick === KEEP_ENTITY) void vscode.commands.executeCommand(EXTENSION_COMMANDS.keepDroppedEntity);
  });
}

const KEEP_ENTITY = "Keep a Dropped Entity…";

/** The compaction preview's first line: what the summary carries of the range's critical entities, and what it drops. */
function coverageLenses(previews: PreviewState, doc: vscode.TextDocument): vscode.CodeLens[] {
  const stored = previews.store.get(doc.uri.path);
  if (!stored || stored.committed || stored.draft.kind !== "compaction") return [];
  const lenses = coverageLensTitles(stored.draft.preview.coverage);
  const top = new vscode.Range(0, 0, 0, 0);
  const out = lenses.map((l) => new vscode.CodeLens(top, { title: l.title, tooltip: l.tooltip, command: l.action ? EXTENSION_COMMANDS.keepDroppedEntity : "" }));
  testLog("coverageLenses", { uri: doc.uri.toString(), titles: lenses.map((l) => l.title) });
  return out;
}

/** FileSystemProvider.writeFile of a pi-summary: document: commit its text. Throws to fail the save. */
async function commitPreview(parts: CommitParts, uri: vscode.Uri, text: string): Promise<void> {
  const previews = parts.previews;
  const stored = previews.store.get(uri.path);
  if (!stored || !parsePreviewPath(uri.path)) {
    throw vscode.FileSystemError.Unavailable("This is not an open Pi preview. Run \"Pi: Preview Compaction\" to make one.");
  }
  if (stored.committed) {
    throw vscode.FileSystemError.Unavailable(
      stored.draft.kind === "compaction"
        ? 'This preview was already committed. Run "Pi: Preview Compaction" again for a new one.'
        : "This branch summary was already committed. Use Summarize and edit… again for a new one.",
    );
  }
  const problem = commitProblem(text);
  if (problem) throw vscode.FileSystemError.Unavailable(`Not saved: ${problem}.`);
  if (!parts.server.isRunning()) {
    throw vscode.FileSystemError.Unavailable('pi-lsp is not running: run "Pi: Restart Server", then save again.');
  }
  const reason = previews.saveReasons.get(uri.toString());
  previews.saveReasons.delete(uri.toString());
  if (!saveCommits(reason)) {
    // files.autoSave (afterDelay by default in VS Code for the Web) must never commit a half-edited summary.
    previews.store.write(uri.path, text, false);
    testLog("previewAutoSaved", { kind: stored.draft.kind, uri: uri.toString(), reason });
    if (!previews.autoSaveNoticeShown.has(uri.toString())) {
      previews.autoSaveNoticeShown.add(uri.toString());
      void vscode.window.showInformationMessage(AUTO_SAVE_TEXT);
    }
    return;
  }
  testLog("previewSave", { kind: stored.draft.kind, uri: uri.toString(), text, reason });
  const draft = stored.draft;
  if (draft.kind === "compaction") await commitCompactionDraft(parts, uri, draft, text);
  else await commitBranchDraft(parts, uri, draft, text);
}

async function commitCompactionDraft(parts: CommitParts, uri: vscode.Uri, draft: CompactionDraft, text: string): Promise<void> {
  let accept = false;
  let force = false;
  for (;;) {
    const params: CommitCompactionParams = { ...commitCompactionParams(draft, text, accept), ...(force ? { force: true } : {}) };
    let r: CommitCompactionResult;
    try {
      r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "Pi: compacting with the edited summary" }, () =>
        parts.server.custom<CommitCompactionResult>(Methods.commitCompaction, params),
      );
    } catch (err) {
      const kind = errorKind(err);
      testLog("previewCommitError", { kind: draft.kind, code: (err as { code?: unknown }).code, errorKind: kind, message: String((err as Error).message ?? err) });
      if (kind === "pinnedDropped" && !accept) {
        const missing = missingPinned(text, draft.preview.pinned);
        const commit: vscode.MessageItem = { title: "Commit anyway" };
        const keep: vscode.MessageItem = { title: "Keep editing", isCloseAffordance: true };
        testLog("message", { severity: "warning", text: pinnedDroppedText(missing), modal: true });
        const pick = await vscode.window.showWarningMessage(
          pinnedDroppedText(missing),
          { modal: true, detail: "Commit anyway writes the summary without them. Keep editing leaves the document open and unsaved: quote the pinned messages, then save again." },
          commit,
          keep,
        );
        if (pick === commit) {
          accept = true;
          continue;
        }
        throw vscode.FileSystemError.Unavailable("Not compacted: the summary drops a pinned message. Quote it, then save again.");
      }
      if (!force && (await forceAfterOwnedByPi("Compaction", err, params))) {
        force = true;
        continue;
      }
      if (kind === "sessionChanged" || (err as { code?: unknown }).code === -32801) {
        offerPreviewAgain(parts, draft);
        throw vscode.FileSystemError.Unavailable(sessionChangedText("compaction"));
      }
      throw vscode.FileSystemError.Unavailable(describeError("Compaction", err).text);
    }
    const edited = r.entry.details?.edited ?? text !== draft.preview.summary;
    parts.previews.store.write(uri.path, text, true);
    parts.previews.closeAfterSave.add(uri.toString());
    parts.drafts.compacted(draft.preview.session);
    testLog("previewCommitted", { kind: draft.kind, uri: uri.toString(), entryId: r.entry.id, edited, tokensBefore: r.tokensBefore, tokensAfter: r.tokensAfter });
    void info(committedMessage(r, edited), "Show Summary").then((pick) => {
      if (pick === "Show Summary") void openSummary(r.entry.summary, r.entry.id, r.tokensBefore);
    });
    parts.views.scheduleRefresh();
    return;
  }
}

async function commitBranchDraft(parts: CommitParts, uri: vscode.Uri, draft: BranchDraft, text: string): Promise<void> {
  // expectLeafId (from the preview) makes the server refuse when the branch left behind changed.
  let params: NavigateParams = navigateSummaryParams(draft, text);
  let r: NavigateResult;
  for (;;) {
    try {
      const p = params;
      r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "Pi: moving with the edited branch summary" }, () =>
        parts.server.execute<NavigateResult>("pi.navigate", p),
      );
      break;
    } catch (err) {
      testLog("previewCommitError", { kind: draft.kind, code: (err as { code?: unknown }).code, errorKind: errorKind(err), message: String((err as Error).message ?? err) });
      if (!params.force && (await forceAfterOwnedByPi("Navigation", err, params))) {
        params = { ...params, force: true };
        continue;
      }
      if (errorKind(err) === "sessionChanged" || (err as { code?: unknown }).code === -32801) {
        offerPreviewAgain(parts, draft);
        throw vscode.FileSystemError.Unavailable(sessionChangedText("branch"));
      }
      throw vscode.FileSystemError.Unavailable(describeError("Navigation", err).text);
    }
  }
  parts.previews.store.write(uri.path, text, true);
  parts.previews.closeAfterSave.add(uri.toString());
  testLog("previewCommitted", { kind: draft.kind, uri: uri.toString(), leafId: r.leafId, summaryEntryId: r.summaryEntry?.id, edited: text !== draft.preview.summary });
  const moved = [`Moved the session to ${draft.preview.targetId} with ${text !== draft.preview.summary ? "your edited" : "the previewed"} branch summary.`];
  infoMoved(moved, r.editorText);
  parts.views.scheduleRefresh();
}

/** The save failed because the previewed span (or branch) is gone: say so, and offer a new preview. */
function offerPreviewAgain(parts: CommitParts, draft: SummaryDraft): void {
  const again = draft.kind === "compaction" ? "Preview Again" : "Summarize and Edit Again";
  const text = sessionChangedText(draft.kind);
  testLog("message", { severity: "warning", text });
  void vscode.window.showWarningMessage(text, again).then((pick) => {
    if (pick === again) parts.askAgain(draft);
  });
}

/** A committed preview is closed once VS Code has marked it saved (so closing never asks to save). */
async function afterPreviewSaved(previews: PreviewState, doc: vscode.TextDocument): Promise<void> {
  const key = doc.uri.toString();
  if (doc.uri.scheme !== PREVIEW_SCHEME || !previews.closeAfterSave.delete(key)) return;
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === key);
  if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
  previews.store.delete(doc.uri.path);
  testLog("previewClosed", { uri: key });
}
