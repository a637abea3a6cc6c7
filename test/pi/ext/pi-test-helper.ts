/**
 * Test-only Pi extension used by pi-lsp's corpus generator (test/pi/rpc-scenarios.mjs).
 *
 * RPC mode has no command for tree navigation, labels or custom entries, but
 * RPC `prompt` runs extension commands. Every command reports its outcome as
 * a notify UI request whose message is "pi-test-helper:" + JSON, or
 * "pi-test-helper-error:" + message.
 *
 *   /navtree <id> [summarize] [label=<text>] [focus=<text until end>]
 *   /label <id> [text...]        (no text clears the label)
 *   /custom [tag]                custom entry (pi.appendEntry) + custom_message (pi.sendMessage)
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
}
