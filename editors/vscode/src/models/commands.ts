// The server's command table as the extension expects it (ids and palette titles). The ids are
// registered by vscode-languageclient from initialize's executeCommandProvider.commands; the
// extension only gives them titles (package.json contributes.commands) and must never register
// them itself. test/commands.test.ts checks this list against package.json and the server.

export interface CommandInfo {
  id: string;
  title: string;
}

export const SERVER_COMMANDS = [
  { id: "pi.compact", title: "Pi: Compact Session" },
  { id: "pi.navigate", title: "Pi: Navigate Session Tree" },
  { id: "pi.undoCompaction", title: "Pi: Undo Compaction" },
  { id: "pi.pin", title: "Pi: Pin Entry" },
  { id: "pi.label", title: "Pi: Label Entry" },
  { id: "pi.tree", title: "Pi: Show Session Tree" },
  { id: "pi.sessions", title: "Pi: List Sessions" },
  { id: "pi.selectSession", title: "Pi: Select Session" },
  { id: "pi.files", title: "Pi: Show Files" },
  { id: "pi.context", title: "Pi: Show Context" },
  { id: "pi.editContext", title: "Pi: Edit Context" },
  { id: "pi.contextBySize", title: "Pi: Context by Size" },
] as const satisfies readonly CommandInfo[];

/** A server command id; commands/index.ts has one handler per id, so a new one fails to compile until handled. */
export type ServerCommandId = (typeof SERVER_COMMANDS)[number]["id"];

/** Extension-side command ids: all in the piLsp. namespace so they never clash with the server's. */
export const EXTENSION_COMMANDS = {
  treeRefresh: "piLsp.tree.refresh",
  treeNavigateHere: "piLsp.tree.navigateHere",
  treeLabel: "piLsp.tree.label",
  treeUndoCompaction: "piLsp.tree.undoCompaction",
  treePin: "piLsp.tree.pin",
  treeUnpin: "piLsp.tree.unpin",
  treeHideFromContext: "piLsp.tree.hideFromContext",
  treeReplaceInContext: "piLsp.tree.replaceInContext",
  treeRestoreToContext: "piLsp.tree.restoreToContext",
  treeCompact: "piLsp.tree.compact",
  treeSelectSession: "piLsp.tree.selectSession",
  filesOpen: "piLsp.files.open",
  showLastCompactionSummary: "piLsp.showLastCompactionSummary",
  previewCompaction: "piLsp.previewCompaction",
  restartServer: "piLsp.restartServer",
  showOutput: "piLsp.showOutput",
} as const;

export interface CommandContribution {
  command: string;
  title: string;
}

/** Server commands (pi.*) contributed in package.json, in order. */
export function contributedServerCommands(contributions: readonly CommandContribution[]): CommandInfo[] {
  return contributions.filter((c) => c.command.startsWith("pi.")).map((c) => ({ id: c.command, title: c.title }));
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
