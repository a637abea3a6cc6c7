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
import { TINY_PNG, copyRecorded, parseScenarioArgs, runScenarios } from "./scenario-runner.mjs";
import { HERE, PiRpc, REPO, piPackageDir } from "./pi-rpc.mjs";

// Without PI_LSP_PI_DIR, the Pi 1.6.0 that scripts/install-pi.sh puts in .tools/pi-current.
if (!process.env.PI_LSP_PI_DIR) {
  process.env.PI_LSP_PI_DIR = path.join(REPO, ".tools", "pi-current", "node_modules", "@earendil-works", "pi-coding-agent");
}

const HELPER16 = path.join(HERE, "ext", "pi16-test-helper.ts");
// ---------------------------------------------------------------------------
// Agent dir: models.json and settings.json for Pi 1.6 against the fake server.

const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

function writeAgentDir16(agentDir, { port, keepRecentTokens, cacheWarming = "off" }) {
  fs.mkdirSync(agentDir, { recursive: true });
  const compat = { supportsDeveloperRole: false, supportsReasoningEffort: false, supportsStore: false };
  const models = {
    providers: {
      fake: {
        baseUrl: `http://127.0.0.1:${port}/v1`,
        api: "openai-completions",
        apiKey: "fake-key",
        compat,
        models: [
          { id: "fake-model", name: "Fake Model", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096, cost: ZERO_COST },
          {
            id: "fake-reasoner",
            name: "Fake Reasoner",
            reasoning: true,
            input: ["text", "image"],
            contextWindow: 128000,
            maxTokens: 4096,
            cost: ZERO_COST,
          },
          {
            // Priced, with a short prompt-cache lifetime: Pi refreshes the cache about a second
            // after a request (90% of 11 s, keeping 10 s of margin) and writes a usage entry.
            id: "fake-cached",
            name: "Fake Cached",
            reasoning: false,
            input: ["text"],
            contextWindow: 128000,
            maxTokens: 4096,
            cost: { input: 1000, output: 1000, cacheRead: 10, cacheWrite: 1000 },
            promptCache: { short: 11 },
          },
        ],
      },
    },
  };
  const settings = {
    defaultProvider: "fake",
    defaultModel: "fake-model",
    quietStartup: true,
    enableInstallTelemetry: false,
    enableAnalytics: false,
    cacheWarming,
    compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens },
    retry: { enabled: false },
  };
  fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(models, null, 2) + "\n");
  fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify(settings, null, 2) + "\n");
}

// ---------------------------------------------------------------------------
// Scenario helpers

const isNotify = (e) => e.type === "extension_ui_request" && e.method === "notify" && typeof e.message === "string";
const HELPER_OK = "pi-test-helper:";
const HELPER_ERR = "pi-test-helper-error:";

function helperReport(e) {
  if (!isNotify(e)) return undefined;
  if (e.message.startsWith(HELPER_ERR)) return { error: e.message.slice(HELPER_ERR.length) };
  if (!e.message.startsWith(HELPER_OK)) return undefined;
  try {
    return JSON.parse(e.message.slice(HELPER_OK.length));
  } catch {
    return undefined;
  }
}

class Ctx {
  constructor(pi, name) {
    this.pi = pi;
    this.name = name;
    this.files = {};
  }

  /** Run a pi16-test-helper command and return its report (matched by command name). */
  async helper(text, { timeoutMs = 30000 } = {}) {
    const { pi } = this;
    const command = text.slice(1).split(/\s+/)[0];
    const from = pi.events.length;
    const res = await pi.send({ type: "prompt", message: text }, { timeoutMs });
    if (res.data?.disposition !== "handled") throw new Error(`${this.name}: ${text} was not handled as a command: ${JSON.stringify(res.data)}`);
    const { event } = await pi.waitEvent(
      (e) => {
        const r = helperReport(e);
        return r !== undefined && (r.error !== undefined || r.command === command);
      },
      { from, timeoutMs, what: `helper report for ${text}` },
    );
    const r = helperReport(event);
    if (r.error !== undefined) throw new Error(`${this.name}: ${text} failed: ${r.error}`);
    return r;
  }

