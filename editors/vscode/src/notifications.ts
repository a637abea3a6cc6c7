// Messages to the user: a UserMessage (models/errors.ts) becomes a notification whose buttons
// run the action they name, and the "a running pi writes this session" question.

import * as vscode from "vscode";
import { CLIENT_ID } from "./identity";
import { Action, errorKind, UserMessage } from "./models/errors";
import { testLog } from "./testLog";

const LABELS: Record<Action, string> = {
  openSettings: "Open Settings",
  selectSession: "Select Session",
  showOutput: "Show Output",
  useExtractive: "Use Extractive Summarizer",
  refresh: "Refresh",
};

/**
 * What a message's own buttons reach: the output channel (Show Output) and the views
 * (Refresh). A PiContext is one; the client, which has no context, makes its own.
 */
export interface MessageTarget {
  readonly output: vscode.OutputChannel;
  readonly views: { refresh(): Promise<void> };
}

export async function showMessage(pi: MessageTarget, m: UserMessage): Promise<void> {
  const buttons = m.actions.map((a) => LABELS[a]);
  testLog("message", { severity: m.severity, text: m.text });
  const show =
    m.severity === "error"
      ? vscode.window.showErrorMessage
      : m.severity === "warning"
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  const pick = await show(m.text, ...buttons);
  const action = m.actions.find((a) => LABELS[a] === pick);
  switch (action) {
    case "openSettings":
      await vscode.commands.executeCommand("workbench.action.openSettings", "piLsp");
      break;
    case "selectSession":
      await vscode.commands.executeCommand("pi.selectSession");
      break;
    case "showOutput":
      pi.output.show(true);
      break;
    case "refresh":
      await pi.views.refresh();
      break;
    case "useExtractive":
      await vscode.workspace
        .getConfiguration(CLIENT_ID)
        .update("summarizer.kind", "extractive", vscode.ConfigurationTarget.Global);
      break;
  }
}

/** An information message, also written to the test log (the e2e test reads what was said). */
export function info(text: string, ...buttons: string[]): Thenable<string | undefined> {
  testLog("message", { severity: "info", text });
  return vscode.window.showInformationMessage(text, ...buttons);
}

/**
 * When Pi itself is writing the session the server refuses to write (data.kind ownedByPi);
 * the user may write anyway (force: true).
 */
export async function forceAfterOwnedByPi(what: string, err: unknown, params: object): Promise<boolean> {
  if (errorKind(err) !== "ownedByPi" || (params as { force?: boolean }).force) return false;
  const text = `${what}: a running pi process is writing this session (${String((err as Error).message ?? err)}). Writing at the same time can interleave with Pi's own entries.`;
  testLog("message", { severity: "warning", text });
  const pick = await vscode.window.showWarningMessage(text, { modal: true }, "Write Anyway");
  return pick === "Write Anyway";
}
