// Shapes of the pi-lsp protocol (docs/protocol.md of the server). Pure types: no vscode import,
// so the view models and their unit tests can use them outside VS Code.

/** The custom request behind every command: `pi/<name>` mirrors `pi.<name>`. */
export const Methods = {
  compact: "pi/compact",
  navigate: "pi/navigate",
  undoCompaction: "pi/undoCompaction",
  label: "pi/label",
  tree: "pi/tree",
  sessions: "pi/sessions",
  selectSession: "pi/selectSession",
  files: "pi/files",
  context: "pi/context",
  pin: "pi/pin",
  previewCompaction: "pi/previewCompaction",
  commitCompaction: "pi/commitCompaction",
  previewBranchSummary: "pi/previewBranchSummary",
  editContext: "pi/editContext",
  contextBySize: "pi/contextBySize",
} as const;

export const Notifications = {
  sessionChanged: "pi/sessionChanged",
  compactionStart: "pi/compactionStart",
  compactionEnd: "pi/compactionEnd",
  fileOps: "pi/fileOps",
  contextUsage: "pi/contextUsage",
  draftReady: "pi/draftReady",
} as const;

export type EntryType =
  | "message"
  | "compaction"
  | "branch_summary"
  | "label"
  | "custom"
  | "custom_message"
  | "model_change"
  | "thinking_level_change"
  | "session_info"
  | string;

export type MessageRole = "user" | "assistant" | "toolResult" | "bashExecution" | "custom" | string;

export interface TreeNode {
  id: string;
  type: EntryType;
  role?: MessageRole;
  label?: string;
  preview?: string;
  timestamp?: string;
  onPath: boolean;
  /** Pinned entries are quoted verbatim in every later summary (pi.pin). */
  pinned?: boolean;
  isLeaf: boolean;
  /** On the active branch: the latest context_edit hides the entry from the LLM context or replaces its content. */
  contextEdit?: ContextEditState;
  children: TreeNode[];
}

export type ContextEditState = "omitted" | "replaced";

/** pi.editContext / pi/editContext params. */
export interface EditContextParams {
  session?: string;
  entryId: string;
  action: "omit" | "replace" | "restore";
  text?: string;
  force?: boolean;
}

/** The context_edit entry Pi 1.6.0 writes (keys in Pi's order). */
export interface ContextEditEntry {
  type: "context_edit";
  id: string;
  parentId: string | null;
  timestamp: string;
  targetId: string;
  replacement: null | { content: unknown };
}

export interface EditContextResult {
  session: string;
  entry: ContextEditEntry;
  tokensBefore: number;
  tokensAfter: number;
}

/** One message of pi/contextBySize. */
export interface ContextItem {
  entryId: string;
  type: string;
  role: string;
  toolName?: string;
  tokens: number;
  originalTokens?: number;
  preview: string;
  editable: boolean;
  contextEdit?: ContextEditState;
}

export interface ContextBySizeResult {
  session: string;
  leafId: string | null;
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
  projectedTokens: number;
  messages: ContextItem[];
}

export interface TreeResult {
  session: string;
  leafId: string | null;
  roots: TreeNode[];
}

/** A node of pi.tree's flat form: a TreeNode with its parent instead of its children. */
export interface FlatTreeNode extends Omit<TreeNode, "children"> {
  parentId?: string;
  depth: number;
  childCount: number;
}

/** pi.tree with `flat: true`: nodes in depth-first order, children in the tree's order. */
export interface FlatTreeResult {
  session: string;
  leafId: string | null;
  total: number;
  offset: number;
  nodes: FlatTreeNode[];
}

/** A file the agent read that changed on disk since (pi/fileOps, pi.files). */
export interface StaleFile {
  /** The path as the session records it (relative paths are relative to the session's cwd). */
  path: string;
  readAt: string;
  modifiedAt?: string;
  reason: "modified" | "deleted" | string;
}

export interface FilesResult {
  readFiles: string[];
  modifiedFiles: string[];
  stale?: StaleFile[] | null;
}

export interface ContextResult {
  session: string;
  leafId: string | null;
  messageCount: number;
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
  lastCompaction?: { id: string; summary: string; tokensBefore: number } | null;
}

export interface SessionInfo {
  path: string;
  id: string;
  name?: string;
  created: string;
  modified: string;
  messageCount: number;
  firstMessage: string;
}

