// Where the pi-lsp binary is: piLsp.server.path if set, else bin/pi-lsp inside the extension
// (what scripts/build-vsix.sh bundles), else pi-lsp on PATH. Pure: node:fs and node:path only.

import * as fs from "node:fs";
import * as path from "node:path";
import { missingServerMessage, UserMessage } from "./errors";

export type ServerLookup = { ok: true; command: string; source: "piLsp.server.path" | "bundled" | "PATH" } | { ok: false; message: UserMessage };

export function isExecutable(file: string, platform: NodeJS.Platform = process.platform): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (platform === "win32") return true;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function expandHome(p: string, home: string): string {
  return p === "~" || p.startsWith("~/") ? path.join(home, p.slice(1)) : p;
}

export function findServer(
  extensionPath: string,
  configured: string,
  pathEnv: string,
  home: string,
  platform: NodeJS.Platform = process.platform,
): ServerLookup {
  const exe = platform === "win32" ? "pi-lsp.exe" : "pi-lsp";
  if (configured) {
    const p = expandHome(configured, home);
    if (!fs.existsSync(p)) return { ok: false, message: missingServerMessage(configured, "no such file") };
    if (!isExecutable(p, platform)) return { ok: false, message: missingServerMessage(configured, "not an executable file") };
    return { ok: true, command: p, source: "piLsp.server.path" };
  }
  const bundled = path.join(extensionPath, "bin", exe);
  if (isExecutable(bundled, platform)) return { ok: true, command: bundled, source: "bundled" };
  for (const dir of pathEnv.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, exe);
    if (isExecutable(candidate, platform)) return { ok: true, command: candidate, source: "PATH" };
  }
  return { ok: false, message: missingServerMessage(undefined, "no bin/pi-lsp in the extension and no pi-lsp on PATH") };
}
