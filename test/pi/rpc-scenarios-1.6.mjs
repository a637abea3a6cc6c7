#!/usr/bin/env node
// Generate genuine Pi 1.6.0 session files by driving the real `pi --mode rpc`
// CLI (@earendil-works/pi-coding-agent 1.6.0, run on Node 22) against the fake
// OpenAI server (test/pi/fake-openai.mjs, already running).
//
//   node rpc-scenarios-1.6.mjs --port PORT --out OUTDIR --work WORKDIR [scenario ...]
//
// Run it with Node >= 22.19 (Pi 1.6 refuses older ones); PI_LSP_PI_DIR names
// the Pi 1.6 package directory (scripts/gen-corpus.sh sets both). Every
// scenario gets its own agent dir, HOME, XDG dirs, TMPDIR and cwd under
// WORKDIR and runs its own pi process (own process group, killed at the end).
// The session files Pi wrote are copied byte for byte to OUTDIR/<name>.jsonl.
// Without scenario names every scenario runs (three at a time).
//
// Pi 1.6 writes its own package path into every system message (the "docs"
// prompt section): PI_PACKAGE_DIR points Pi at a symlink WORKDIR/pi, so the
// files name a neutral temp path, never where Pi is installed.
import fs from "node:fs";
import path from "node:path";
import { COMPACT_SPLIT, ScenarioCtx, TINY_PNG, abortSlowStream, autoCompactionScenario, cloneAndFork, fullStart, last, miscEnd, parseScenarioArgs, runScenarios, secondCompaction, thresholdScenario, treeStart } from "./scenario-runner.mjs";
import { HERE, PiRpc, REPO, fakeModel, helperReport, piPackageDir, writeAgentDir } from "./pi-rpc.mjs";

// Without PI_LSP_PI_DIR, the Pi 1.6.0 that scripts/install-pi.sh puts in .tools/pi-current.
if (!process.env.PI_LSP_PI_DIR) {
  process.env.PI_LSP_PI_DIR = path.join(REPO, ".tools", "pi-current", "node_modules", "@earendil-works", "pi-coding-agent");
}

const HELPER16 = path.join(HERE, "ext", "pi16-test-helper.ts");

// The fake provider's models for Pi 1.6: a plain one, a reasoning one that takes images,
// and a priced one with a short prompt-cache lifetime: Pi refreshes its cache about a
// second after a request (90% of 11 s, keeping 10 s of margin) and writes a usage entry.
const MODELS16 = [
  fakeModel("fake-model", "Fake Model"),
  fakeModel("fake-reasoner", "Fake Reasoner", { reasoning: true, input: ["text", "image"] }),
  fakeModel("fake-cached", "Fake Cached", { cost: { input: 1000, output: 1000, cacheRead: 10, cacheWrite: 1000 }, promptCache: { short: 11 } }),
];

// ---------------------------------------------------------------------------
// Scenario helpers

/** The scenario context for Pi 1.6, which has get_entries, and more time per step. */
class Ctx16 extends ScenarioCtx {
  constructor(pi, name) {
    super(pi, name, { timeoutMs: 45000 });
  }

  async entries() {
    return (await this.send({ type: "get_entries" })).data.entries;
  }

  /** Throw unless the current session's entries satisfy every count in want ({type or type:role: n}). */
  async expect(want) {
    const es = await this.entries();
    const got = countKinds(es);
    for (const [k, n] of Object.entries(want)) {
      if ((got[k] ?? 0) !== n) throw new Error(`${this.name}: expected ${n} ${k}, found ${got[k] ?? 0} (${JSON.stringify(got)})`);
    }
    return es;
  }
}

function countKinds(entries) {
  const got = {};
  for (const e of entries) {
    got[e.type] = (got[e.type] ?? 0) + 1;
    if (e.type === "message") {
      const k = `message:${e.message.role}`;
      got[k] = (got[k] ?? 0) + 1;
    }
  }
  return got;
}

const isMsg = (role) => (e) => e.type === "message" && e.message.role === role;