  /** Send a prompt and wait until Pi has settled (agent_settled: retries, recovery and compaction done). */
  async prompt(message, { timeoutMs = 45000, extra = {} } = {}) {
    const { pi } = this;
    const from = pi.events.length;
    const res = await pi.send({ type: "prompt", message, ...extra }, { timeoutMs });
    if (res.data?.disposition !== "started") throw new Error(`${this.name}: prompt not started: ${JSON.stringify(res.data)}`);
    await pi.waitEvent((e) => e.type === "agent_settled", { from, timeoutMs, what: `agent_settled after ${message}` });
    await pi.settle({ timeoutMs });
    return pi.events.slice(from);
  }

  async send(cmd, opts) {
    return this.pi.send(cmd, { timeoutMs: 45000, ...opts });
  }

  async entries() {
    return (await this.send({ type: "get_entries" })).data.entries;
  }

  async userEntries() {
    return (await this.send({ type: "get_fork_messages" })).data.messages;
  }

  async record(name) {
    const st = (await this.send({ type: "get_state" })).data;
    if (!st.sessionFile) throw new Error(`${this.name}: no session file for ${name}`);
    this.files[name] = st.sessionFile;
    return st.sessionFile;
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

function last(arr, pred) {
  for (let i = arr.length - 1; i >= 0; i--) if (pred(arr[i])) return arr[i];
  return undefined;
}

const isMsg = (role) => (e) => e.type === "message" && e.message.role === role;

function compactionEnds(events, reason) {
  return events.filter((e) => e.type === "compaction_end" && (!reason || e.reason === reason));
}

// ---------------------------------------------------------------------------
// Scenarios. `keep` is compaction.keepRecentTokens in the agent settings (Pi
// 1.6 counts the ~1,300-token system message in the cut walk, so small
// sessions need small values).

const SCENARIOS = {
  // System messages: the first declaration, a patch after pi.setActiveTools removes two tools,
  // and a patch that adds them back.
  system: {
    keep: 20000,
    async run(c) {
      await c.prompt("SCRIPT:tools please create notes.txt and check it");
      await c.helper("/tools read,bash");
      await c.prompt("SCRIPT:chat what can you do with only read and bash");
      await c.helper("/tools read,bash,edit,write");
      await c.prompt("SCRIPT:chat all four tools are back");
      const es = await c.expect({ "message:system": 3 });
      const sys = es.filter(isMsg("system")).map((e) => e.message);
      if (!sys[1].toolsRemoved || sys[1].toolsRemoved.length !== 2) throw new Error(`system: expected a patch removing 2 tools: ${JSON.stringify(sys[1]).slice(0, 300)}`);
      if (!sys[2].toolsAdded || sys[2].toolsAdded.length !== 2) throw new Error(`system: expected a patch adding 2 tools: ${JSON.stringify(sys[2]).slice(0, 300)}`);
      await c.record("system-tools");
    },
  },

  // HTTP 400 "maximum context length": the failed attempt, its omission, the recovery compaction, the retry.
  overflow: {
    keep: 30,
    async run(c) {
      await c.prompt("SCRIPT:tools please create notes.txt");
      const ev = await c.prompt("SCRIPT:overflow this request overflows the context");
      const ends = compactionEnds(ev, "overflow");
      if (ends.length !== 1 || !ends[0].result || ends[0].willRetry !== true) throw new Error(`overflow: expected one successful overflow compaction with retry: ${JSON.stringify(ends).slice(0, 400)}`);
      await c.prompt("SCRIPT:chat after the overflow recovery");
      await c.expect({ context_edit: 1, compaction: 1 });
      await c.record("overflow-recovery");
    },
  },

  // A cut-off answer (finish_reason "length" below maxTokens): omitted, compacted, retried.
  length: {
    keep: 30,
    async run(c) {
      await c.prompt("SCRIPT:chat CHARS=600 a first question");
      const ev = await c.prompt("SCRIPT:lengthonce this answer is cut off the first time");
      const ends = compactionEnds(ev, "overflow");
      if (ends.length !== 1 || !ends[0].result || ends[0].willRetry !== true) throw new Error(`length: expected one successful length-recovery compaction with retry: ${JSON.stringify(ends).slice(0, 400)}`);
      await c.prompt("SCRIPT:chat after the length recovery");
      await c.expect({ context_edit: 1, compaction: 1 });
      await c.record("length-recovery");
    },
  },

  // context_edit replacements and an omission, written by a turn_end extension handler.
  edits: {
    keep: 20000,
    async run(c) {
      await c.helper("/arm replace");
      await c.prompt("SCRIPT:more write other.txt and read the files");
      await c.helper("/arm omit");
      await c.prompt("SCRIPT:chat an answer the extension hides");
      await c.prompt("SCRIPT:chat a last answer that stays");
      const es = await c.expect({ context_edit: 4 });
      const edits = es.filter((e) => e.type === "context_edit");
      if (edits.filter((e) => e.replacement === null).length !== 1) throw new Error("edits: expected exactly one omission");
      await c.record("context-edits");
    },
  },

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
      await c.helper("/warm-limit 0");
      await c.prompt("SCRIPT:chat a follow-up after the warm");
      const es = await c.expect({ usage: 1 });
      const u = es.find((e) => e.type === "usage");
      if (u.kind !== "cache_warm" || !u.usage?.cost) throw new Error(`cache-warm: unexpected usage entry ${JSON.stringify(u)}`);
      await c.record("cache-warm");
    },
  },

