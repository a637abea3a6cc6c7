import * as fs from "node:fs";

// Test log: when PI_LSP_VSCODE_TEST_LOG names a file, the extension appends one JSON line per
// notable event (client started, views refreshed, progress, command results). The end-to-end
// test reads it next to what it sees on screen. Off (no file) in normal use.
export function testLog(event: string, data: Record<string, unknown> = {}): void {
  const file = process.env.PI_LSP_VSCODE_TEST_LOG;
  if (!file) return;
  try {
    fs.appendFileSync(file, JSON.stringify({ t: Date.now(), event, ...data }) + "\n");
  } catch {
    // a test aid only
  }
}
