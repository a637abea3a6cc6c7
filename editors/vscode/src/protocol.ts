// Shapes of the pi-lsp protocol (docs/protocol.md of the server). Pure types: no vscode import,
// so the view models and their unit tests can use them outside VS Code.
//
// The part below the GENERATED marker is written by `go generate ./internal/rpc` from the
// server's Go types: every params, result, notification, hook, setting and session entry the
// server sends or reads. Only the helper below is written by hand.

/** A union whose members read the keys of the other members as undefined. */
type KeysOf<T> = T extends unknown ? keyof T : never;
export type Exclusive<U, T = U> = T extends unknown ? T & { [K in Exclude<KeysOf<U>, keyof T>]?: undefined } : never;

// BEGIN GENERATED (go generate ./internal/rpc): edit internal/rpc, not below

/** The server's commands (workspace/executeCommand ids). */
export const Commands = {
  compact: "pi.compact",
  navigate: "pi.navigate",
  undoCompaction: "pi.undoCompaction",
  label: "pi.label",
  pin: "pi.pin",
  editContext: "pi.editContext",
  clearToolOutput: "pi.clearToolOutput",
  rewind: "pi.rewind",
  condense: "pi.condense",
  contextBySize: "pi.contextBySize",
  contextBreakdown: "pi.contextBreakdown",
  tree: "pi.tree",
  sessions: "pi.sessions",
  selectSession: "pi.selectSession",
  files: "pi.files",
  context: "pi.context",
} as const;

export type CommandId = (typeof Commands)[keyof typeof Commands];

/** The custom requests: `pi/<name>` mirrors the command `pi.<name>`. */
export const Methods = {
  compact: "pi/compact",
  navigate: "pi/navigate",
  undoCompaction: "pi/undoCompaction",
  label: "pi/label",
  pin: "pi/pin",
  editContext: "pi/editContext",
  clearToolOutput: "pi/clearToolOutput",
  rewind: "pi/rewind",
  condense: "pi/condense",
  contextBySize: "pi/contextBySize",
  contextBreakdown: "pi/contextBreakdown",
  tree: "pi/tree",
  sessions: "pi/sessions",
  selectSession: "pi/selectSession",
  files: "pi/files",
  context: "pi/context",
  append: "pi/append",
  previewCompaction: "pi/previewCompaction",
  commitCompaction: "pi/commitCompaction",
  previewBranchSummary: "pi/previewBranchSummary",
} as const;

/** The custom notifications the server sends. */
export const Notifications = {
  sessionChanged: "pi/sessionChanged",
  compactionStart: "pi/compactionStart",
  compactionEnd: "pi/compactionEnd",
  compactionFailed: "pi/compactionFailed",
  fileOps: "pi/fileOps",
  contextUsage: "pi/contextUsage",
  toolOutputCleared: "pi/toolOutputCleared",
  draftReady: "pi/draftReady",
} as const;

/** The requests the server sends a client that declared hooks. */
export const Hooks = {
  beforeCompact: "pi/beforeCompact",
  beforeTree: "pi/beforeTree",
} as const;

/** LSP's work-done progress token. */
export type ProgressToken = number | string;

/** One of Pi's AgentMessages (user, assistant, toolResult, custom ...), exactly as the session file stores it. */
export type AgentMessage = { role: string; [key: string]: unknown };

/** The type of a session entry of Pi 1.6.0 (a tree node passes the file's on). */
export type EntryType = "message" | "thinking_level_change" | "model_change" | "usage" | "compaction" | "branch_summary" | "custom" | "custom_message" | "context_edit" | "label" | "session_info";

/** The role of a message of Pi 1.6.0 (a tree node passes the file's on). */
export type MessageRole = "user" | "assistant" | "toolResult" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary" | "system";

/** How the latest context_edit of an entry changes its content in the context: hidden, or replaced. */
export type ContextEditState = "omitted" | "replaced";

/** A session entry pi-lsp writes, as Pi 1.6.0 writes it (results carry some as the file holds them). */
export type Entry = MessageEntry | CompactionEntry | BranchSummaryEntry | ContextEditEntry | LabelEntry | CustomEntry;

export interface CompactParams {
  session?: string;
  instructions?: string;
  /** leafId compacts the path to this entry instead of the leaf's. */
  leafId?: string;
  /** keepFrom keeps the context verbatim from this entry on ("summarize up to here"), in place of Pi's keepRecentTokens cut; refused where Pi could not cut, with the nearest valid cuts named. */
  keepFrom?: string;
  force?: boolean;
  workDoneToken?: ProgressToken;
}

/** Compacted is a compaction pi-lsp wrote. */
export interface Compacted {
  /** entry is the compaction entry written, as the file holds it. */
  entry: CompactionEntry;
  tokensBefore: number;
  tokensAfter: number;
  audit: Audit;
}