  // A retain-none compaction (firstKeptEntryId = its own id) from a turn_end compaction draft.
  "retain-none": {
    keep: 20000,
    async run(c) {
      await c.prompt("SCRIPT:tools please create notes.txt");
      await c.helper("/arm retain-none");
      await c.prompt("SCRIPT:chat the extension compacts after this answer");
      await c.prompt("SCRIPT:chat after the retain-none compaction");
      const es = await c.expect({ compaction: 1 });
      const comp = es.find((e) => e.type === "compaction");
      if (comp.firstKeptEntryId !== comp.id || comp.fromHook !== true) throw new Error(`retain-none: unexpected compaction ${JSON.stringify(comp).slice(0, 300)}`);
      await c.record("retain-none");
    },
  },

  // Manual compaction cutting inside a long tool turn: split turn.
  "compact-split": {
    keep: 150,
    async run(c) {
      await c.prompt("SCRIPT:chat CHARS=600 a warm-up question first");
      await c.prompt("SCRIPT:big STEPS=5 run a long job with many steps");
      const r = await c.send({ type: "compact" });
      if (!r.data.summary.includes("**Turn Context (split turn):**")) throw new Error(`compact-split: expected a split turn: ${r.data.summary.slice(0, 300)}`);
      await c.prompt("SCRIPT:chat after the split compaction");
      await c.record("compact-split");
    },
  },

