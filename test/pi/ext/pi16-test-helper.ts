/**
 * Test-only Pi 1.6 extension used by pi-lsp's genuine 1.6 corpus generator
 * (test/pi/rpc-scenarios-1.6.mjs). Pi 1.6's RPC mode still has no command for
 * tree navigation or labels, and context edits and hook compactions are only
 * written through extension boundary drafts, so this extension provides them.
 * RPC `prompt` runs extension commands; every command reports its outcome as a
 * notify UI request whose message is "pi-test-helper:" + JSON, or
 * "pi-test-helper-error:" + message.
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

const PREFIX = "pi-test-helper:";
const ERROR_PREFIX = "pi-test-helper-error:";

function report(ctx: any, value: unknown) {
  ctx.ui.notify(PREFIX + JSON.stringify(value ?? null), "info");
}

function fail(ctx: any, err: unknown) {
  const msg = err instanceof Error ? err.message : String(err);
  ctx.ui.notify(ERROR_PREFIX + msg, "error");
}

function leafInfo(ctx: any) {
  const sm = ctx.sessionManager;
  const leafId = sm.getLeafId();
  const leaf = leafId ? sm.getEntry(leafId) : undefined;
  return { leafId: leafId ?? null, leafType: leaf?.type ?? null, entryCount: sm.getEntries().length };
}

export default function (pi: any) {
  let armed: string | null = null;
  let warmLimit = Infinity;
  let warmDecisions = 0;

  pi.registerCommand("navtree", {
    description: "Navigate the session tree: /navtree <id> [summarize] [label=<text>] [focus=<text>]",
    handler: async (args: string, ctx: any) => {
      try {
        let rest = args.trim();
        let customInstructions: string | undefined;
        const focusAt = rest.indexOf("focus=");
        if (focusAt >= 0) {
          customInstructions = rest.slice(focusAt + "focus=".length).trim();
          rest = rest.slice(0, focusAt).trim();
        }
        const words = rest.split(/\s+/).filter(Boolean);
        const targetId = words.shift();
        if (!targetId) throw new Error("usage: /navtree <id> [summarize] [label=<text>] [focus=<text>]");
        let summarize = false;
        let label: string | undefined;
        for (const w of words) {
          if (w === "summarize") summarize = true;
          else if (w.startsWith("label=")) label = w.slice("label=".length);
          else throw new Error(`unknown /navtree argument: ${w}`);
        }
        await ctx.waitForIdle();
        const result = await ctx.navigateTree(targetId, { summarize, label, customInstructions });
        report(ctx, { command: "navtree", targetId, summarize, label: label ?? null, result, ...leafInfo(ctx) });
      } catch (err) {
        fail(ctx, err);
      }
    },
  });

  pi.registerCommand("label", {
    description: "Set or clear a label: /label <id> [text]",
    handler: async (args: string, ctx: any) => {
      try {
        const trimmed = args.trim();
        const space = trimmed.indexOf(" ");
        const id = space === -1 ? trimmed : trimmed.slice(0, space);
        const text = space === -1 ? "" : trimmed.slice(space + 1).trim();
        if (!id) throw new Error("usage: /label <id> [text]");
        pi.setLabel(id, text === "" ? undefined : text);
        report(ctx, { command: "label", id, label: text === "" ? null : text, ...leafInfo(ctx) });
      } catch (err) {
        fail(ctx, err);
      }
    },
  });

  pi.registerCommand("custom", {
    description: "Append a custom entry and a custom message: /custom [tag]",
    handler: async (args: string, ctx: any) => {
      try {
        const tag = args.trim() || "default";
        pi.appendEntry("pi-test-helper-state", { tag, counter: 1, nested: { ok: true } });
        pi.sendMessage({
          customType: "pi-test-helper",
          content: `Custom context note (${tag}): remember that notes.txt was created by the test.`,
          display: true,
          details: { tag, source: "pi-test-helper" },
        });
        report(ctx, { command: "custom", tag, ...leafInfo(ctx) });
      } catch (err) {
        fail(ctx, err);
      }
    },
  });

  pi.registerCommand("tools", {
    description: "Set the active tools: /tools <name,...>",
    handler: async (args: string, ctx: any) => {
      try {
        const names = args.split(/[\s,]+/).filter(Boolean);
        if (!names.length) throw new Error("usage: /tools <name,...>");
        pi.setActiveTools(names);
        report(ctx, { command: "tools", active: pi.getActiveTools(), ...leafInfo(ctx) });
      } catch (err) {
        fail(ctx, err);
      }
    },
  });

  pi.registerCommand("arm", {
    description: "Arm the next turn_end: /arm replace|omit|retain-none|keep-all",
    handler: async (args: string, ctx: any) => {
      try {
        const action = args.trim();
        if (!["replace", "omit", "retain-none", "keep-all"].includes(action)) throw new Error(`unknown /arm action: ${action}`);
        armed = action;
        report(ctx, { command: "arm", action, ...leafInfo(ctx) });
      } catch (err) {
        fail(ctx, err);
      }
    },
  });

  pi.registerCommand("warm-limit", {
    description: "Allow n prompt-cache warms: /warm-limit <n>",
    handler: async (args: string, ctx: any) => {
      try {
        const n = Number(args.trim());
        if (!Number.isInteger(n) || n < 0) throw new Error("usage: /warm-limit <n>");
        warmLimit = n;
        warmDecisions = 0;
        report(ctx, { command: "warm-limit", limit: n, ...leafInfo(ctx) });
      } catch (err) {
        fail(ctx, err);
      }
    },
  });

  pi.registerCommand("leaf", {
    description: "Report the current leaf",
    handler: async (_args: string, ctx: any) => {
      try {
        report(ctx, { command: "leaf", ...leafInfo(ctx) });
      } catch (err) {
        fail(ctx, err);
      }
    },
  });

  pi.registerCommand("entries", {
    description: "Report every session entry (id, parentId, type, role)",
    handler: async (_args: string, ctx: any) => {
      try {
        const entries = ctx.sessionManager.getEntries().map((e: any) => ({
          id: e.id,
          parentId: e.parentId,
          type: e.type,
          role: e.type === "message" ? e.message?.role : undefined,
          customType: e.customType,
        }));
        report(ctx, { command: "entries", entries, ...leafInfo(ctx) });
      } catch (err) {
        fail(ctx, err);
      }
    },
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
