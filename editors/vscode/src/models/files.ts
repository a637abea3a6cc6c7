// View model of the "Files" view: files the agent read and modified on the current path of the
// session (pi.files / pi/fileOps). Pure: node:path only, no vscode import.

import * as path from "node:path";

export type FileState = "modified" | "read";

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

export function buildFilesModel(
  result: { readFiles?: readonly string[] | null; modifiedFiles?: readonly string[] | null },
  cwd: string,
  home?: string,
): FilesModel {
  const modified = new Set<string>();
  const make = (raw: string, state: FileState): FileItem => {
    const absPath = resolveFile(raw, cwd, home);
    return {
      state,
      raw,
      absPath,
      label: path.basename(absPath) || absPath,
      description: describe(absPath, cwd),
      tooltip: `${absPath}\n${state === "modified" ? "Modified (written or edited) by the agent" : "Read by the agent"} on the current path of the session`,
    };
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
  const read = dedupe(result.readFiles, "read", modified);
  const groups: FileGroup[] = [];
  if (mod.length > 0) groups.push({ state: "modified", label: `Modified (${mod.length})`, items: mod });
  if (read.length > 0) groups.push({ state: "read", label: `Read (${read.length})`, items: read });
  return { groups, modified, total: mod.length + read.length };
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