  // Two compactions by Pi, with turns between: the second uses the update prompt. 205 puts both
  // cuts exactly on the last user message (its 800-char answer is 200 tokens): no split turn.
  "compact-twice": {
    keep: 205,
    async run(c) {
      await c.prompt("SCRIPT:big STEPS=4 first long job");
      await c.prompt("SCRIPT:chat CHARS=800 talk about the job");
      const first = await c.send({ type: "compact" });
      if (first.data.summary.includes("updated checkpoint")) throw new Error(`compact-twice: unexpected first summary ${first.data.summary.slice(0, 200)}`);
      if (first.data.summary.includes("**Turn Context (split turn):**")) throw new Error("compact-twice: the first cut should not split a turn");
      await c.prompt("SCRIPT:tools now use the tools");
      await c.prompt("SCRIPT:chat CHARS=800 talk about the result");
      const second = await c.send({ type: "compact", customInstructions: "Keep the file names" });
      if (!second.data.summary.includes("updated checkpoint")) throw new Error(`compact-twice: second compaction should update the previous summary: ${second.data.summary.slice(0, 200)}`);
      if (second.data.summary.includes("**Turn Context (split turn):**")) throw new Error("compact-twice: the second cut should not split a turn");
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
      await c.prompt("SCRIPT:tools please create notes.txt");
      await c.helper("/arm keep-all");
      await c.prompt("SCRIPT:chat CHARS=600 the extension checkpoints after this answer");
      await c.send({ type: "set_session_name", name: "between two compactions" });
      const r = await c.send({ type: "compact" });
      if (!r.data.summary.includes("updated checkpoint")) throw new Error(`compact-adjacent: expected the update prompt: ${r.data.summary.slice(0, 200)}`);
      await c.prompt("SCRIPT:chat after two compactions in a row");
      await c.expect({ compaction: 2 });
      await c.record("compact-adjacent");
    },
  },

  // Threshold compaction: a turn reports 120000 prompt tokens.
  threshold: {
    keep: 30,
    async run(c) {
      await c.prompt("SCRIPT:tools please create notes.txt");
      const ev = await c.prompt("SCRIPT:chat BIGUSAGE report a huge prompt usage");
      const ends = compactionEnds(ev, "threshold");
      if (ends.length !== 1 || !ends[0].result) throw new Error(`threshold: expected one threshold compaction: ${JSON.stringify(compactionEnds(ev)).slice(0, 400)}`);
      await c.prompt("SCRIPT:chat after the automatic compaction");
      await c.record("auto-threshold");
    },
  },

  // Navigation with and without a branch summary, labels set and cleared.
  tree: {
    keep: 150,
    async run(c) {
      await c.prompt("SCRIPT:chat CHARS=300 first question");
      await c.prompt("SCRIPT:tools second question with tools");
      await c.prompt("SCRIPT:chat third question");
      const users = await c.userEntries();
      let es = await c.entries();
      const a1 = es.find((e) => e.parentId === users[0].entryId);
      // With a summary and custom instructions: the new leaf is the target's parent (a1).
      await c.helper(`/navtree ${users[1].entryId} summarize focus=Focus on file changes`);
      await c.prompt("SCRIPT:more alternative second question");
      // Without a summary: the leaf becomes the first user message's parent.
      await c.helper(`/navtree ${users[0].entryId}`);
      await c.prompt("SCRIPT:chat restart from scratch");
      es = await c.entries();
      const restart = last(es, isMsg("user"));
      await c.helper(`/label ${restart.id} restart`);
      await c.helper(`/label ${a1.id} temporary`);
      await c.helper(`/label ${a1.id}`);
      // Without a summary but with a label: the label on the target becomes the leaf.
      await c.helper(`/navtree ${a1.id} label=checkpoint`);
      await c.prompt("SCRIPT:chat continue from the checkpoint");
      es = await c.expect({ branch_summary: 1, label: 4 });
      await c.record("tree-nav");
    },
  },

