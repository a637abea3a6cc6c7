/**
 * Commands and reporting shared by the test-only Pi extensions pi-test-helper.ts
 * (Pi 0.73.1) and pi16-test-helper.ts (Pi 1.6). This file is not an extension
 * itself (no default export): both Pis load extensions with jiti, which
 * resolves the relative import of it.
 *
 * Every command reports its outcome as a notify UI request whose message is
 * "pi-test-helper:" + JSON, or "pi-test-helper-error:" + message; the test
 * drivers (pi-rpc.mjs, rpc-scenarios-1.6.mjs) match on those prefixes.
 */

const PREFIX = "pi-test-helper:";
const ERROR_PREFIX = "pi-test-helper-error:";

/** Report a value to the test driver as a "pi-test-helper:" notify. */
export function report(ctx: any, value: unknown) {
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

/**
 * Register the command /name. run's result is reported as
 * { command: name, ...result, ...leafInfo } (the leaf read after run); a throw
 * is reported as an error.
 */
export function command(pi: any, name: string, description: string, run: (args: string, ctx: any) => Promise<object> | object) {
  pi.registerCommand(name, {
    description,
    handler: async (args: string, ctx: any) => {
      try {
        const fields = await run(args, ctx);
        report(ctx, { command: name, ...fields, ...leafInfo(ctx) });
      } catch (err) {
        fail(ctx, err);
      }
    },
  });
}

/**
 * Register the commands both Pis get: /navtree, /label, /custom, /leaf and
 * /entries. waitForIdle makes /navtree wait for the agent to be idle first
 * (Pi 1.6's navigateTree rejects while busy).
 */
export function registerCommonCommands(pi: any, { waitForIdle = false } = {}) {
  command(pi, "navtree", "Navigate the session tree: /navtree <id> [summarize] [label=<text>] [focus=<text>]", async (args, ctx) => {
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
    if (waitForIdle) await ctx.waitForIdle();
    const result = await ctx.navigateTree(targetId, { summarize, label, customInstructions });
    return { targetId, summarize, label: label ?? null, result };
  });

  command(pi, "label", "Set or clear a label: /label <id> [text]", (args) => {
    const trimmed = args.trim();
    const space = trimmed.indexOf(" ");
    const id = space === -1 ? trimmed : trimmed.slice(0, space);
    const text = space === -1 ? "" : trimmed.slice(space + 1).trim();
    if (!id) throw new Error("usage: /label <id> [text]");
    pi.setLabel(id, text === "" ? undefined : text);
    return { id, label: text === "" ? null : text };
  });

  command(pi, "custom", "Append a custom entry and a custom message: /custom [tag]", (args) => {
    const tag = args.trim() || "default";
    pi.appendEntry("pi-test-helper-state", { tag, counter: 1, nested: { ok: true } });
    pi.sendMessage({
      customType: "pi-test-helper",
      content: `Custom context note (${tag}): remember that notes.txt was created by the test.`,
      display: true,
      details: { tag, source: "pi-test-helper" },
    });
    return { tag };
  });

  command(pi, "leaf", "Report the current leaf", () => ({}));

  command(pi, "entries", "Report every session entry (id, parentId, type, role)", (_args, ctx) => {
    const entries = ctx.sessionManager.getEntries().map((e: any) => ({
      id: e.id,
      parentId: e.parentId,
      type: e.type,
      role: e.type === "message" ? e.message?.role : undefined,
      customType: e.customType,
    }));
    return { entries };
  });
}