/** CompactionEntry is a compaction entry (Pi's CompactionEntry): pi-lsp's (compaction.Outcome.EntryFields) or one a live pi wrote through the bridge. */
export interface CompactionEntry {
  type: "compaction";
  /** id is 8 hex digits, unique in the file. */
  id: string;
  /** parentId is the entry this one follows in the tree, null for a root. */
  parentId: string | null;
  timestamp: string;
  /** summary replaces the history before firstKeptEntryId in the context. */
  summary: string;
  /** firstKeptEntryId is the first entry kept verbatim (the compaction's own id when nothing is kept: Pi 1.6.0's retain-none compaction). */
  firstKeptEntryId: string;
  tokensBefore: number;
  /** details are the file lists pi-lsp and Pi's own compaction store; a hook's summary may store other details of its own (Pi's `details?: unknown`). */
  details?: SummaryDetails;
  /** usage is the usage of the summary calls, when a model wrote the summary. */
  usage?: Usage;
  /** fromHook: a hook (pi/beforeCompact, or an extension of a live pi) supplied the summary. pi-lsp always writes it; Pi leaves it out for its own summaries. */
  fromHook?: boolean;
  /** systemMessage is the checkpoint Pi 1.6.0 stores: the system messages of the context replayed into one (absent for a session that has none). */
  systemMessage?: SystemMessage;
}

/** SummaryDetails are the details of a compaction or branch summary that pi-lsp writes (compaction.Details, branch.Details), as Pi's own summaries write them. */
export interface SummaryDetails {
  readFiles: string[];
  modifiedFiles: string[];
  /** edited marks a summary the user edited before it was committed (pi-lsp only). */
  edited?: boolean;
}

/** Usage is an assistant message's token usage. */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** reasoning counts the output tokens spent on reasoning (pi-ai 1.6.0 writes it, 0 when the provider reports none; older usage has no such key). */
  reasoning?: number;
  totalTokens: number;
  /** cacheWrite1h counts the cache writes with a 1-hour lifetime (pi-ai 1.6.0's anthropic-messages writes it). */
  cacheWrite1h?: number;
  /** cost in dollars, when known (it is not read from files: nothing pi-lsp computes needs it). */
  cost?: UsageCost;
}

/** UsageCost is the cost part of Pi's Usage. */
export interface UsageCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
  /** totalFromProvider says the total is the provider's own figure (pi-ai 1.6.0 writes false for a cost it computed). */
  totalFromProvider?: boolean;
}

/** SystemMessage is pi-ai's SystemMessage as a compaction stores it (CurrentSystemMessage). */
export interface SystemMessage {
  role: "system";
  content: string | { type: "text"; text: string }[];
  /** sections are named prompt sections by name (null removes one). */
  sections?: Record<string, string | null>;
  /** toolsAdded are the complete definitions of the tools available. */
  toolsAdded?: unknown[];
  toolsRemoved?: unknown[];
  /** timestamp is in milliseconds (the compaction's own time). */
  timestamp: number;
}

/** Audit is what a check of the summary against the span found. */
export interface Audit {
  missingModifiedFiles?: string[];
  fileBlocksIntact: boolean;
  missingPinned?: string[];
}

/** CompactedViaPi is a compaction a live pi made through the bridge. */
export interface CompactedViaPi {
  /** entry is the compaction entry pi wrote, as pi gave it. */
  entry: CompactionEntry;
  tokensBefore: number;
  /** tokensAfter is absent while Pi's figure after a compaction is unknown (until its next answer). */
  tokensAfter?: number;
  via: "pi";
  pid: number;
}

/** NothingToCompact answers a compaction (or its preview) that had nothing to do. */
export interface NothingToCompact {
  nothingToCompact: true;
  reason: string;
  /** via is "pi" when a live pi with pi-lsp's bridge was asked. */
  via?: "pi";
}

export interface NavigateParams {
  session?: string;
  targetId: string;
  summarize?: boolean;
  instructions?: string;
  replaceInstructions?: boolean;
  label?: string;
  force?: boolean;
  workDoneToken?: ProgressToken;
  /** summary, with summarize, commits this (previewed, possibly edited) text instead of generating one. */
  summary?: string;
  /** expectLeafId, when set, refuses the navigation if the session's leaf is no longer this one (the leaf a previewed summary was made from). */
  expectLeafId?: string;
}

/** Navigated is a navigation pi-lsp wrote (or found already done). */
export interface Navigated {
  /** leafId is the session's leaf afterwards: the last entry appended (label, summary or marker), or the position when nothing was written. */
  leafId: string | null;
  /** position is where the active branch now continues from, before the entries the navigation appended: the target, or its parent for a user or custom message (null for the root). */
  position: string | null;
  /** alreadyThere: the target was the leaf already, nothing was written. */
  alreadyThere?: boolean;
  /** summaryEntry is the branch_summary entry written, as Pi writes it. */
  summaryEntry?: BranchSummaryEntry;
  /** editorText is the text of a user message navigated to, for the editor's input. */
  editorText?: string;
}