/**
 * A scenario in which a request fails once and Pi recovers: the failed
 * attempt is omitted (a context_edit), the session compacted and the request
 * retried. first comes before the failing prompt, after follows the recovery.
 */
function recoveryScenario(file, first, failing, after) {
  return autoCompactionScenario({
    keep: 30,
    file,
    before: [first],
    trigger: failing,
    reason: "overflow",
    retry: true,
    after,
    check: (c) => c.expect({ context_edit: 1, compaction: 1 }),
  });
}

/**
 * A scenario that runs steps, throws unless the session then holds the entry
 * counts want (as Ctx16.expect), hands the entries to check, which throws on
 * what it finds wrong, and records the session as file.
 */
function checkedScenario(file, steps, want, check) {
  return {
    keep: 20000,
    async run(c) {
      await c.steps(...steps);
      check(await c.expect(want));
      await c.record(file);
    },
  };
}

// ---------------------------------------------------------------------------
// Scenarios. `keep` is compaction.keepRecentTokens in the agent settings (Pi
// 1.6 counts the ~1,300-token system message in the cut walk, so small
// sessions need small values).

const SCENARIOS = {
  // System messages: the first declaration, a patch after pi.setActiveTools removes two tools,
  // and a patch that adds them back.
  system: checkedScenario(
    "system-tools",
    [
      "SCRIPT:tools please create notes.txt and check it",
      "/tools read,bash",
      "SCRIPT:chat what can you do with only read and bash",
      "/tools read,bash,edit,write",
      "SCRIPT:chat all four tools are back",
    ],
    { "message:system": 3 },
    (es) => {
      const sys = es.filter(isMsg("system")).map((e) => e.message);
      if (!sys[1].toolsRemoved || sys[1].toolsRemoved.length !== 2) throw new Error(`system: expected a patch removing 2 tools: ${JSON.stringify(sys[1]).slice(0, 300)}`);
      if (!sys[2].toolsAdded || sys[2].toolsAdded.length !== 2) throw new Error(`system: expected a patch adding 2 tools: ${JSON.stringify(sys[2]).slice(0, 300)}`);
    },
  ),

  // HTTP 400 "maximum context length": the failed attempt, its omission, the recovery compaction, the retry.
  overflow: recoveryScenario(
    "overflow-recovery",
    "SCRIPT:tools please create notes.txt",
    "SCRIPT:overflow this request overflows the context",
    "SCRIPT:chat after the overflow recovery",
  ),

  // A cut-off answer (finish_reason "length" below maxTokens): omitted, compacted, retried.
  length: recoveryScenario(
    "length-recovery",
    "SCRIPT:chat CHARS=600 a first question",
    "SCRIPT:lengthonce this answer is cut off the first time",
    "SCRIPT:chat after the length recovery",
  ),

  // context_edit replacements and an omission, written by a turn_end extension handler.
  edits: checkedScenario(
    "context-edits",
    [
      "/arm replace",
      "SCRIPT:more write other.txt and read the files",
      "/arm omit",
      "SCRIPT:chat an answer the extension hides",
      "SCRIPT:chat a last answer that stays",
    ],
    { context_edit: 4 },
    (es) => {
      const edits = es.filter((e) => e.type === "context_edit");
      if (edits.filter((e) => e.replacement === null).length !== 1) throw new Error("edits: expected exactly one omission");
    },
  ),

  // Prompt-cache warming: a priced model with a short cache lifetime; one warm, then the
  // extension stops further warms.
  "cache-warm": {
    keep: 20000,
    cacheWarming: "idle",
    model: "fake-cached",
    async run(c) {
      const { pi } = c;
      await c.helper("/warm-limit 1");
      const from = pi.events.length;
      await c.prompt("SCRIPT:chat a question worth caching");
      await pi.waitEvent((e) => e.type === "entry_appended" && e.entry?.type === "usage", { from, timeoutMs: 20000, what: "cache_warm usage entry" });
      await pi.waitEvent((e) => helperReport(e)?.event === "cache_warming_decision", { from, timeoutMs: 20000, what: "the stop decision" });
      await pi.settle();
      await c.steps("/warm-limit 0", "SCRIPT:chat a follow-up after the warm");
      const es = await c.expect({ usage: 1 });
      const u = es.find((e) => e.type === "usage");
      if (u.kind !== "cache_warm" || !u.usage?.cost) throw new Error(`cache-warm: unexpected usage entry ${JSON.stringify(u)}`);
      await c.record("cache-warm");
    },
  },

  // A retain-none compaction (firstKeptEntryId = its own id) from a turn_end compaction draft.
  "retain-none": checkedScenario(
    "retain-none",
    [
      "SCRIPT:tools please create notes.txt",
      "/arm retain-none",
      "SCRIPT:chat the extension compacts after this answer",
      "SCRIPT:chat after the retain-none compaction",
    ],
    { compaction: 1 },
    (es) => {
      const comp = es.find((e) => e.type === "compaction");
      if (comp.firstKeptEntryId !== comp.id || comp.fromHook !== true) throw new Error(`retain-none: unexpected compaction ${JSON.stringify(comp).slice(0, 300)}`);
    },
  ),

  // Manual compaction cutting inside a long tool turn: split turn.
  "compact-split": COMPACT_SPLIT,

  // Two compactions by Pi, with turns between: the second uses the update prompt. 205 puts both
  // cuts exactly on the last user message (its 800-char answer is 200 tokens): no split turn.
  "compact-twice": {
    keep: 205,
    async run(c) {
      await c.steps("SCRIPT:big STEPS=4 first long job", "SCRIPT:chat CHARS=800 talk about the job");
      const first = await c.send({ type: "compact" });
      if (first.data.summary.includes("updated checkpoint")) throw new Error(`compact-twice: unexpected first summary ${first.data.summary.slice(0, 200)}`);
      if (first.data.summary.includes("**Turn Context (split turn):**")) throw new Error("compact-twice: the first cut should not split a turn");
      if ((await secondCompaction(c)).includes("**Turn Context (split turn):**")) throw new Error("compact-twice: the second cut should not split a turn");
      await c.prompt("SCRIPT:chat one more after two compactions");
      await c.expect({ compaction: 2 });
      await c.record("compact-twice");
    },
  },

  // Two compactions in a row: an extension's compaction (keeping everything) at a turn end, then
  // Pi's manual compaction with nothing but a session name between them (Pi refuses to compact
  // when the leaf is a compaction: "Already compacted").
  "compact-adjacent": {
    keep: 30,
    async run(c) {
      await c.steps("SCRIPT:tools please create notes.txt", "/arm keep-all", "SCRIPT:chat CHARS=600 the extension checkpoints after this answer");
      await c.send({ type: "set_session_name", name: "between two compactions" });
      const r = await c.send({ type: "compact" });
      if (!r.data.summary.includes("updated checkpoint")) throw new Error(`compact-adjacent: expected the update prompt: ${r.data.summary.slice(0, 200)}`);
      await c.prompt("SCRIPT:chat after two compactions in a row");
      await c.expect({ compaction: 2 });
      await c.record("compact-adjacent");
    },
  },

  // Threshold compaction: a turn reports 120000 prompt tokens.
  threshold: thresholdScenario(30),

  // Navigation with and without a branch summary, labels set and cleared.
  tree: {
    keep: 150,
    async run(c) {
      const { a1, users } = await treeStart(c);
      // Without a summary: the leaf becomes the first user message's parent.
      await c.steps(`/navtree ${users[0].entryId}`, "SCRIPT:chat restart from scratch");
      const restart = last(await c.entries(), isMsg("user"));
      await c.steps(`/label ${restart.id} restart`, `/label ${a1.id} temporary`, `/label ${a1.id}`);
      // Without a summary but with a label: the label on the target becomes the leaf.
      await c.steps(`/navtree ${a1.id} label=checkpoint`, "SCRIPT:chat continue from the checkpoint");
      await c.expect({ branch_summary: 1, label: 4 });
      await c.record("tree-nav");
    },
  },

  // Custom entries, custom_message, session name, RPC bash, then clone and forks of that session.
  full: {
    keep: 20000,
    async run(c) {
      const { main, users } = await fullStart(c, "SCRIPT:chat second question");
      await c.steps(`/label ${users[0].entryId} first-prompt`, "/custom fixture");
      await c.send({ type: "set_session_name", name: "rpc-fixture-session" });
      await c.send({ type: "bash", command: "echo user-bash-output" });
      await c.send({ type: "bash", command: "echo hidden-from-context", excludeFromContext: true });
      await c.prompt("SCRIPT:chat wrap up after the bash commands");
      await cloneAndFork(c, main, users);
    },
  },

  // A reasoning model: thinking blocks, thinking levels per message, a user image.
  reasoning: {
    keep: 20000,
    async run(c) {
      await c.prompt("SCRIPT:chat a plain model first");
      await c.send({ type: "set_model", provider: "fake", modelId: "fake-reasoner" });
      await c.send({ type: "set_thinking_level", level: "medium" });
      await c.prompt("SCRIPT:think a question that needs some thought");
      await c.send({ type: "set_thinking_level", level: "high" });
      await c.prompt("SCRIPT:think describe this image carefully", {
        extra: { images: [{ type: "image", data: TINY_PNG, mimeType: "image/png" }] },
      });
      await c.send({ type: "set_thinking_level", level: "low" });
      await c.prompt("SCRIPT:chat a quick answer at low effort");
      const es = await c.entries();
      const levels = es.filter(isMsg("assistant")).map((e) => e.message.thinkingLevel);
      if (levels.join(",") !== "off,medium,high,low") throw new Error(`reasoning: unexpected thinking levels on assistants: ${levels}`);
      if (!es.some((e) => isMsg("assistant")(e) && e.message.content.some((b) => b.type === "thinking"))) throw new Error("reasoning: no thinking block");
      await c.record("reasoning");
    },
  },

  // Other message kinds: an aborted stream, an upstream error (HTTP 500), a failing bash, names.
  misc: {
    keep: 20000,
    async run(c) {
      await c.prompt("SCRIPT:chat hello");
      await abortSlowStream(c);
      await c.prompt("SCRIPT:fail this request fails upstream");
      await miscEnd(c);
    },
  },
};