export interface SessionsResult {
  current?: string;
  sessions: SessionInfo[];
}

export interface CompactionEntry {
  type: "compaction";
  id: string;
  parentId: string | null;
  timestamp: string;
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: { readFiles?: string[]; modifiedFiles?: string[]; edited?: boolean };
}

export type CompactResult =
  /** via "pi": a live pi with pi-lsp's bridge compacted (tokensAfter unknown until its next reply). */
  | { entry: CompactionEntry; tokensBefore: number; tokensAfter: number; via?: "pi"; pid?: number }
  | { nothingToCompact: true; reason: string };

export interface NavigateParams {
  session?: string;
  targetId: string;
  summarize?: boolean;
  instructions?: string;
  label?: string;
  /** With summarize: commit this (previewed, possibly edited) text instead of generating one. */
  summary?: string;
  /** Fail with sessionChanged (-32801) when the leaf is no longer this one (the previewed branch changed). */
  expectLeafId?: string;
  force?: boolean;
}

export interface NavigateResult {
  leafId: string | null;
  summaryEntry?: { id: string; summary?: string } | null;
  editorText?: string | null;
}

export interface UndoCompactionResult {
  leafId: string | null;
  compactionId: string;
}

export interface PinResult {
  entryId: string;
  pinned: boolean;
}

export interface LabelResult {
  entryId: string;
  label?: string | null;
}

export interface SessionChanged {
  session: string;
  /** Whether this is the server's current session (also on fileOps, contextUsage and draftReady). */
  current?: boolean;
  leafId: string | null;
  entries: number;
  /** The running pi that holds the file; bridge: it loaded pi-lsp's Pi extension, so writes go through it ("live"). */
  owner?: { pid: number; bridge?: boolean; piVersion?: string };
}

export interface ContextUsage {
  session: string;
  current?: boolean;
  /** null: unknown (Pi after a compaction, until the next assistant reply reports usage). */
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

export interface FileOps {
  session: string;
  current?: boolean;
  readFiles: string[];
  modifiedFiles: string[];
  stale?: StaleFile[] | null;
}

export interface DraftReady {
  session: string;
  current?: boolean;
  firstKeptEntryId: string;
  tokensBefore: number;
  incremental: boolean;
}

export interface Audit {
  missingModifiedFiles?: string[] | null;
  fileBlocksIntact: boolean;
  missingPinned?: string[] | null;
}

export interface PreviewCompactionParams {
  session?: string;
  instructions?: string;
}

export interface CompactionPreview {
  session: string;
  spanKey: string;
  firstKeptEntryId: string;
  isSplitTurn: boolean;
  messagesToSummarize: number;
  keptMessages: number;
  tokensBefore: number;
  tokensAfter: number;
  summary: string;
  audit: Audit;
  fromDraft: boolean;
  pinned: string[] | null;
}

export type PreviewCompactionResult = CompactionPreview | { nothingToCompact: true; reason: string };

export interface CommitCompactionParams {
  session?: string;
  summary: string;
  spanKey: string;
  instructions?: string;
  acceptDroppedPins?: boolean;
  force?: boolean;
}

export interface CommitCompactionResult {
  entry: CompactionEntry;
  tokensBefore: number;
  tokensAfter: number;
  audit?: Audit;
}

export interface PreviewBranchSummaryParams {
  session?: string;
  targetId: string;
  instructions?: string;
}

export interface BranchSummaryPreview {
  session: string;
  targetId: string;
  /** The leaf the preview was made from (pass it back as pi/navigate's expectLeafId). */
  leafId?: string | null;
  commonAncestorId: string | null;
  entries: number;
  summary: string;
}

export interface CompactionStart {
  session: string;
  reason: "manual" | "threshold" | "overflow" | string;
}

export interface CompactionEnd {
  session: string;
  reason: string;
  result?: unknown;
  aborted: boolean;
  willRetry: boolean;
  errorMessage?: string;
}

/** initializationOptions, and the object under `settings.piLsp` of didChangeConfiguration. */
export interface InitializationOptions {
  session?: string;
  summarizer?: "extractive" | "openai";
  baseUrl?: string;
  model?: string;
  apiKeyEnv?: string;
  contextWindow?: number;
  reserveTokens?: number;
  keepRecentTokens?: number;
}
