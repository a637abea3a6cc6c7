// VS Code settings (piLsp.*) to the server's initializationOptions. Pure: no vscode import.

import type { InitializationOptions } from "../protocol";

export interface PiLspSettings {
  serverPath: string;
  summarizerKind: string;
  baseUrl: string;
  model: string;
  apiKeyEnv: string;
  reserveTokens: number | null | undefined;
  keepRecentTokens: number | null | undefined;
}

export const SETTING_KEYS = [
  "server.path",
  "summarizer.kind",
  "summarizer.baseUrl",
  "summarizer.model",
  "summarizer.apiKeyEnv",
  "compaction.reserveTokens",
  "compaction.keepRecentTokens",
  "trace.server",
] as const;

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
    reserveTokens: num(get("compaction.reserveTokens")),
    keepRecentTokens: num(get("compaction.keepRecentTokens")),
  };
}

/** Only what the user set: absent fields keep the server's defaults (and its PI_LSP_* env fallbacks). */
export function toInitializationOptions(s: PiLspSettings): InitializationOptions {
  const o: InitializationOptions = {};
  if (s.summarizerKind === "extractive" || s.summarizerKind === "openai") o.summarizer = s.summarizerKind;
  if (s.baseUrl) o.baseUrl = s.baseUrl;
  if (s.model) o.model = s.model;
  if (s.apiKeyEnv) o.apiKeyEnv = s.apiKeyEnv;
  if (typeof s.reserveTokens === "number") o.reserveTokens = s.reserveTokens;
  if (typeof s.keepRecentTokens === "number") o.keepRecentTokens = s.keepRecentTokens;
  return o;
}

/** The didChangeConfiguration payload: `{settings: {piLsp: <same shape as initializationOptions>}}`. */
export function didChangeConfigurationParams(s: PiLspSettings): { settings: { piLsp: InitializationOptions } } {
  return { settings: { piLsp: toInitializationOptions(s) } };
}
