// The extension's identity and its settings now: what every module may import without
// importing the language client (the commands, views and status bar import this, never
// client.ts, so there is no import cycle through the client).

import * as vscode from "vscode";
import { PiLspSettings, readSettings, settingValue } from "./models/settings";

export const CLIENT_ID = "piLsp"; // also the settings section: vscode-languageclient reads piLsp.trace.server
export const CLIENT_NAME = "Pi (pi-lsp)";

/**
 * The piLsp.* settings now. The binary, the summarizer, its endpoint, model and key variable and
 * background drafts (USER_LEVEL_SETTINGS) come from the user's settings only (settingValue).
 */
export function settingsNow(): PiLspSettings {
  const cfg = vscode.workspace.getConfiguration(CLIENT_ID);
  return readSettings((key) => settingValue(key, cfg.inspect(key)));
}
