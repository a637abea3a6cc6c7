// The bridge protocol between pi-lsp and this extension (protocol 1: newline-delimited
// JSON over the bridge's Unix socket), generated from internal/bridge's Go types by
// `go generate ./internal/rpc`: do not edit. Types only (extension.ts imports them with
// `import type`); docs/protocol.md describes the protocol.

/** The protocol version (hello's protocol). */
export type ProtocolVersion = 1;

/** A request's id: a number, or a string of 1 to 64 letters, digits, '.', '_', ':' or '-' (any other is refused as malformed). */
export type RequestID = number | string;

/** Why a request was refused or failed. */
export type ErrorCode = "malformed" | "unauthorized" | "protocol" | "unknownType" | "invalidParams" | "busy" | "notFound" | "unsupported" | "failed" | "aborted" | "nothingToCompact";

/** A request pi-lsp sends (one line each). */
export type Request = HelloRequest | StatusRequest | PingRequest | CompactRequest | NavigateRequest | LabelRequest | CancelRequest | ContextEditRequest;

/** A line pi sends: the one answer to each request, and the events while it runs. */
export type Frame = OKResponse | ErrorResponse | EventFrame;

/** One of Pi's events, as the bridge forwards it while a request runs. */
export type BridgeEvent = CompactionStartEvent | BeforeCompactEvent | CompactionEndEvent | BeforeTreeEvent | TreeEvent;

/** The result type of each request type (contextEdit is always refused). */
export interface Results {
  hello: Status;
  status: Status;
  ping: Pong;
  compact: CompactResult;
  navigate: NavigateResult;
  label: LabelResult;
  cancel: CancelResult;
  contextEdit: never;
}

/** HelloRequest must be a connection's first request: it authenticates with the registry's token. Any other first request, a wrong token or another protocol is refused and the connection closed. */
export interface HelloRequest {
  id: RequestID;
  type: "hello";
  protocol: 1;
  token: string;
}

/** StatusRequest asks for pi's state. */
export interface StatusRequest {
  id: RequestID;
  type: "status";
}

/** PingRequest asks whether pi still serves. */
export interface PingRequest {
  id: RequestID;
  type: "ping";
}

/** CompactRequest makes pi compact its session (ctx.compact). */
export interface CompactRequest {
  id: RequestID;
  type: "compact";
  customInstructions?: string;
}

/** NavigateRequest moves pi's leaf (navigateTree, in a command handler of the extension: the only context Pi gives it), with a branch summary when asked. */
export interface NavigateRequest {
  id: RequestID;
  type: "navigate";
  targetId: string;
  summarize?: boolean;
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}

/** LabelRequest sets an entry's label through pi.setLabel; no label clears it. */
export interface LabelRequest {
  id: RequestID;
  type: "label";
  entryId: string;
  label?: string;
}

/** CancelRequest aborts the running compaction or branch summary that the request named by its target, on this connection, started (ctx.abort()). */
export interface CancelRequest {
  id: RequestID;
  type: "cancel";
  target: RequestID;
}

/** ContextEditRequest is always refused (unsupported): Pi 1.6.0's extension API appends context edits only as drafts returned from a running turn's turn_end or agent_before_settle handlers. */
export interface ContextEditRequest {
  id: RequestID;
  type: "contextEdit";
}

/** OKResponse answers a request that succeeded, with the result of its type (Results). */
export interface OKResponse {
  type: "response";
  id: RequestID;
  ok: true;
  result: unknown;
}

/** ErrorResponse is the answer to a request that was refused or failed; its id is null when the request had none that could be read. */
export interface ErrorResponse {
  type: "response";
  id: RequestID | null;
  ok: false;
  error: BridgeError;
}

/** BridgeError is a refusal or failure the bridge answered (ErrorResponse's error). */
export interface BridgeError {
  /** code says why (one of ErrorCodes). */
  code: ErrorCode;
  message: string;
}

/** EventFrame carries one of Pi's events while the request it names runs. */
export interface EventFrame {
  type: "event";
  id: RequestID;
  event: BridgeEvent;
}

/** Status is the answer to hello and status. */
export interface Status {
  protocol: number;
  pid: number;
  sessionFile: string;
  piVersion: string;
  /** idle: pi's agent is not running (writes are served only then). */
  idle: boolean;
  /** running is the pi-lsp request pi is running, null when none. */
  running: Running | null;
  /** leafId is pi's leaf, null when it has none. */
  leafId: string | null;
  /** version is the version of pi-lsp's Pi extension (absent before 0.2.0). */
  version?: string;
}

/** Running names the request a bridge runs. */
export interface Running {
  id: RequestID;
  type: "compact" | "navigate";
}

/** Pong answers ping. */
export interface Pong {
  pong: true;
}

/** CompactResult is Pi's answer to a compaction. */
export interface CompactResult {
  /** result is Pi's CompactionResult. */
  result: CompactionResult;
  /** entry is the compaction entry Pi appended (session_compact's compactionEntry), null if Pi did not say. */
  entry: CompactionEntry | null;
  leafId: string | null;
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

/** NavigateResult is Pi's answer to a navigation. */
export interface NavigateResult {
  cancelled: boolean;
  leafId: string | null;
  oldLeafId: string | null;
  /** summaryEntry is the branch_summary entry Pi wrote (session_tree's), null without one. */
  summaryEntry: BranchSummaryEntry | null;
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

/** LabelResult answers label. */
export interface LabelResult {
  entryId: string;
  label: string | null;
  leafId: string | null;
}

/** CancelResult answers cancel. */
export interface CancelResult {
  /** cancelled: the target was running and was asked to abort. */
  cancelled: boolean;
}

/** CompactionStartEvent is sent when pi starts the compaction (Pi's compaction_start). */
export interface CompactionStartEvent {
  type: "compaction_start";
  reason: "manual";
}

/** BeforeCompactEvent is Pi's session_before_compact, in short. */
export interface BeforeCompactEvent {
  type: "session_before_compact";
  reason: string;
  customInstructions: string | null;
  tokensBefore?: number;
  firstKeptEntryId: string | null;
}

/** CompactionEndEvent is sent once when the compaction ends, done, failed or aborted (Pi's compaction_end). */
export interface CompactionEndEvent {
  type: "compaction_end";
  reason: string;
  willRetry: boolean;
  aborted: boolean;
  /** result is Pi's CompactionResult when the compaction was done. */
  result?: CompactionResult;
  /** errorMessage says why it failed ("Compaction failed: ..."). */
  errorMessage?: string;
}

/** BeforeTreeEvent is Pi's session_before_tree, in short. */
export interface BeforeTreeEvent {
  type: "session_before_tree";
  targetId: string;
  oldLeafId: string | null;
  commonAncestorId: string | null;
  /** entries counts the entries to summarize. */
  entries: number;
  userWantsSummary: boolean;
}

/** TreeEvent is Pi's session_tree: the navigation is done. */
export interface TreeEvent {
  type: "session_tree";
  newLeafId: string | null;
  oldLeafId: string | null;
  summaryEntry: BranchSummaryEntry | null;
}