  // Custom entries, custom_message, session name, RPC bash, then clone and forks of that session.
  full: {
    keep: 20000,
    async run(c) {
      await c.prompt("SCRIPT:tools please create notes.txt and check it");
      await c.prompt("SCRIPT:chat second question");
      const main = await c.record("full-main");
      const users = await c.userEntries();
      if (users.length < 2) throw new Error("full: expected two user messages");
      await c.helper(`/label ${users[0].entryId} first-prompt`);
      await c.helper("/custom fixture");
      await c.send({ type: "set_session_name", name: "rpc-fixture-session" });
      await c.send({ type: "bash", command: "echo user-bash-output" });
      await c.send({ type: "bash", command: "echo hidden-from-context", excludeFromContext: true });
      await c.prompt("SCRIPT:chat wrap up after the bash commands");

      await c.send({ type: "clone" });
      await c.pi.settle();
      await c.record("full-clone");

      await c.send({ type: "switch_session", sessionPath: main });
      await c.send({ type: "fork", entryId: users[1].entryId });
      await c.prompt("SCRIPT:chat continue inside the fork");
      await c.record("full-fork");

      await c.send({ type: "switch_session", sessionPath: main });
      await c.send({ type: "fork", entryId: users[0].entryId });
      await c.prompt("SCRIPT:chat start over in a fork of the first prompt");
      await c.record("full-fork-first");
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
      const { pi } = c;
      await c.prompt("SCRIPT:chat hello");
      const from = pi.events.length;
      await c.send({ type: "prompt", message: "SCRIPT:slow tell a long story" });
      await pi.waitEvent((e) => e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta", { from, what: "first text delta" });
      await c.send({ type: "abort" });
      await pi.waitEvent((e) => e.type === "agent_settled", { from, what: "agent_settled after abort" });
      await pi.settle();
      await c.prompt("SCRIPT:fail this request fails upstream");
      await c.send({ type: "bash", command: "printf 'line1\\nline2\\n'; exit 3" });
      await c.send({ type: "set_session_name", name: "first name" });
      await c.send({ type: "set_session_name", name: "second name" });
      await c.prompt("SCRIPT:chat all good now");
      await c.record("misc-messages");
    },
  },
};

// ---------------------------------------------------------------------------

function neutralPackageDir(work) {
  const link = path.join(work, "pi");
  if (!fs.existsSync(link)) fs.symlinkSync(piPackageDir(), link, "dir");
  return link;
}

async function runScenario(name, opts) {
  const scen = SCENARIOS[name];
  if (!scen) throw new Error(`unknown scenario ${name}; known: ${Object.keys(SCENARIOS).join(", ")}`);
  const base = path.join(opts.work, name);
  fs.rmSync(base, { recursive: true, force: true });
  const agentDir = path.join(base, "agent");
  writeAgentDir16(agentDir, { port: opts.port, keepRecentTokens: scen.keep, cacheWarming: scen.cacheWarming });
  const started = Date.now();
  const pi = PiRpc.start({
    cwd: path.join(base, "project"),
    agentDir,
    baseDir: base,
    extensions: [HELPER16],
    args: ["--no-mcp", "--model", scen.model ?? "fake-model"],
    env: { PI_PACKAGE_DIR: opts.packageDir },
    label: name,
  });
  const c = new Ctx(pi, name);
  try {
    await scen.run(c);
  } catch (e) {
    e.message += `\n--- pi stderr (tail) ---\n${pi.stderr.slice(-3000)}`;
    throw e;
  } finally {
    await pi.stop();
  }
  copyRecorded("rpc-scenarios-1.6", name, c.files, opts.out, started);
  return c.files;
}

async function main() {
  const opts = parseScenarioArgs(process.argv.slice(2), { script: "rpc-scenarios-1.6.mjs", deadlineSeconds: 280 });
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 22) throw new Error(`Pi 1.6 needs Node >= 22.19; this is ${process.version}`);
  fs.mkdirSync(opts.work, { recursive: true });
  opts.packageDir = neutralPackageDir(opts.work);
  const version = JSON.parse(fs.readFileSync(path.join(piPackageDir(), "package.json"), "utf8")).version;
  process.stderr.write(`rpc-scenarios-1.6: Pi ${version} on Node ${process.version}\n`);
  await runScenarios("rpc-scenarios-1.6", Object.keys(SCENARIOS), opts, (name) => runScenario(name, opts));
}

main().catch((e) => {
  process.stderr.write(`rpc-scenarios-1.6: ${e.stack ?? e}\n`);
  process.exit(1);
});
