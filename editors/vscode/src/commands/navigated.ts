// What a navigation tells the user once the session moved, from "Pi: Navigate" and from the
// save of a previewed branch summary alike.

import * as vscode from "vscode";
import { info } from "../notifications";

/** Says `parts` (where the session moved); when the entry navigated to was a user message,
 * says so and offers its text for the clipboard ("Copy Message"). */
export function infoMoved(parts: string[], editorText: string | undefined): void {
  const buttons: string[] = [];
  if (editorText) {
    parts.push("That entry was a user message: its text is ready to send again.");
    buttons.push("Copy Message");
  }
  void info(parts.join(" "), ...buttons).then((pick) => {
    if (pick === "Copy Message" && editorText) void vscode.env.clipboard.writeText(editorText);
  });
}