/** BranchSummaryEntry is a branch_summary entry (Pi's BranchSummaryEntry): the summary of the branch a navigation left. */
export interface BranchSummaryEntry {
  type: "branch_summary";
  /** id is 8 hex digits, unique in the file. */
  id: string;
  /** parentId is the entry this one follows in the tree, null for a root. */
  parentId: string | null;
  timestamp: string;
  /** fromId is the leaf the navigation left ("root" when there was none). */
  fromId: string;
  summary: string;
  /** details are the file lists of the branch; a hook's summary stores the details it gave (Pi's `details?: unknown`). */
  details?: SummaryDetails;
  usage?: Usage;
  /** fromHook: a hook (pi/beforeTree, or an extension of a live pi) supplied the summary. */
  fromHook?: boolean;
}

/** NavigateCancelled answers a navigation the client's pi/beforeTree hook cancelled (Pi's navigateTree answers {cancelled: true}). */
export interface NavigateCancelled {
  leafId: string | null;
  cancelled: true;
}

/** NavigatedViaPi is a navigation a live pi made through the bridge. */
export interface NavigatedViaPi {
  leafId: string | null;
  cancelled?: boolean;
  /** summaryEntry is the branch_summary entry pi wrote, as pi gave it. */
  summaryEntry?: BranchSummaryEntry;
  via: "pi";
  pid: number;
}

export interface UndoCompactionParams {
  session?: string;
  /** leafId: undo the newest compaction on the path of this entry (default: Pi's leaf, the last entry), as the CLI's --leaf. */
  leafId?: string;
  force?: boolean;
}

/** UndoCompactionResult names the compaction made inactive, the new leaf, and what the undo leaves on a side branch. */
export interface UndoCompactionResult {
  leafId: string | null;
  compactionId: string;
  /** position is the entry the new leaf continues from (null: the session's start). */
  position: string | null;
  /** sideBranch are the entries written after the compaction on the path it undid from, oldest first: navigating to the last returns to them. */
  sideBranch: SideEntry[];
}

/** SideEntry is an entry an undone compaction leaves on a side branch. */
export interface SideEntry {
  id: string;
  type: EntryType;
  role?: MessageRole;
  description: string;
}

export interface LabelParams {
  session?: string;
  entryId: string;
  force?: boolean;
  /** label is the new label; empty or absent clears it. */
  label?: string;
}

/** LabelResult is the label now set (absent when cleared). */
export interface LabelResult {
  entryId: string;
  label?: string;
  via?: "pi";
  pid?: number;
}

export interface PinParams {
  session?: string;
  entryId: string;
  force?: boolean;
  /** pinned false unpins; absent pins. */
  pinned?: boolean;
}

/** PinResult is the pin state now recorded. */
export interface PinResult {
  entryId: string;
  pinned: boolean;
}

/** EditContextParams are pi/editContext's params. */
export interface EditContextParams {
  session?: string;
  entryId: string;
  force?: boolean;
  /** action is "omit", "replace" (with text) or "restore". */
  action: "omit" | "replace" | "restore";
  text?: string;
}

/** EditContextResult is the context_edit entry written and the context figure around it. */
export interface EditContextResult {
  session: string;
  entry: ContextEditEntry;
  tokensBefore: number;
  tokensAfter: number;
}

/** ContextEditEntry is a context_edit entry (Pi 0.87+; contextedit writes them): it hides or replaces the content of an earlier message in the context. */
export interface ContextEditEntry {
  type: "context_edit";
  /** id is 8 hex digits, unique in the file. */
  id: string;
  /** parentId is the entry this one follows in the tree, null for a root. */
  parentId: string | null;
  timestamp: string;
  targetId: string;
  /** replacement is null to omit the target, or its new content. */
  replacement: ContextReplacement | null;
}

/** ContextReplacement is the content a context edit puts in place of the target's. */
export interface ContextReplacement {
  content: unknown;
}

/** ClearToolOutputParams are pi/clearToolOutput's params. */
export interface ClearToolOutputParams {
  session?: string;
  /** keepRecentTokens is the recent part of the context left alone (0: Pi's keepRecentTokens, 20000). */
  keepRecentTokens?: number;
  /** minTokens: only results larger than this many tokens are cleared (0: 200). */
  minTokens?: number;
  /** dryRun answers what would be cleared and the tokens saved, and writes nothing. */
  dryRun?: boolean;
  /** restore brings back every tool result a clear replaced, instead of clearing. */
  restore?: boolean;
  force?: boolean;
}

/** ClearToolOutputResult is what pi/clearToolOutput cleared (or, with dryRun, would clear; with restore, brought back). Nothing to clear is an empty cleared list. */
export interface ClearToolOutputResult {
  session: string;
  leafId: string | null;
  /** cleared are the tool results, oldest first: tokens is each one's estimate before, tokensAfter its placeholder's (restored: the other way round). */
  cleared: Cleared[];
  /** saved is the tokens the clear takes out of the context (restore: puts back, as a negative number). */
  saved: number;
  /** tokensBefore and TokensAfter are the projected context figure (after: estimated for a dry run). */
  tokensBefore: number;
  tokensAfter: number;
  dryRun: boolean;
  restored: boolean;
}

