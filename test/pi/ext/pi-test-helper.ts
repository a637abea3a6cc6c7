/**
 * Test-only Pi extension used by pi-lsp's corpus generator (test/pi/rpc-scenarios.mjs).
 *
 * RPC mode has no command for tree navigation, labels or custom entries, but
 * RPC `prompt` runs extension commands. Every command reports its outcome as
 * a notify UI request whose message is "pi-test-helper:" + JSON, or
 * "pi-test-helper-error:" + message (see helper-commands.ts).
 *
 *   /navtree <id> [summarize] [label=<text>] [focus=<text until end>]
 *   /label <id> [text...]        (no text clears the label)
 *   /custom [tag]                custom entry (pi.appendEntry) + custom_message (pi.sendMessage)
 *   /leaf                        current leaf id and type
 *   /entries                     every entry: id, parentId, type, role
 */

import { registerCommonCommands } from "./helper-commands.ts";

export default function (pi: any) {
  registerCommonCommands(pi);
}
