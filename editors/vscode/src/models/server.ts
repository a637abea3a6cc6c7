// Where the pi-lsp binary is: piLsp.server.path if set, else bin/pi-lsp inside the extension
// (what the platform's package bundles: scripts/vsix-lib.sh), else pi-lsp on PATH; and whether
// the server's version is the extension's. Pure: node:fs and node:path only.

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

/** Where a lookup found the server, as the output channel says it. */
export function describeSource(source: "piLsp.server.path" | "bundled" | "PATH"): string {
  switch (source) {
    case "piLsp.server.path":
      return "from piLsp.server.path";
    case "bundled":
      return "bundled with the extension";
    case "PATH":
      return "from PATH";
  }
}

/**
 * The message for a server whose version (initialize's serverInfo.version) is not the
 * extension's, or undefined when they agree or the server reports none.
 */
export function versionMismatch(serverVersion: string | undefined, extensionVersion: string): string | undefined {
  if (!serverVersion || serverVersion === extensionVersion) return undefined;
  return `pi-lsp ${serverVersion} server, extension ${extensionVersion}: update one of them`;
}