/** Cleared is one tool result replaced (or, in a dry run, that would be). */
export interface Cleared {
  entryId: string;
  toolName: string;
  arguments: string;
  /** tokens is the result's estimate now; TokensAfter the placeholder's (restored: the other way round). */
  tokens: number;
  tokensAfter: number;
  placeholder?: string;
}

/** RewindParams are pi/rewind's params. */
export interface RewindParams {
  session?: string;
  /** entryId is the entry to bring the files back to (not with undo). */
  entryId?: string;
  /** mode: "code" (the default: the files only, nothing written to the session), "conversation" (navigate) or "both". */
  mode?: "code" | "conversation" | "both";
  summarize?: boolean;
  /** files are conflicting files to bring back anyway; force picks every conflict. */
  files?: string[];
  force?: boolean;
  /** dryRun previews: each file with what it holds and what the rewind would write. */
  dryRun?: boolean;
  /** undo puts back the bytes the session's last rewind replaced. */
  undo?: boolean;
  workDoneToken?: ProgressToken;
}

/** RewindResult is what a rewind did (or, with dryRun, would do). */
export interface RewindResult {
  session: string;
  dryRun: boolean;
  restored: string[];
  removed: string[];
  conflicts: string[];
  notRestorable: RewindNotRestorable[];
  bashCommands: string[];
  /** undo names the rewind that pi/rewind undo takes back (null when no file changed). */
  undo: string | null;
  /** files is the preview of a dry run: every file the rewind brings back. */
  files: RewindFile[];
  /** leafId and Position: the conversation's leaf and where it continues from, when it moved. */
  leafId?: string | null;
  position?: string | null;
  notices: string[];
}

/** RewindNotRestorable is a file the session cannot bring back, and why. */
export interface RewindNotRestorable {
  path: string;
  reason: string;
}

/** RewindFile is one file of a rewind's preview: what it holds and what the rewind writes (exists false: absent; the rewind removes it). */
export interface RewindFile {
  path: string;
  absPath: string;
  exists: boolean;
  current: string;
  targetExists: boolean;
  target: string;
  conflict: boolean;
  expectedKnown: boolean;
  /** expected is what the session's last change left (the other side of a conflict). */
  expected: string;
  /** diff is the unified diff from the disk to what the rewind writes. */
  diff: string;
}

/** CondenseParams are pi/condense's params. */
export interface CondenseParams {
  session?: string;
  /** fromId and ToID bound the range of the context (both included); restore takes FromID only. */
  fromId: string;
  toId?: string;
  instructions?: string;
  dryRun?: boolean;
  restore?: boolean;
  force?: boolean;
  workDoneToken?: ProgressToken;
}

/** CondenseResult is a condensed (or, with dryRun, previewed; with restore, restored) range of the context. */
export interface CondenseResult {
  session: string;
  dryRun: boolean;
  /** targets are the entries of the range: the first holds the summary, the others are hidden. */
  targets: string[];
  /** summary is what the first one holds. */
  summary: string;
  summarizer: string;
  /** coverage is what the summary carries of the range's critical entities. */
  coverage: Coverage;
  /** entries are the context_edit entries written. */
  entries: ContextEditEntry[];
  tokensBefore: number;
  tokensAfter: number;
  notices: string[];
}

/** Coverage is how much of the summarized range's entities a summary carries. */
export interface Coverage {
  entities: Entity[];
  missing: Entity[];
  /** covered is the share of Entities the summary carries (1 when there are none). */
  covered: number;
}

/** Entity is one thing of the summarized range a checkpoint should carry. */
export interface Entity {
  /** kind is file, command, error, url, id, constraint or request. */
  kind: string;
  text: string;
  /** entryId is the entry of the message the entity was first seen in ("" for a modified file, which the file operations name): the message a user can pin so that every summary quotes it. */
  entryId?: string;
  /** pinnable: EntryID is a user message, which a pin quotes verbatim. */
  pinnable?: boolean;
}

export interface ContextBySizeParams {
  session?: string;
  /** limit keeps the largest so many messages (0: all). */
  limit?: number;
}

/** ContextBySizeResult lists what the context is made of, largest first. */
export interface ContextBySizeResult {
  session: string;
  leafId: string | null;
  /** tokens and Percent are pi/contextUsage's figure (null after a compaction until the next answer gives usage). */
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
  projectedTokens: number;
  messages: ContextItem[];
}

/** ContextItem is one entry of the projected context, with what it costs. */
export interface ContextItem {
  entryId: string;
  /** type is the entry type; Role the role of its (first) message, "custom" for a custom_message, compactionSummary for a compaction. */
  type: string;
  role: string;
  /** toolName is the tool of a toolResult, or the tools an assistant message calls (comma-separated). */
  toolName?: string;
  /** tokens is Pi's estimateTokens of the messages the entry contributes now (0 for an omitted one); OriginalTokens the same for its untouched messages, when edited. */
  tokens: number;
  originalTokens?: number;
  preview: string;
  /** editable: an edit may name the entry (user/assistant/toolResult/custom). */
  editable: boolean;
  /** contextEdit is "omitted" or "replaced" when the latest edit changes the entry. */
  contextEdit?: string;
}

