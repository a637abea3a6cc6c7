// The commands: the interactive side of the server's pi.* commands (languageclient's
// executeCommand middleware) and the extension's own piLsp.* commands. One file per group:
// compaction.ts (and preview.ts), clear.ts, navigation.ts, entries.ts (labels, pins, undo),
// contextEdit.ts, sessions.ts.

import * as vscode from "vscode";
import type { PiContext } from "../context";
import { EXTENSION_COMMANDS as C, ServerCommandId, SERVER_COMMANDS } from "../models/commands";
import { ViewNode } from "../models/tree";
import { ClearToolOutputParams, EditContextParams, NavigateParams } from "../protocol";
import { testLog } from "../testLog";
import { showContextPanel } from "../views/contextPanel";
import { clearToolOutput, clearToolOutputInteractive } from "./clear";
import { compact, keepDroppedEntity, previewCompaction, showLastCompactionSummary } from "./compaction";
import { contextBySizeInteractive, editContext, editContextInteractive, editRow, replaceRow, showContext } from "./contextEdit";
import { label, labelInteractive, labelRow, pin, pinInteractive, pinRow, undoCompaction, undoCompactionRow } from "./entries";
import { navigate, navigateHere, openFile, showFiles, showTree } from "./navigation";
import { condenseRange, registerRewind, rewindFilesTo } from "./rewind";
import { selectSession, selectSessionInteractive } from "./sessions";

/**
 * One server command as the user runs it. `arg` is its first argument when that is an object;
 * undefined means it was run from the palette, a keybinding or the status bar, so it asks.
 * `next` sends it to the server unchanged.
 */
type ServerCommandHandler = (pi: PiContext, arg: Record<string, unknown> | undefined, next: () => unknown) => unknown;

const SERVER_HANDLERS: Record<ServerCommandId, ServerCommandHandler> = {
  "pi.compact": (pi, arg) => compact(pi, arg),
  "pi.navigate": (pi, arg) => navigate(pi, arg as unknown as NavigateParams | undefined),
  "pi.undoCompaction": (pi, arg) => undoCompaction(pi, arg ?? {}),
  "pi.pin": (pi, arg) => (arg ? pin(pi, arg) : pinInteractive(pi)),
  "pi.label": (pi, arg) => (arg ? label(pi, arg) : labelInteractive(pi)),
  "pi.selectSession": (pi, arg) => (arg ? selectSession(pi, arg) : selectSessionInteractive(pi)),
  "pi.sessions": (pi, arg, next) => (arg ? next() : selectSessionInteractive(pi)),
  "pi.tree": (pi, arg, next) => (arg ? next() : showTree(pi)),
  "pi.files": (pi, arg, next) => (arg ? next() : showFiles(pi)),
  "pi.context": (pi, arg, next) => (arg ? next() : showContext(pi)),
  "pi.editContext": (pi, arg) => (arg ? editContext(pi, arg as unknown as EditContextParams) : editContextInteractive(pi)),
  "pi.clearToolOutput": (pi, arg) => (arg ? clearToolOutput(pi, arg as ClearToolOutputParams) : clearToolOutputInteractive(pi)),
  "pi.contextBySize": (pi, arg, next) => (arg ? next() : contextBySizeInteractive(pi)),
  "pi.rewind": (pi, arg, next) => (arg ? next() : rewindFilesTo(pi, undefined)),
  "pi.condense": (pi, arg, next) => (arg ? next() : condenseRange(pi, undefined)),
  "pi.contextBreakdown": (pi, arg, next) => (arg ? next() : showContextPanel(pi)),
};

const SERVER_IDS: ReadonlySet<string> = new Set(SERVER_COMMANDS.map((c) => c.id));

function isServerCommand(command: string): command is ServerCommandId {
  return SERVER_IDS.has(command);
}

/** middleware.executeCommand: the server's commands with their prompts, pickers and messages. */
export async function executeServerCommand(
  pi: PiContext,
  command: string,
  args: unknown[],
  next: (command: string, args: unknown[]) => unknown,
): Promise<unknown> {
  const first = args[0];
  const arg = first !== null && typeof first === "object" ? (first as Record<string, unknown>) : undefined;
  testLog("command", { command, interactive: arg === undefined });
  const send = () => next(command, args);
  if (!isServerCommand(command)) return send();
  return SERVER_HANDLERS[command](pi, arg, send);
}

/** The extension-side commands (piLsp.*; never the server's pi.* ids, which languageclient owns). */
export function registerCommands(pi: PiContext): vscode.Disposable[] {
  const reg = (id: string, fn: (...args: any[]) => unknown) => vscode.commands.registerCommand(id, fn);
  return [
    ...registerRewind(pi),
    reg(C.treeRefresh, () => pi.views.refresh()),
    reg(C.treeCompact, () => (pi.server.requireClient() ? vscode.commands.executeCommand("pi.compact") : undefined)),
    reg(C.treeSelectSession, () => (pi.server.requireClient() ? vscode.commands.executeCommand("pi.selectSession") : undefined)),
    reg(C.treeNavigateHere, (node?: ViewNode) => navigateHere(pi, node)),
    reg(C.treeLabel, (node?: ViewNode) => labelRow(pi, node)),
    reg(C.treePin, (node?: ViewNode) => pinRow(pi, node)),
    reg(C.treeUnpin, (node?: ViewNode) => pinRow(pi, node, false)),
    reg(C.treeHideFromContext, (node?: ViewNode) => editRow(pi, node, "omit")),
    reg(C.treeReplaceInContext, (node?: ViewNode) => replaceRow(pi, node)),
    reg(C.treeRestoreToContext, (node?: ViewNode) => editRow(pi, node, "restore")),
    reg(C.treeUndoCompaction, () => undoCompactionRow(pi)),
    reg(C.filesOpen, (item) => openFile(pi, item)),
    reg(C.showLastCompactionSummary, () => showLastCompactionSummary(pi)),
    reg(C.previewCompaction, () => previewCompaction(pi)),
    reg(C.keepDroppedEntity, () => keepDroppedEntity(pi)),
    reg(C.restartServer, () => pi.server.restart()),
    reg(C.showOutput, () => pi.output.show(true)),
  ];
}
