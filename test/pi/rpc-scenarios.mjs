#!/usr/bin/env node
// Generate genuine Pi session files by driving the real `pi --mode rpc` CLI
// against the fake OpenAI server (test/pi/fake-openai.mjs, already running).
//
//   node rpc-scenarios.mjs --port PORT --out OUTDIR --work WORKDIR [scenario ...]
//
// Every scenario gets its own agent dir, HOME, XDG dirs and cwd under WORKDIR
// and runs its own pi process (own process group, killed at the end). The
// session files Pi wrote are copied byte for byte to OUTDIR/<name>.jsonl.
// Without scenario names every scenario runs (three at a time).
import fs from "node:fs";
import path from "node:path";
import { TINY_PNG, copyRecorded, parseScenarioArgs, runScenarios } from "./scenario-runner.mjs";
import { PiRpc, writeAgentDir } from "./pi-rpc.mjs";

// ---------------------------------------------------------------------------
// Scenario helpers

class Ctx {
  constructor(pi, name) {
    this.pi = pi;
    this.name = name;
    this.files = {};
  }
  async state() {
    return (await this.pi.send({ type: "get_state" })).data;
  }
  async entries() {
    return (await this.pi.helper("/entries")).entries;
  }
  async userEntries() {
    return (await this.pi.send({ type: "get_fork_messages" })).data.messages;
  }
  async record(name) {
    const st = await this.state();
    if (!st.sessionFile) throw new Error(`${this.name}: no session file for ${name}`);
    this.files[name] = st.sessionFile;
    return st.sessionFile;
  }
}

function last(arr, pred) {
  for (let i = arr.length - 1; i >= 0; i--) if (pred(arr[i])) return arr[i];
  return undefined;
}

const isCompactionEnd = (reason) => (e) => e.type === "compaction_end" && e.reason === reason;

// ---------------------------------------------------------------------------
// Scenarios. `keep` is compaction.keepRecentTokens in the agent settings.