export interface ContextBreakdownParams {
  session?: string;
  /** history adds the context's size along the path (a projection per event: ask for it when it is shown). */
  history?: boolean;
}

/** ContextBreakdownResult is the context at a glance: what fills it by kind (the kinds add up to total, Pi 1.6.0's estimate of the context), the window it fills and where Pi compacts, and with history: true, its size after each reply and event of the path. */
export interface ContextBreakdownResult {
  session: string;
  leafId: string | null;
  total: number;
  /** usageTokens is Pi's figure resting on the last reply's usage (what the status bar shows), null when that usage is stale (after a compaction or a context edit). */
  usageTokens: number | null;
  contextWindow: number;
  reserveTokens: number;
  /** threshold is where Pi compacts (contextWindow - reserveTokens); null when the session's settings disable compaction. */
  threshold: number | null;
  kinds: KindTokens[];
  /** history is there when asked for. */
  history?: SizePoint[];
}

/** KindTokens is one kind of the breakdown: its tokens, how many entries contribute to it, and the largest of them. */
export interface KindTokens {
  kind: string;
  tokens: number;
  entries: number;
  /** largest are the entries that contribute most, largest first (at most LargestPerKind; for system, each system message's own estimate, which the replayed prompt folds together). */
  largest: KindEntry[];
}

/** KindEntry is what one entry contributes to one kind. */
export interface KindEntry {
  entryId: string;
  tokens: number;
  preview: string;
}

/** SizePoint is the context's size at one entry of a path. */
export interface SizePoint {
  entryId: string;
  tokens: number;
  source: string;
  /** event is the event of an event entry, nil on an assistant reply. */
  event: string | null;
  /** tokensBefore is a compaction's own figure of the context it compacted. */
  tokensBefore?: number;
  /** cleared: a context edit that cleared a tool result (pi-lsp's placeholder). */
  cleared?: boolean;
}

export interface TreeParams {
  session?: string;
  /** flat gives the nodes in depth-first order with parent and depth. */
  flat?: boolean;
  /** offset and Limit page the flat form (a limit of 0 means all). */
  offset?: number;
  limit?: number;
}

/** TreeResult is the nested entry tree. */
export interface TreeResult {
  session: string;
  leafId: string | null;
  roots: TreeNode[];
}

/** TreeNode is one node of pi/tree's answer. */
export interface TreeNode {
  id: string;
  type: EntryType;
  role?: MessageRole;
  label?: string;
  preview?: string;
  timestamp: string;
  onPath: boolean;
  pinned?: boolean;
  /** contextEdit is "omitted" or "replaced" for an entry of the active branch whose context content the latest context_edit changes. */
  contextEdit?: ContextEditState;
  /** editable: pi/editContext may name the entry (a user, assistant, toolResult or custom message of the current context: Pi's rule, decided here for every editor). */
  editable?: boolean;
  isLeaf: boolean;
  children: TreeNode[];
}

/** FlatTreeResult is one page of the tree in depth-first order. */
export interface FlatTreeResult {
  session: string;
  leafId: string | null;
  total: number;
  offset: number;
  nodes: FlatTreeNode[];
}

/** FlatTreeNode is one node of pi/tree's flat answer: the same fields as TreeNode with the parent instead of the children, in depth-first order (children sorted as in the tree). Long linear sessions nest thousands of levels deep in the nested form, past what some JSON decoders accept; the flat form has no depth. */
export interface FlatTreeNode extends Omit<TreeNode, "children"> {
  parentId?: string;
  depth: number;
  childCount: number;
}

export interface SessionsParams {
  /** cwd lists the sessions of another working directory. */
  cwd?: string;
}

/** SessionsResult lists the sessions of the workspace, newest first. */
export interface SessionsResult {
  /** current is the server's current session, null when none is chosen yet. */
  current: string | null;
  dir: string;
  sessions: SessionInfo[];
}

/** SessionInfo is one session file of a listing (Pi's SessionInfo, as its session picker lists them). */
export interface SessionInfo {
  path: string;
  id: string;
  /** cwd is the working directory the header records. */
  cwd: string;
  name?: string;
  /** parentSession is the session this one was forked from, when the header says. */
  parentSession?: string;
  created: string;
  modified: string;
  messageCount: number;
  firstMessage: string;
}

export interface SelectSessionParams {
  path: string;
}

/** SelectSessionResult is the session now current. */
export interface SelectSessionResult {
  session: string;
}

export interface SessionParams {
  session?: string;
}

/** FilesResult is the files read and modified on the current path. */
export interface FilesResult {
  session: string;
  readFiles: string[];
  modifiedFiles: string[];
  /** stale lists the files changed on disk since the agent last read them. */
  stale: StaleFile[];
}

/** StaleFile is a file that changed on disk after the agent last read it. */
export interface StaleFile {
  path: string;
  readAt: string;
  /** absent for a deleted file */
  modifiedAt?: string;
  /** "modified" or "deleted" */
  reason: string;
}

