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
import { COMPACT_SPLIT, ScenarioCtx, TINY_PNG, abortSlowStream, autoCompactionScenario, cloneAndFork, fullStart, last, miscEnd, parseScenarioArgs, runScenarios, secondCompaction, thresholdScenario, treeStart } from "./scenario-runner.mjs";
import { PiRpc, writeAgentDir } from "./pi-rpc.mjs";

// ---------------------------------------------------------------------------
// Scenarios. `keep` is compaction.keepRecentTokens in the agent settings.

const SCENARIOS = {
  full: {
    // 140 puts the manual cut exactly on the second user message (no split turn).
    keep: 140,
    async run(c) {
      const { main, users } = await fullStart(c, "SCRIPT:more also create other.txt and read both files");

      const compact = await c.send({ type: "compact", customInstructions: "Focus on notes.txt" });
      if (!compact.data?.firstKeptEntryId) throw new Error("full: compact returned no firstKeptEntryId");

      let es = await c.entries();
      const turn1End = es.find((e) => e.id === users[1].entryId).parentId;
      await c.steps(`/navtree ${turn1End} summarize label=before-more`, `/label ${users[0].entryId} first-prompt`, "/custom fixture");
      await c.send({ type: "set_session_name", name: "rpc-fixture-session" });
      await c.prompt("SCRIPT:chat continue on the second branch");

      es = await c.entries();
      const branch2User = last(es, (e) => e.type === "message" && e.role === "user");
      await c.steps(`/navtree ${branch2User.id}`, "SCRIPT:think take a third path");
      es = await c.entries();
      const thinkAssistant = last(es, (e) => e.type === "message" && e.role === "assistant");
      await c.steps(`/label ${thinkAssistant.id} temporary-label`, `/label ${thinkAssistant.id}`);
      await c.send({ type: "bash", command: "echo user-bash-output" });
      await c.prompt("SCRIPT:chat wrap up after the bash command");
      await c.pi.settle();

      // clone: labels sit inside the path, so Pi 0.73.1 writes a dangling parentId.
      await cloneAndFork(c, main, users);
    },
  },

  "compact-split": COMPACT_SPLIT,

  "compact-twice": {
    keep: 150,
    async run(c) {
      await c.prompt("SCRIPT:big STEPS=4 first long job");
      const first = await c.send({ type: "compact" });
      if (!first.data.summary.startsWith("No prior history.")) throw new Error("compact-twice: first compaction should have no prior history");
      await secondCompaction(c);
      await c.prompt("SCRIPT:chat one more after two compactions");
      await c.record("compact-twice");
    },
  },

  "auto-threshold": thresholdScenario(200),

  // A request over the context window: Pi compacts and retries it.
  overflow: autoCompactionScenario({
    keep: 200,
    file: "overflow",
    before: ["SCRIPT:tools please create notes.txt", "SCRIPT:more and other.txt"],
    trigger: "SCRIPT:overflow this request overflows the context",
    reason: "overflow",
    retry: true,
    after: "SCRIPT:chat after the overflow recovery",
  }),

  tree: {
    keep: 150,
    async run(c) {
      const { a1, users } = await treeStart(c);
      // Navigate to the first user message with a summary: new leaf = its parent (a settings entry).
      await c.steps(`/navtree ${users[0].entryId} summarize`, "SCRIPT:chat restart from scratch", "SCRIPT:tools redo the tools");
      await c.send({ type: "compact" });
      await c.prompt("SCRIPT:chat after compacting over a branch summary");
      // Navigate to an assistant without a summary but with a label: the label entry becomes the leaf.
      await c.steps(`/navtree ${a1.id} label=checkpoint`, "SCRIPT:chat continue from the checkpoint");
      const es = await c.entries();
      if (es.filter((e) => e.type === "branch_summary").length !== 2) throw new Error("tree: expected two branch summaries");
      await c.record("tree-nav");
    },
  },

  misc: {
    keep: 20000,
    async run(c) {
      await c.prompt("SCRIPT:think a question that needs some thought");
      await c.send({ type: "set_model", provider: "fake", modelId: "fake-model-2" });
      await c.send({ type: "set_thinking_level", level: "high" });
      await c.prompt("SCRIPT:chat describe this image", {
        extra: { images: [{ type: "image", data: TINY_PNG, mimeType: "image/png" }] },
      });
      await abortSlowStream(c);
      await c.steps("SCRIPT:fail this request fails upstream", "SCRIPT:length this answer gets cut by the length limit");
      await miscEnd(c);
    },
  },
};

// ---------------------------------------------------------------------------

async function main() {
  const opts = parseScenarioArgs(process.argv.slice(2), { script: "rpc-scenarios.mjs", deadlineSeconds: 150 });
  await runScenarios("rpc-scenarios", SCENARIOS, opts, (scen, { name, base, agentDir, cwd }) => {
    writeAgentDir(agentDir, { port: opts.port, keepRecentTokens: scen.keep });
    return new ScenarioCtx(PiRpc.start({ cwd, agentDir, baseDir: base, label: name }), name);
  });
}

main().catch((e) => {
  process.stderr.write(`rpc-scenarios: ${e.stack ?? e}\n`);
  process.exit(1);
});
