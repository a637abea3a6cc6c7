/**
 * Test-only Pi 1.6 extension used by pi-lsp's genuine 1.6 corpus generator
 * (test/pi/rpc-scenarios-1.6.mjs). Pi 1.6's RPC mode still has no command for
 * tree navigation or labels, and context edits and hook compactions are only
 * written through extension boundary drafts, so this extension provides them.
 * RPC `prompt` runs extension commands; every command reports its outcome as a
 * notify UI request whose message is "pi-test-helper:" + JSON, or
 * "pi-test-helper-error:" + message (see helper-commands.ts).
 *
 *   /navtree <id> [summarize] [label=<text>] [focus=<text until end>]
 *                                (waits for idle first: navigateTree rejects while busy)
 *   /label <id> [text...]        pi.setLabel (no text clears the label)
 *   /custom [tag]                custom entry (pi.appendEntry) + custom_message (pi.sendMessage)
 *   /tools <name,...>            pi.setActiveTools: the next request persists a system patch
 *   /arm <action>                the next completed turn_end returns boundary drafts:
 *                                  replace      context_edit replacements of that turn's user
 *                                               prompt (string), assistant (string, Pi stores a
 *                                               text block) and first tool result (blocks)
 *                                  omit         context_edit omission of that turn's assistant
 *                                  retain-none  a compaction draft with firstKeptEntryId null
 *                                  keep-all     a compaction draft that keeps everything from
 *                                               the branch's first user message on
 *   /warm-limit <n>              allow n prompt-cache warms, then answer "stop" to
 *                                cache_warming_decision (default: unlimited)
 *   /leaf                        current leaf id and type
 *   /entries                     every entry: id, parentId, type, role
 */

import { command, registerCommonCommands, report } from "./helper-commands.ts";

export default function (pi: any) {
  let armed: string | null = null;
  let warmLimit = Infinity;
  let warmDecisions = 0;

  registerCommonCommands(pi, { waitForIdle: true });

  command(pi, "tools", "Set the active tools: /tools <name,...>", (args) => {
    const names = args.split(/[\s,]+/).filter(Boolean);
    if (!names.length) throw new Error("usage: /tools <name,...>");
    pi.setActiveTools(names);
    return { active: pi.getActiveTools() };
  });

  command(pi, "arm", "Arm the next turn_end: /arm replace|omit|retain-none|keep-all", (args) => {
    const action = args.trim();
    if (!["replace", "omit", "retain-none", "keep-all"].includes(action)) throw new Error(`unknown /arm action: ${action}`);
    armed = action;
    return { action };
  });

  command(pi, "warm-limit", "Allow n prompt-cache warms: /warm-limit <n>", (args) => {
    const n = Number(args.trim());
    if (!Number.isInteger(n) || n < 0) throw new Error("usage: /warm-limit <n>");
    warmLimit = n;
    warmDecisions = 0;
    return { limit: n };
  });

  pi.on("cache_warming_decision", async (_event: any, ctx: any) => {
    warmDecisions++;
    if (warmDecisions > warmLimit) {
      report(ctx, { event: "cache_warming_decision", action: "stop", decisions: warmDecisions });
      return { action: "stop" };
    }
    return undefined;
  });

  pi.on("turn_end", async (event: any, ctx: any) => {
    if (!armed || event.outcome !== "completed") return undefined;
    const action = armed;
    armed = null;
    const entries = [...event.entries];
    if (action === "replace") {
      const branch = ctx.sessionManager.getBranch();
      const user = [...branch].reverse().find((e: any) => e.type === "message" && e.message?.role === "user");
      if (user) entries.push({ type: "context_edit", targetId: user.id, replacement: { content: "Replaced user prompt (shorter)." } });
      entries.push({ type: "context_edit", targetId: event.messageEntryId, replacement: { content: "Replaced assistant answer." } });
      if (event.toolResultEntryIds.length) {
        entries.push({
          type: "context_edit",
          targetId: event.toolResultEntryIds[0],
          replacement: { content: [{ type: "text", text: "(tool output replaced by the test extension)" }] },
        });
      }
    } else if (action === "omit") {
      entries.push({ type: "context_edit", targetId: event.messageEntryId, replacement: null });
    } else if (action === "retain-none") {
      entries.push({
        type: "compaction",
        summary: "## Goal\nRetain-none checkpoint written by the test extension: nothing before it is kept.",
        firstKeptEntryId: null,
        details: { source: "pi16-test-helper" },
      });
    } else if (action === "keep-all") {
      const first = ctx.sessionManager.getBranch().find((e: any) => e.type === "message" && e.message?.role === "user");
      entries.push({
        type: "compaction",
        summary: "## Goal\nCheckpoint written by the test extension; every message from the first prompt on is kept.",
        firstKeptEntryId: first.id,
        details: { source: "pi16-test-helper" },
      });
    }
    report(ctx, { event: "turn_end", action, drafts: entries.map((e: any) => e.type) });
    return { entries };
  });
}