/** ContextResult is what the LLM would be sent now. */
export interface ContextResult {
  session: string;
  leafId: string | null;
  messageCount: number;
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
  /** estimate and Source are pi/contextUsage's. */
  estimate: number | null;
  source: string;
  lastCompaction?: LastCompaction;
}

/** LastCompaction is the newest compaction of the context. */
export interface LastCompaction {
  id: string;
  summary: string;
  tokensBefore: number;
  firstKeptEntryId: string;
}

export interface AppendParams {
  session?: string;
  /** messages are Pi AgentMessages, each written as it was sent (decoded one at a time, see decodeAppendMessages, so a long request is not held twice). */
  messages: AgentMessage[];
  /** create starts a new session for the workspace when there is none (or when true and no session is named). */
  create?: boolean;
  force?: boolean;
}

/** AppendResult names the entries written. */
export interface AppendResult {
  session: string;
  entryIds: string[];
  leafId: string;
  /** autoCompaction is the reason of the automatic compaction the append started. */
  autoCompaction?: "threshold" | "overflow";
}

export interface PreviewCompactionParams {
  session?: string;
  instructions?: string;
  workDoneToken?: ProgressToken;
}

/** CompactionPreview is what a compaction would do now, written nowhere. */
export interface CompactionPreview {
  session: string;
  /** spanKey names the previewed span: pass it back to pi/commitCompaction. */
  spanKey: string;
  firstKeptEntryId: string;
  isSplitTurn: boolean;
  messagesToSummarize: number;
  keptMessages: number;
  tokensBefore: number;
  tokensAfter: number;
  summary: string;
  audit: Audit;
  /** fromDraft: the summary is the background draft (answered at once). */
  fromDraft: boolean;
  /** pinned are the texts of the pinned messages the summary must quote. */
  pinned: string[] | null;
  /** coverage is what the summary carries of the summarized range's critical entities (files modified, commands, error strings, URLs, ids, the user's constraints and latest request), and what it drops: pin a pinnable entity's entry, or name the entity in the instructions and preview again. */
  coverage: Coverage;
}

export interface CommitCompactionParams {
  session?: string;
  summary: string;
  spanKey: string;
  instructions?: string;
  acceptDroppedPins?: boolean;
  force?: boolean;
}

export interface PreviewBranchSummaryParams {
  session?: string;
  targetId: string;
  instructions?: string;
  workDoneToken?: ProgressToken;
}

/** BranchSummaryPreview is the summary of the branch a navigation would leave. */
export interface BranchSummaryPreview {
  session: string;
  targetId: string;
  /** leafId is the leaf the preview was made from: pass it back as pi/navigate's expectLeafId. */
  leafId: string | null;
  commonAncestorId: string | null;
  entries: number;
  summary: string;
}

/** SessionChanged is sent when a session file changed, by anyone. */
export interface SessionChanged {
  session: string;
  leafId: string | null;
  entries: number;
  /** owner is the running pi that holds the file. */
  owner?: SessionOwner;
  /** current: the server's current session (also on fileOps, contextUsage and draftReady). */
  current: boolean;
  /** summarizer is the summarizer and model a compaction of the session would use (the session's model, pi-lsp's summaryModel or --summarizer; found without resolving the credential), and, when the extractive summary stands in for the model wanted, why and the fix. Editors show it before a compaction ("Compact with claude-sonnet-4-5 via anthropic"). */
  summarizer?: SummarizerChoice;
}

/** SessionOwner is a running pi that writes a session. */
export interface SessionOwner {
  pid: number;
  /** bridge: it loaded pi-lsp's Pi extension, so writes go through it (editors show "live"). */
  bridge: boolean;
  piVersion?: string;
}

/** SummarizerChoice says which summarizer a job uses, with which model, and, when the model it wanted could not be used, why and what fixes it. */
export interface SummarizerChoice {
  /** kind is "extractive", "model" (a model of Pi's catalog) or "openai" (an OpenAI-compatible endpoint configured for pi-lsp). */
  kind: "extractive" | "model" | "openai";
  /** provider and Model name the model ("anthropic", "claude-sonnet-4-5"); API is the API it is asked over. */
  provider?: string;
  model?: string;
  api?: string;
  /** thinkingLevel is the reasoning asked for ("off" or a level). */
  thinkingLevel?: string;
  /** from says where the model came from: "session" (the session's current model), "settings" (Pi's defaultProvider/defaultModel), "config" (pi-lsp's model setting or --model). */
  from?: string;
  /** credential says where the key came from (never the key). */
  credential?: string;
  /** wanted is the model ("provider/id") that could not be used, with Why and the Fix (a command or a variable), when Kind fell back to extractive. */
  wanted?: string;
  why?: string;
  fix?: string;
  /** label is Describe: one line for a status bar ("Compact with claude-sonnet-4-5 via anthropic"); Notice is the line saying the wanted model was not used, when it was not. */
  label: string;
  notice?: string;
}

/** CompactionStart is sent when a compaction begins. */
export interface CompactionStart {
  session: string;
  reason: "manual" | "threshold" | "overflow";
  via?: "pi";
}