// ---------------------------------------------------------------------------

function neutralPackageDir(work) {
  const link = path.join(work, "pi");
  if (!fs.existsSync(link)) fs.symlinkSync(piPackageDir(), link, "dir");
  return link;
}

async function main() {
  const opts = parseScenarioArgs(process.argv.slice(2), { script: "rpc-scenarios-1.6.mjs", deadlineSeconds: 280 });
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 22) throw new Error(`Pi 1.6 needs Node >= 22.19; this is ${process.version}`);
  fs.mkdirSync(opts.work, { recursive: true });
  const packageDir = neutralPackageDir(opts.work);
  const version = JSON.parse(fs.readFileSync(path.join(piPackageDir(), "package.json"), "utf8")).version;
  process.stderr.write(`rpc-scenarios-1.6: Pi ${version} on Node ${process.version}\n`);
  await runScenarios("rpc-scenarios-1.6", SCENARIOS, opts, (scen, { name, base, agentDir, cwd }) => {
    writeAgentDir(agentDir, {
      port: opts.port,
      keepRecentTokens: scen.keep,
      models: MODELS16,
      settings: { enableAnalytics: false, cacheWarming: scen.cacheWarming ?? "off" },
    });
    const pi = PiRpc.start({
      cwd,
      agentDir,
      baseDir: base,
      extensions: [HELPER16],
      args: ["--no-mcp", "--model", scen.model ?? "fake-model"],
      env: { PI_PACKAGE_DIR: packageDir },
      label: name,
      settledEvent: "agent_settled",
      dispositions: true,
    });
    return new Ctx16(pi, name);
  });
}

main().catch((e) => {
  process.stderr.write(`rpc-scenarios-1.6: ${e.stack ?? e}\n`);
  process.exit(1);
});