const SCENARIOS = {
  full: {
    // 140 puts the manual cut exactly on the second user message (no split turn).
    keep: 140,
    async run(c) {
      const { pi } = c;
      await pi.prompt("SCRIPT:tools please create notes.txt and check it");
      await pi.prompt("SCRIPT:more also create other.txt and read both files");
      const main = await c.record("full-main");
      const users = await c.userEntries();
      if (users.length < 2) throw new Error("full: expected two user messages");

      const compact = await pi.send({ type: "compact", customInstructions: "Focus on notes.txt" }, { timeoutMs: 30000 });
      if (!compact.data?.firstKeptEntryId) throw new Error("full: compact returned no firstKeptEntryId");

      let es = await c.entries();
      const turn1End = es.find((e) => e.id === users[1].entryId).parentId;
      await pi.helper(`/navtree ${turn1End} summarize label=before-more`);
      await pi.helper(`/label ${users[0].entryId} first-prompt`);
      await pi.helper("/custom fixture");
      await pi.send({ type: "set_session_name", name: "rpc-fixture-session" });
      await pi.prompt("SCRIPT:chat continue on the second branch");

      es = await c.entries();
      const branch2User = last(es, (e) => e.type === "message" && e.role === "user");
      await pi.helper(`/navtree ${branch2User.id}`);
      await pi.prompt("SCRIPT:think take a third path");
      es = await c.entries();
      const thinkAssistant = last(es, (e) => e.type === "message" && e.role === "assistant");
      await pi.helper(`/label ${thinkAssistant.id} temporary-label`);
      await pi.helper(`/label ${thinkAssistant.id}`);
      await pi.send({ type: "bash", command: "echo user-bash-output" });
      await pi.prompt("SCRIPT:chat wrap up after the bash command");
      await pi.settle();

      // clone: labels sit inside the path, so Pi 0.73.1 writes a dangling parentId.
      await pi.send({ type: "clone" });
      await pi.settle();
      await c.record("full-clone");

      await pi.send({ type: "switch_session", sessionPath: main });
      await pi.send({ type: "fork", entryId: users[1].entryId });
      await pi.prompt("SCRIPT:chat continue inside the fork");
      await c.record("full-fork");

      await pi.send({ type: "switch_session", sessionPath: main });
      await pi.send({ type: "fork", entryId: users[0].entryId });
      await pi.prompt("SCRIPT:chat start over in a fork of the first prompt");
      await c.record("full-fork-first");
    },
  },

  "compact-split": {
    keep: 150,
    async run(c) {
      const { pi } = c;
      await pi.prompt("SCRIPT:chat CHARS=600 a warm-up question first");
      await pi.prompt("SCRIPT:big STEPS=5 run a long job with many steps");
      const r = await pi.send({ type: "compact" });
      if (!r.data.summary.includes("**Turn Context (split turn):**")) throw new Error("compact-split: expected a split turn");
      await pi.prompt("SCRIPT:chat after the split compaction");
      await c.record("compact-split");
    },
  },

  "compact-twice": {
    keep: 150,
    async run(c) {
      const { pi } = c;
      await pi.prompt("SCRIPT:big STEPS=4 first long job");
      const first = await pi.send({ type: "compact" });
      if (!first.data.summary.startsWith("No prior history.")) throw new Error("compact-twice: first compaction should have no prior history");
      await pi.prompt("SCRIPT:tools now use the tools");
      await pi.prompt("SCRIPT:chat CHARS=800 talk about the result");
      const second = await pi.send({ type: "compact", customInstructions: "Keep the file names" });
      if (!second.data.summary.includes("updated checkpoint")) throw new Error("compact-twice: second compaction should update the previous summary");
      await pi.prompt("SCRIPT:chat one more after two compactions");
      await c.record("compact-twice");
    },
  },

  "auto-threshold": {
    keep: 200,
    async run(c) {
      const { pi } = c;
      await pi.prompt("SCRIPT:tools please create notes.txt");
      const from = pi.events.length;
      await pi.prompt("SCRIPT:chat BIGUSAGE report a huge prompt usage");
      // Pi compacts after agent_end; wait for it explicitly rather than trusting settle().
      const { event } = await pi.waitEvent(isCompactionEnd("threshold"), { from, what: "compaction_end{threshold}" });
      if (!event.result) throw new Error(`auto-threshold: compaction failed: ${event.errorMessage}`);
      await pi.settle();
      await pi.prompt("SCRIPT:chat after the automatic compaction");
      await c.record("auto-threshold");
    },
  },

  overflow: {
    keep: 200,
    async run(c) {
      const { pi } = c;
      await pi.prompt("SCRIPT:tools please create notes.txt");
      await pi.prompt("SCRIPT:more and other.txt");
      const from = pi.events.length;
      await pi.prompt("SCRIPT:overflow this request overflows the context");
      const { index } = await pi.waitEvent((e) => isCompactionEnd("overflow")(e) && e.willRetry === true, {
        from,
        what: "compaction_end{overflow, willRetry}",
      });
      await pi.waitEvent((e) => e.type === "agent_end", { from: index, what: "agent_end of the retry" });
      await pi.settle();
      await pi.prompt("SCRIPT:chat after the overflow recovery");
      await c.record("overflow");
    },
  },

  tree: {
    keep: 150,
    async run(c) {
      const { pi } = c;
      await pi.prompt("SCRIPT:chat CHARS=300 first question");
      await pi.prompt("SCRIPT:tools second question with tools");
      await pi.prompt("SCRIPT:chat third question");
      const users = await c.userEntries();
      let es = await c.entries();
      const a1 = es.find((e) => e.parentId === users[0].entryId);
      // Navigate to a user message with a summary: new leaf = its parent (a1).
      await pi.helper(`/navtree ${users[1].entryId} summarize focus=Focus on file changes`);
      await pi.prompt("SCRIPT:more alternative second question");
      // Navigate to the first user message with a summary: new leaf = its parent (a settings entry).
      await pi.helper(`/navtree ${users[0].entryId} summarize`);
      await pi.prompt("SCRIPT:chat restart from scratch");
      await pi.prompt("SCRIPT:tools redo the tools");
      await pi.send({ type: "compact" });
      await pi.prompt("SCRIPT:chat after compacting over a branch summary");
      // Navigate to an assistant without a summary but with a label: the label entry becomes the leaf.
      await pi.helper(`/navtree ${a1.id} label=checkpoint`);
      await pi.prompt("SCRIPT:chat continue from the checkpoint");
      es = await c.entries();
      if (es.filter((e) => e.type === "branch_summary").length !== 2) throw new Error("tree: expected two branch summaries");
      await c.record("tree-nav");
    },
  },

  misc: {
    keep: 20000,
    async run(c) {
      const { pi } = c;
      await pi.prompt("SCRIPT:think a question that needs some thought");
      await pi.send({ type: "set_model", provider: "fake", modelId: "fake-model-2" });
      await pi.send({ type: "set_thinking_level", level: "high" });
      await pi.prompt("SCRIPT:chat describe this image", {
        extra: { images: [{ type: "image", data: TINY_PNG, mimeType: "image/png" }] },
      });
      // Abort a slow stream after the first text delta: a persisted aborted assistant.
      const from = pi.events.length;
      await pi.send({ type: "prompt", message: "SCRIPT:slow tell a long story" });
      await pi.waitEvent((e) => e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta", {
        from,
        what: "first text delta",
      });
      await pi.send({ type: "abort" });
      await pi.waitEvent((e) => e.type === "agent_end", { from, what: "agent_end after abort" });
      await pi.settle();
      await pi.prompt("SCRIPT:fail this request fails upstream");
      await pi.prompt("SCRIPT:length this answer gets cut by the length limit");
      await pi.send({ type: "bash", command: "printf 'line1\\nline2\\n'; exit 3" });
      await pi.send({ type: "set_session_name", name: "first name" });
      await pi.send({ type: "set_session_name", name: "second name" });
      await pi.prompt("SCRIPT:chat all good now");
      await c.record("misc-messages");
    },
  },
};

// ---------------------------------------------------------------------------

async function runScenario(name, opts) {
  const scen = SCENARIOS[name];
  if (!scen) throw new Error(`unknown scenario ${name}; known: ${Object.keys(SCENARIOS).join(", ")}`);
  const base = path.join(opts.work, name);
  fs.rmSync(base, { recursive: true, force: true });
  const agentDir = path.join(base, "agent");
  writeAgentDir(agentDir, { port: opts.port, keepRecentTokens: scen.keep });
  const started = Date.now();
  const pi = PiRpc.start({ cwd: path.join(base, "project"), agentDir, baseDir: base, label: name });
  const c = new Ctx(pi, name);
  try {
    await scen.run(c);
  } finally {
    await pi.stop();
  }
  copyRecorded("rpc-scenarios", name, c.files, opts.out, started);
  return c.files;
}

async function main() {
  const opts = parseScenarioArgs(process.argv.slice(2), { script: "rpc-scenarios.mjs", deadlineSeconds: 150 });
  await runScenarios("rpc-scenarios", Object.keys(SCENARIOS), opts, (name) => runScenario(name, opts));
}

main().catch((e) => {
  process.stderr.write(`rpc-scenarios: ${e.stack ?? e}\n`);
  process.exit(1);
});