/** CompactionEnd is Pi's compaction_end event. */
export interface CompactionEnd {
  session: string;
  reason: "manual" | "threshold" | "overflow";
  /** result is Pi's compaction result (the live pi's own when via is "pi"). */
  result?: CompactionResult;
  aborted: boolean;
  willRetry: boolean;
  /** errorMessage is prefixed as Pi prefixes it: "Compaction failed: ", "Auto-compaction failed: " or "Context overflow recovery failed: ". */
  errorMessage?: string;
  via?: "pi";
}

/** CompactionResult is Pi 1.6.0's CompactionResult: what a compaction answers, whoever made it. It is the one type of the three answers pi-lsp sees: Pi's own (a live pi's compaction_end event and its answer through pi-lsp's bridge) and pi-lsp's (the result of pi/compactionEnd). */
export interface CompactionResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  /** estimatedTokensAfter is the estimate of the context after the compaction (absent when a live pi did not say). */
  estimatedTokensAfter?: number;
  /** usage is the summary calls' usage. */
  usage?: Usage;
  /** details are the file lists of Pi's own compaction, or an extension's details. */
  details?: unknown;
}

/** CompactionFailed is Pi's session_compact_failed: after every failed or cancelled compaction. */
export interface CompactionFailed {
  session: string;
  reason: "manual" | "threshold" | "overflow";
  aborted: boolean;
  willRetry: false;
  errorMessage?: string;
}

/** FileOps is sent with the file lists of the session's path. */
export interface FileOps {
  session: string;
  readFiles: string[];
  modifiedFiles: string[];
  stale: StaleFile[];
  current: boolean;
}

/** ContextUsage is Pi 1.6.0's getContextUsage (percent unrounded). */
export interface ContextUsage {
  session: string;
  /** tokens is null, as Pi reports it, after a compaction until an answer gives usage again. */
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
  current: boolean;
  /** estimate is Pi's estimate of the context (the sum of its messages' estimates) when tokens is null: what a status shows, marked as an estimate, until the next answer brings usage; null otherwise. */
  estimate: number | null;
  /** source says which figure a status shows: "usage" (tokens, resting on the last answer's usage plus estimates of what follows it) or "estimate" (estimate when tokens is null; else tokens with no usage to trust: after a context edit, or in a session without any). */
  source: string;
}

/** ToolOutputCleared is sent when the first tier of automatic compaction (the clearToolOutput setting) cleared old tool output of a hosted session. */
export interface ToolOutputCleared extends ClearToolOutputResult {
  /** reason is what asked for a compaction: "threshold". */
  reason: "threshold";
  /** compacting: the context is still above the threshold, and a compaction follows. */
  compacting: boolean;
}

/** DraftReady says a background draft is ready: the next compaction of this span is instant. */
export interface DraftReady {
  session: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  incremental: boolean;
  current: boolean;
}

/** BeforeCompact is Pi's session_before_compact event. */
export interface BeforeCompact {
  session: string;
  reason: "manual" | "threshold" | "overflow";
  willRetry: boolean;
  customInstructions: string;
  preparation: BeforeCompactPrepared;
}

/** BeforeCompactPrepared is the preparation a hook may replace the summary of. */
export interface BeforeCompactPrepared {
  firstKeptEntryId: string;
  tokensBefore: number;
  isSplitTurn: boolean;
  messagesToSummarize: number;
  turnPrefixMessages: number;
  previousSummary: string | null;
  readFiles: string[];
  modifiedFiles: string[];
  /** conversation is the summarized messages serialized as Pi serializes them. */
  conversation: string;
}

/** BeforeCompactAnswer is the client's answer to pi/beforeCompact (Pi's session_before_compact result). */
export interface BeforeCompactAnswer {
  cancel?: boolean;
  summary?: string;
  /** firstKeptEntryId: absent keeps the preparation's; null keeps nothing (Pi 1.6.0's retain-none compaction, whose firstKeptEntryId is its own id). */
  firstKeptEntryId?: string | null;
  tokensBefore?: number;
  details?: CompactionDetails;
  /** usage is the hook's own summary call, stored on the entry as Pi stores it. */
  usage?: Usage;
}

/** CompactionDetails are stored in the compaction entry. */
export interface CompactionDetails {
  readFiles?: string[];
  modifiedFiles?: string[];
  /** edited marks a summary the user edited before it was committed. */
  edited?: boolean;
}

/** BeforeTree is Pi's session_before_tree event. */
export interface BeforeTree {
  session: string;
  targetId: string;
  oldLeafId: string | null;
  commonAncestorId: string | null;
  entries: number;
  userWantsSummary: boolean;
  customInstructions: string;
  replaceInstructions: boolean;
  label: string;
}

/** BeforeTreeAnswer is the client's answer to pi/beforeTree (Pi's session_before_tree). */
export interface BeforeTreeAnswer {
  cancel?: boolean;
  summary?: { summary: string; details?: unknown };
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}

