// View model of the "Files" view: files the agent read and modified on the current path of the
// session (pi.files / pi/fileOps). Pure: node:path only, no vscode import.

import * as path from "node:path";

export type FileState = "modified" | "read";

/** Why the agent's view of a file is out of date (pi/fileOps `stale`). */
export interface StaleInfo {
  reason: "modified" | "deleted" | string;
  readAt?: string;
  modifiedAt?: string;
}

export interface FileItem {
  state: FileState;
  /** The path as the session records it. */
  raw: string;
  /** Absolute path (relative paths resolve against the session's working directory). */
  absPath: string;
  /** File name. */
  label: string;
  /** Folder, relative to the workspace when inside it. */
  description: string;
  tooltip: string;
  /** Set when the file changed on disk since the agent last read it. */
  stale?: StaleInfo;
}

export interface FileGroup {
  state: FileState;
  label: string;
  items: FileItem[];
}

export interface FilesModel {
  groups: FileGroup[];
  /** Absolute paths of modified files (for the explorer's FileDecoration badge). */
  modified: Set<string>;
  /** Absolute paths of stale files (changed on disk since the agent read them), with why. */
  stale: Map<string, StaleInfo>;
  total: number;
}

export function expandHome(p: string, home: string | undefined): string {
  if (home && (p === "~" || p.startsWith("~/"))) return path.join(home, p.slice(1));
  return p;
}

export function resolveFile(raw: string, cwd: string, home?: string): string {
  const p = expandHome(raw.trim(), home);
  return path.normalize(path.isAbsolute(p) ? p : path.resolve(cwd, p));
}

function describe(absPath: string, cwd: string): string {
  const dir = path.dirname(absPath);
  const rel = path.relative(cwd, dir);
  if (rel === "") return "";
  if (!rel.startsWith("..") && !path.isAbsolute(rel)) return rel;
  return dir;
}

/** A timestamp as "YYYY-MM-DD HH:MM:SS" (local time), or "" when missing or invalid (Go's zero time too). */
export function formatStamp(ts: string | undefined): string {
  if (!ts) return "";
  const d = new Date(ts);
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() <= 1) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** What a stale file's tooltip and description say. */
export function staleText(s: StaleInfo): { short: string; long: string } {
  const read = formatStamp(s.readAt);
  const readPart = read ? ` (read at ${read})` : "";
  if (s.reason === "deleted") {
    return { short: "deleted since read", long: `Deleted since the agent read it${readPart}: the agent's view of this file is stale.` };
  }
  const mod = formatStamp(s.modifiedAt);
  return {
    short: "changed since read",
    long: `Changed on disk${mod ? ` at ${mod}` : ""} since the agent read it${readPart}: the agent's view of this file is stale.`,
  };
}

/** Stale files by absolute path (paths resolve like the read and modified lists). */
export function staleMap(stale: readonly { path?: unknown; reason?: unknown; readAt?: unknown; modifiedAt?: unknown }[] | null | undefined, cwd: string, home?: string): Map<string, StaleInfo> {
  const out = new Map<string, StaleInfo>();
  for (const s of stale ?? []) {
    if (!s || typeof s.path !== "string" || s.path.trim() === "") continue;
    const info: StaleInfo = { reason: typeof s.reason === "string" ? s.reason : "modified" };
    if (typeof s.readAt === "string") info.readAt = s.readAt;
    if (typeof s.modifiedAt === "string" && formatStamp(s.modifiedAt)) info.modifiedAt = s.modifiedAt;
    out.set(resolveFile(s.path, cwd, home), info);
  }
  return out;
}

export function buildFilesModel(
  result: {
    readFiles?: readonly string[] | null;
    modifiedFiles?: readonly string[] | null;
    stale?: readonly { path: string; reason?: string; readAt?: string; modifiedAt?: string }[] | null;
  },
  cwd: string,
  home?: string,
): FilesModel {
  const modified = new Set<string>();
  const stale = staleMap(result.stale, cwd, home);
  const make = (raw: string, state: FileState): FileItem => {
    const absPath = resolveFile(raw, cwd, home);
    const item: FileItem = {
      state,
      raw,
      absPath,
      label: path.basename(absPath) || absPath,
      description: describe(absPath, cwd),
      tooltip: `${absPath}\n${state === "modified" ? "Modified (written or edited) by the agent" : "Read by the agent"} on the current path of the session`,
    };
    const st = stale.get(absPath);
    if (st) {
      const t = staleText(st);
      item.stale = st;
      item.description = item.description ? `${item.description} · ${t.short}` : t.short;
      item.tooltip += `\nStale: ${t.long}`;
    }
    return item;
  };
  const dedupe = (list: readonly string[] | null | undefined, state: FileState, skip: Set<string>): FileItem[] => {
    const out: FileItem[] = [];
    const seen = new Set<string>();
    for (const raw of list ?? []) {
      if (typeof raw !== "string" || raw.trim() === "") continue;
      const item = make(raw, state);
      if (seen.has(item.absPath) || skip.has(item.absPath)) continue;
      seen.add(item.absPath);
      out.push(item);
    }
    return out;
  };
  const mod = dedupe(result.modifiedFiles, "modified", new Set());
  for (const m of mod) modified.add(m.absPath);
  // Stale files come from the agent's reads; one missing from both lists is listed as read.
  const listed = new Set<string>([...modified, ...(result.readFiles ?? []).filter((r) => typeof r === "string" && r.trim() !== "").map((r) => resolveFile(r, cwd, home))]);
  const extraReads = (result.stale ?? []).map((s) => s?.path).filter((p): p is string => typeof p === "string" && p.trim() !== "" && !listed.has(resolveFile(p, cwd, home)));
  const read = dedupe([...(result.readFiles ?? []), ...extraReads], "read", modified);
  const groups: FileGroup[] = [];
  const staleCount = (items: FileItem[]) => items.filter((i) => i.stale).length;
  const label = (name: string, items: FileItem[]) => {
    const n = staleCount(items);
    return `${name} (${items.length}${n > 0 ? `, ${n} stale` : ""})`;
  };
  if (mod.length > 0) groups.push({ state: "modified", label: label("Modified", mod), items: mod });
  if (read.length > 0) groups.push({ state: "read", label: label("Read", read), items: read });
  return { groups, modified, stale, total: mod.length + read.length };
}

/** The working directory a session belongs to, from Pi's folder name `--home-me-proj--`. */
export function decodeSessionDir(dirName: string): string | undefined {
  const m = /^--(.*)--$/.exec(dirName);
  if (!m) return undefined;
  // Lossy: "-" stands for "/", "\" and ":" alike; only the POSIX form is rebuilt.
  return "/" + m[1]!.replace(/-/g, "/");
}

/** Pi's session folder name for a working directory. */
export function encodeSessionDir(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}
