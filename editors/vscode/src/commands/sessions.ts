// Choosing the session the views and commands work on.

import * as path from "node:path";
import * as vscode from "vscode";
import { customRequest, plain } from "../request";
import type { PiContext } from "../context";
import { oneLine } from "../models/tree";
import { showMessage } from "../notifications";
import { Methods, SessionsResult } from "../protocol";

/** pi.selectSession's result, as the server sends it. */
type SelectSessionResult = { session: string };

/** pi.selectSession with arguments ({path}): select it, then show it. */
export async function selectSession(pi: PiContext, params: object): Promise<SelectSessionResult | undefined> {
  const r = await plain<SelectSessionResult>(pi, "Selecting the session", "pi.selectSession", params);
  await pi.views.refresh();
  return r;
}

/** Palette "Pi: Select Session" / "Pi: List Sessions": the workspace's sessions, newest first. */
export async function selectSessionInteractive(pi: PiContext): Promise<SelectSessionResult | undefined> {
  const list = await customRequest<SessionsResult>(pi, "Listing the sessions", Methods.sessions);
  if (!list) return undefined;
  if (list.sessions.length === 0) {
    void showMessage(pi, {
      severity: "info",
      text: "Pi has no session for this workspace yet: start Pi in this folder, then run this again.",
      actions: [],
    });
    return undefined;
  }
  type Item = vscode.QuickPickItem & { path: string };
  const items: Item[] = list.sessions.map((s) => ({
    path: s.path,
    label: `${s.path === list.current ? "$(check) " : ""}${s.name || oneLine(s.firstMessage, 80) || path.basename(s.path)}`,
    description: `${new Date(s.modified).toLocaleString()} · ${s.messageCount} messages`,
    detail: s.name ? `${oneLine(s.firstMessage, 100)} — ${s.path}` : s.path,
  }));
  const pick = await vscode.window.showQuickPick(items, {
    title: "Pi: Select Session",
    placeHolder: "Sessions of this workspace, newest first",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!pick) return undefined;
  return selectSession(pi, { path: pick.path });
}