/** InitializationOptions is what the client may set through initializationOptions and workspace/didChangeConfiguration (the flat form; the nested form is VS Code's). Secrets are never part of it. Every field is optional: an absent one keeps the value set before, or the default. */
export interface InitializationOptions {
  /** session is the absolute path of a .jsonl session of the workspace to make current. */
  session?: string;
  /** keepRecentTokens overrides Pi's compaction.keepRecentTokens. */
  keepRecentTokens?: number;
  /** reserveTokens overrides Pi's compaction.reserveTokens. */
  reserveTokens?: number;
  /** drafts enables background drafts (pi/draftReady; off unless a client sets it true): with it off the server sends a conversation to a model only for a job the client asked for. */
  drafts?: boolean;
  /** clearToolOutput makes a threshold compaction of a hosted session clear old tool output first (pi/clearToolOutput's defaults; off unless a client sets it true): when the context is then below the threshold, no summary is made. */
  clearToolOutput?: boolean;
  /** The summarizer: unset (the default: the session's model when its credential resolves, else the extractive summary), "extractive" (no model), "model" (a model of Pi's catalog, which must be usable) or "openai" (an OpenAI-compatible endpoint). */
  summarizer?: "extractive" | "model" | "openai";
  /** baseUrl is the OpenAI-compatible endpoint, /v1 included. */
  baseUrl?: string;
  /** model is, for "openai", the endpoint's model; otherwise a separate summary model of Pi's catalog, "provider/id[:thinking]" (unset: the session's model). */
  model?: string;
  /** apiKeyEnv is the name of the environment variable that holds the key (default OPENAI_API_KEY); a name that does not end in _KEY or _TOKEN is refused (CheckKeyEnv). */
  apiKeyEnv?: string;
  /** contextWindow is the model's window, for thresholds and branch budgets (default DefaultContextWindow, 128000). */
  contextWindow?: number;
  /** maxTokens is the model's output limit (Pi's models.json maxTokens; default 16384 as Pi's for a custom model). A summary asks for it, shrunk to fit the window. */
  maxTokens?: number;
  /** provider names a provider of the user's Pi models.json whose baseUrl and key are used when BaseURL is empty. */
  provider?: string;
  /** summaryTimeout bounds the time one summary may take, retries and waits included (default DefaultSummaryTimeout). A slow local model that has not finished by then fails: raise it for such a model. */
  summaryTimeout?: number | string;
  /** stallTimeout is how long an attempt may receive no byte at all before it is abandoned and retried once (default DefaultStallTimeout). */
  stallTimeout?: number | string;
}

/** NestedSettings is the nested form of the settings didChangeConfiguration may send (VS Code's piLsp.* settings as a tree). */
export interface NestedSettings {
  piLsp?: PiLspSettingsTree;
}

/** PiLspSettingsTree is the object under settings.piLsp. */
export interface PiLspSettingsTree {
  summarizer?: SummarizerSettings;
  compaction?: CompactionSettings;
}

/** SummarizerSettings are piLsp.summarizer.*: the flat form's summarizer settings under other names (kind is the flat form's summarizer). */
export interface SummarizerSettings {
  kind?: "extractive" | "model" | "openai";
  baseUrl?: string;
  model?: string;
  apiKeyEnv?: string;
  contextWindow?: number;
  maxTokens?: number;
  drafts?: boolean;
}

/** CompactionSettings are piLsp.compaction.*. */
export interface CompactionSettings {
  reserveTokens?: number;
  keepRecentTokens?: number;
  clearToolOutput?: boolean;
}

/** MessageEntry is a message entry (pi/append writes them): one of Pi's AgentMessages. */
export interface MessageEntry {
  type: "message";
  /** id is 8 hex digits, unique in the file. */
  id: string;
  /** parentId is the entry this one follows in the tree, null for a root. */
  parentId: string | null;
  timestamp: string;
  message: AgentMessage;
}

/** LabelEntry is a label entry (Pi's LabelEntry): the label of the target, cleared when absent. */
export interface LabelEntry {
  type: "label";
  /** id is 8 hex digits, unique in the file. */
  id: string;
  /** parentId is the entry this one follows in the tree, null for a root. */
  parentId: string | null;
  timestamp: string;
  targetId: string;
  label?: string;
}

/** CustomEntry is a custom entry (Pi's CustomEntry): pi-lsp writes its navigation markers and pins as these; they are not part of the context. */
export interface CustomEntry {
  type: "custom";
  /** id is 8 hex digits, unique in the file. */
  id: string;
  /** parentId is the entry this one follows in the tree, null for a root. */
  parentId: string | null;
  timestamp: string;
  customType: string;
  data?: unknown;
}

/** pi/compact result. */
export type CompactResult = Exclusive<Compacted | CompactedViaPi | NothingToCompact>;

/** pi/navigate result. */
export type NavigateResult = Exclusive<Navigated | NavigateCancelled | NavigatedViaPi>;

/** pi/tree result. */
export type TreeAnswer = Exclusive<TreeResult | FlatTreeResult>;

/** pi/previewCompaction result. */
export type PreviewCompactionResult = Exclusive<CompactionPreview | NothingToCompact>;

/** pi/commitCompaction result. */
export type CommitCompactionResult = Compacted;

// END GENERATED
