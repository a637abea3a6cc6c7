// VS Code settings (piLsp.*) to the server's initializationOptions. Pure: no vscode import.

import type { InitializationOptions, PiLspSettingsTree } from "../protocol";

export type { PiLspSettingsTree };

export interface PiLspSettings {
  serverPath: string;
  summarizerKind: string;
  baseUrl: string;
  model: string;
  apiKeyEnv: string;
  /** piLsp.summarizer.drafts: true only when the user turned drafts on (always sent, so turning it off reaches the server). */
  drafts: boolean;
  reserveTokens: number | null | undefined;
  keepRecentTokens: number | null | undefined;
  /** piLsp.compaction.clearToolOutput: true only when the user turned it on (always sent, so turning it off reaches the server). */
  clearToolOutput: boolean;
}

/**
 * The settings that choose a program, an endpoint, a key, or whether the conversation is sent
 * at all: `machine` scope and capabilities.untrustedWorkspaces.restrictedConfigurations in
 * package.json, and read from the user's settings only (client.ts, userLevelSetting), so that a
 * cloned repository's .vscode/settings.json cannot pick the binary that is spawned or send an
 * environment variable to a URL of its choice.
 */
const USER_LEVEL = [
  "server.path",
  "summarizer.kind",
  "summarizer.baseUrl",
  "summarizer.model",
  "summarizer.apiKeyEnv",
  "summarizer.drafts",
] as const;
export const USER_LEVEL_SETTINGS: readonly string[] = USER_LEVEL;

export const SETTING_KEYS = [
  ...USER_LEVEL,
  "compaction.reserveTokens",
  "compaction.keepRecentTokens",
  "compaction.clearToolOutput",
  "trace.server",
] as const;

/** What WorkspaceConfiguration.inspect answers for a setting (the part read here). */
export interface InspectedSetting {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The value of a setting as the extension uses it: for USER_LEVEL_SETTINGS the user's own value
 * only, never a workspace's or a workspace folder's, whatever the workspace's trust; for the
 * others the most specific value set. Undefined when none applies: the server then keeps its own
 * default (package.json's defaults are the server's) and its PI_LSP_* environment fallbacks,
 * which are the user's too. Every setting the extension reads goes through here.
 */
export function settingValue(key: string, i: InspectedSetting | undefined): unknown {
  if (USER_LEVEL_SETTINGS.includes(key)) return i?.globalValue;
  return i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
}

function str(v: unknown): string {
  return typeof v === "string" ? v.trim() : "";
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined;
}

/**
 * Read settings through a getter that answers undefined for a setting the user did not set (the
 * extension uses WorkspaceConfiguration.inspect), so the server keeps its own defaults and its
 * PI_LSP_* environment fallbacks for those.
 */
export function readSettings(get: (key: string) => unknown): PiLspSettings {
  return {
    serverPath: str(get("server.path")),
    summarizerKind: str(get("summarizer.kind")),
    baseUrl: str(get("summarizer.baseUrl")),
    model: str(get("summarizer.model")),
    apiKeyEnv: str(get("summarizer.apiKeyEnv")),
    drafts: get("summarizer.drafts") === true,
    reserveTokens: num(get("compaction.reserveTokens")),
    keepRecentTokens: num(get("compaction.keepRecentTokens")),
    clearToolOutput: get("compaction.clearToolOutput") === true,
  };
}

/**
 * Only what the user set: absent fields keep the server's defaults (and its PI_LSP_* env
 * fallbacks). `drafts` and `clearToolOutput` are always there (false unless the user turned
 * them on), so that turning one off reaches a running server.
 */
export function toInitializationOptions(s: PiLspSettings): InitializationOptions {
  const o: InitializationOptions = {};
  if (s.summarizerKind === "extractive" || s.summarizerKind === "model" || s.summarizerKind === "openai") o.summarizer = s.summarizerKind;
  if (s.baseUrl) o.baseUrl = s.baseUrl;
  if (s.model) o.model = s.model;
  if (s.apiKeyEnv) o.apiKeyEnv = s.apiKeyEnv;
  o.drafts = s.drafts === true;
  if (typeof s.reserveTokens === "number") o.reserveTokens = s.reserveTokens;
  if (typeof s.keepRecentTokens === "number") o.keepRecentTokens = s.keepRecentTokens;
  o.clearToolOutput = s.clearToolOutput === true;
  return o;
}

/**
 * The didChangeConfiguration payload, `{settings: {piLsp: {summarizer: {kind, baseUrl, model,
 * apiKeyEnv, drafts}, compaction: {reserveTokens, keepRecentTokens, clearToolOutput}}}}` (the piLsp.* settings as a tree,
 * as the server reads them). Only what the user set is sent.
 */
export function didChangeConfigurationParams(s: PiLspSettings): { settings: { piLsp: PiLspSettingsTree } } {
  const o = toInitializationOptions(s);
  const tree: PiLspSettingsTree = {};
  const summarizer: NonNullable<PiLspSettingsTree["summarizer"]> = {};
  if (o.summarizer) summarizer.kind = o.summarizer;
  if (o.baseUrl) summarizer.baseUrl = o.baseUrl;
  if (o.model) summarizer.model = o.model;
  if (o.apiKeyEnv) summarizer.apiKeyEnv = o.apiKeyEnv;
  if (o.drafts !== undefined) summarizer.drafts = o.drafts;
  if (Object.keys(summarizer).length > 0) tree.summarizer = summarizer;
  const compaction: NonNullable<PiLspSettingsTree["compaction"]> = {};
  if (o.reserveTokens !== undefined) compaction.reserveTokens = o.reserveTokens;
  if (o.keepRecentTokens !== undefined) compaction.keepRecentTokens = o.keepRecentTokens;
  if (o.clearToolOutput !== undefined) compaction.clearToolOutput = o.clearToolOutput;
  if (Object.keys(compaction).length > 0) tree.compaction = compaction;
  return { settings: { piLsp: tree } };
}
