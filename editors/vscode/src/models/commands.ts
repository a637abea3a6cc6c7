// The server's command table as the extension expects it (ids and palette titles; package.json
// puts every command in the "Pi" category, so the palette shows "Pi: Compact Session"). The ids are
// registered by vscode-languageclient from initialize's executeCommandProvider.commands; the
// extension only gives them titles (package.json contributes.commands) and must never register
// them itself. test/commands.test.ts checks this list against package.json and the server.

export interface CommandInfo {
  id: string;
  title: string;
}

export const SERVER_COMMANDS = [
  { id: "pi.compact", title: "Compact Session" },
  { id: "pi.navigate", title: "Navigate Session Tree" },
  { id: "pi.undoCompaction", title: "Undo Compaction" },
  { id: "pi.pin", title: "Pin Entry" },
  { id: "pi.label", title: "Label Entry" },
  { id: "pi.tree", title: "Show Session Tree" },
  { id: "pi.sessions", title: "List Sessions" },
  { id: "pi.selectSession", title: "Select Session" },
  { id: "pi.files", title: "Show Files" },
  { id: "pi.context", title: "Show Context" },
  { id: "pi.editContext", title: "Edit Context" },
  { id: "pi.clearToolOutput", title: "Clear Old Tool Output" },
  { id: "pi.rewind", title: "Rewind Files to Entry" },
  { id: "pi.condense", title: "Condense Context Range" },
  { id: "pi.contextBySize", title: "Context by Size" },
  { id: "pi.contextBreakdown", title: "Show Context Picture" },
] as const satisfies readonly CommandInfo[];

/** A server command id; commands/index.ts has one handler per id, so a new one fails to compile until handled. */
export type ServerCommandId = (typeof SERVER_COMMANDS)[number]["id"];

/**
 * Extension-side command ids. Every command of the extension starts with pi., the server's and
 * these; none of these may be a server command id (test/commands.test.ts and the server's
 * internal/rpc/commands_sync_test.go check it), so they never clash.
 */
export const EXTENSION_COMMANDS = {
  treeRefresh: "pi.tree.refresh",
  treeNavigateHere: "pi.tree.navigateHere",
  treeLabel: "pi.tree.label",
  treeUndoCompaction: "pi.tree.undoCompaction",
  treePin: "pi.tree.pin",
  treeUnpin: "pi.tree.unpin",
  treeHideFromContext: "pi.tree.hideFromContext",
  treeReplaceInContext: "pi.tree.replaceInContext",
  treeRestoreToContext: "pi.tree.restoreToContext",
  treeCompact: "pi.tree.compact",
  treeSelectSession: "pi.tree.selectSession",
  treeRewindFilesHere: "pi.tree.rewindFilesHere",
  treeSummarizeUpToHere: "pi.tree.summarizeUpToHere",
  treeSummarizeFromHere: "pi.tree.summarizeFromHere",
  treeCondenseRange: "pi.tree.condenseRange",
  filesOpen: "pi.files.open",
  showLastCompactionSummary: "pi.showLastCompactionSummary",
  previewCompaction: "pi.previewCompaction",
  keepDroppedEntity: "pi.previewCompaction.keepEntity",
  restartServer: "pi.restartServer",
  showOutput: "pi.showOutput",
} as const;

export interface CommandContribution {
  command: string;
  title: string;
}

const EXTENSION_IDS: ReadonlySet<string> = new Set(Object.values(EXTENSION_COMMANDS));

/** Whether id is one of the extension's own commands (not the server's). */
export function isExtensionCommand(id: string): boolean {
  return EXTENSION_IDS.has(id);
}

/** Server commands contributed in package.json (the pi.* ids that are not the extension's), in order. */
export function contributedServerCommands(contributions: readonly CommandContribution[]): CommandInfo[] {
  return contributions.filter((c) => c.command.startsWith("pi.") && !isExtensionCommand(c.command)).map((c) => ({ id: c.command, title: c.title }));
}

export interface CommandListDiff {
  missing: string[]; // in the server's table, not contributed
  extra: string[]; // contributed, unknown to the server
}

export function diffCommandIds(server: readonly string[], contributed: readonly string[]): CommandListDiff {
  const s = new Set(server);
  const c = new Set(contributed);
  return {
    missing: [...s].filter((id) => !c.has(id)).sort(),
    extra: [...c].filter((id) => !s.has(id)).sort(),
  };
}
