// The parts the genuine-corpus generators (rpc-scenarios.mjs for Pi 0.73.1,
// rpc-scenarios-1.6.mjs for Pi 1.6.0) share: their command line, the context a
// scenario runs with, the scenarios and steps both Pis go through, the bounded
// run of scenarios a few at a time, and the copy of what each recorded.
import fs from "node:fs";
import path from "node:path";

// A 2x2 PNG, for scenarios with user images.
export const TINY_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";

// parseScenarioArgs reads --port PORT --out OUTDIR --work WORKDIR [--concurrency N]
// [--deadline S] [scenario ...].
export function parseScenarioArgs(argv, { script, deadlineSeconds }) {
  const out = { port: 0, out: "", work: "", scenarios: [], concurrency: 3, deadlineSeconds };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--port") out.port = Number(argv[++i]);
    else if (a === "--out") out.out = argv[++i];
    else if (a === "--work") out.work = argv[++i];
    else if (a === "--concurrency") out.concurrency = Number(argv[++i]);
    else if (a === "--deadline") out.deadlineSeconds = Number(argv[++i]);
    else if (a.startsWith("--")) throw new Error(`unknown flag ${a}`);
    else out.scenarios.push(a);
  }
  if (!out.port || !out.out || !out.work) {
    throw new Error(`usage: ${script} --port PORT --out OUTDIR --work WORKDIR [scenario ...]`);
  }
  return out;
}

/**
 * What a scenario's run(c) gets: the scenario's Pi (c.pi, a PiRpc), its name,
 * and the session files it recorded (c.files, by corpus file name).
 * timeoutMs bounds each command and prompt.
 */
export class ScenarioCtx {
  constructor(pi, name, { timeoutMs = 30000 } = {}) {
    this.pi = pi;
    this.name = name;
    this.timeoutMs = timeoutMs;
    this.files = {};
  }

  send(cmd, opts) {
    return this.pi.send(cmd, { timeoutMs: this.timeoutMs, ...opts });
  }

  prompt(message, opts) {
    return this.pi.prompt(message, { timeoutMs: this.timeoutMs, ...opts });
  }

  helper(text, opts) {
    return this.pi.helper(text, opts);
  }

  /**
   * Run steps in order: a string starting with "/" is a test extension
   * command (helper), any other string a prompt.
   */
  async steps(...steps) {
    for (const step of steps) {
      if (step.startsWith("/")) await this.helper(step);
      else await this.prompt(step);
    }
  }

  /** Every entry of the session (id, parentId, type, role), from the test extension. */
  async entries() {
    return (await this.helper("/entries")).entries;
  }

  /** The user messages one can fork from ({ entryId, text }). */
  async userEntries() {
    return (await this.send({ type: "get_fork_messages" })).data.messages;
  }

  /** Record the current session file as corpus file name. */
  async record(name) {
    const st = (await this.send({ type: "get_state" })).data;
    if (!st.sessionFile) throw new Error(`${this.name}: no session file for ${name}`);
    this.files[name] = st.sessionFile;
    return st.sessionFile;
  }
}

/**
 * The start of both Pis' "full" scenario: a prompt with tools, then second,
 * the session recorded as full-main. Returns its file (main) and its two user
 * messages (users).
 */
export async function fullStart(c, second) {
  await c.steps("SCRIPT:tools please create notes.txt and check it", second);
  const main = await c.record("full-main");
  const users = await c.userEntries();
  if (users.length < 2) throw new Error("full: expected two user messages");
  return { main, users };
}

/**
 * The end of both Pis' "full" scenario: a clone of the session, then, back in
 * the main session file, a fork at the second and one at the first user
 * message, each continued by a prompt.
 */
export async function cloneAndFork(c, main, users) {
  await c.send({ type: "clone" });
  await c.pi.settle();
  await c.record("full-clone");
  const forks = [
    [users[1], "SCRIPT:chat continue inside the fork", "full-fork"],
    [users[0], "SCRIPT:chat start over in a fork of the first prompt", "full-fork-first"],
  ];
  for (const [user, prompt, name] of forks) {
    await c.send({ type: "switch_session", sessionPath: main });
    await c.send({ type: "fork", entryId: user.entryId });
    await c.prompt(prompt);
    await c.record(name);
  }
}

/**
 * Both Pis' "compact-split" scenario: a manual compaction that cuts inside a
 * long tool turn (a split turn).
 */
export const COMPACT_SPLIT = {
  keep: 150,
  async run(c) {
    await c.steps("SCRIPT:chat CHARS=600 a warm-up question first", "SCRIPT:big STEPS=5 run a long job with many steps");
    const r = await c.send({ type: "compact" });
    if (!r.data.summary.includes("**Turn Context (split turn):**")) throw new Error(`compact-split: expected a split turn: ${r.data.summary.slice(0, 300)}`);
    await c.prompt("SCRIPT:chat after the split compaction");
    await c.record("compact-split");
  },
};

/**
 * The second half of both Pis' "compact-twice" scenario: two more turns, then
 * a second manual compaction (with custom instructions), which must update
 * the first one's summary. Returns the second summary.
 */
export async function secondCompaction(c) {
  await c.steps("SCRIPT:tools now use the tools", "SCRIPT:chat CHARS=800 talk about the result");
  const { summary } = (await c.send({ type: "compact", customInstructions: "Keep the file names" })).data;
  if (!summary.includes("updated checkpoint")) throw new Error(`compact-twice: second compaction should update the previous summary: ${summary.slice(0, 200)}`);
  return summary;
}

/** The last element of arr that satisfies pred, or undefined. */
export function last(arr, pred) {
  for (let i = arr.length - 1; i >= 0; i--) if (pred(arr[i])) return arr[i];
  return undefined;
}

/**
 * Prompt with message, which makes Pi compact on its own for reason
 * ("threshold"; "overflow" with retry, when the request fails and Pi retries it
 * after the compaction), and wait until Pi is done. Pi 0.73.1 compacts after the
 * prompt's agent_end and retries in a run of its own; Pi 1.6 does both before the
 * prompt's agent_settled: waiting on the events serves both. Throws unless exactly
 * one compaction of reason succeeded (and, with retry, retried the request).
 */
export async function promptCompacting(c, message, reason, { retry = false } = {}) {
  const { pi } = c;
  const from = pi.events.length;
  await c.prompt(message);
  const isEnd = (e) => e.type === "compaction_end" && e.reason === reason;
  const { index } = await pi.waitEvent(isEnd, { from, timeoutMs: c.timeoutMs, what: `compaction_end{${reason}}` });
  if (retry) await pi.waitEvent((e) => e.type === pi.settledEvent, { from: index, timeoutMs: c.timeoutMs, what: "the end of the retried run" });
  await pi.settle();
  const ends = pi.events.slice(from).filter((e) => e.type === "compaction_end");
  const matching = ends.filter(isEnd);
  if (matching.length !== 1 || !matching[0].result || (retry && matching[0].willRetry !== true)) {
    throw new Error(`${c.name}: expected one successful ${reason} compaction${retry ? " with retry" : ""}: ${JSON.stringify(ends).slice(0, 400)}`);
  }
}

/**
 * A scenario in which Pi compacts on its own: the steps before, the prompt
 * trigger that makes Pi compact for reason (as promptCompacting), the prompt
 * after, then check(c) when given, and the session recorded as file.
 */
export function autoCompactionScenario({ keep, file, before, trigger, reason, retry = false, after, check }) {
  return {
    keep,
    async run(c) {
      await c.steps(...before);
      await promptCompacting(c, trigger, reason, { retry });
      await c.prompt(after);
      if (check) await check(c);
      await c.record(file);
    },
  };
}

/** Both Pis' threshold scenario: a turn reports 120000 prompt tokens, and Pi compacts after it. */
export function thresholdScenario(keep) {
  return autoCompactionScenario({
    keep,
    file: "auto-threshold",
    before: ["SCRIPT:tools please create notes.txt"],
    trigger: "SCRIPT:chat BIGUSAGE report a huge prompt usage",
    reason: "threshold",
    after: "SCRIPT:chat after the automatic compaction",
  });
}

/**
 * A step of both Pis' "misc" scenario: a slow stream aborted after its first
 * text delta, which Pi persists as an aborted assistant message.
 */
export async function abortSlowStream(c) {
  const { pi } = c;
  const from = pi.events.length;
  await c.send({ type: "prompt", message: "SCRIPT:slow tell a long story" });
  await pi.waitEvent((e) => e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta", { from, what: "first text delta" });
  await c.send({ type: "abort" });
  await pi.waitEvent((e) => e.type === pi.settledEvent, { from, what: `${pi.settledEvent} after abort` });
  await pi.settle();
}

/**
 * The end of both Pis' "misc" scenario: a failing bash command, a session
 * named twice and a last prompt, recorded as misc-messages.
 */
export async function miscEnd(c) {
  await c.send({ type: "bash", command: "printf 'line1\\nline2\\n'; exit 3" });
  await c.send({ type: "set_session_name", name: "first name" });
  await c.send({ type: "set_session_name", name: "second name" });
  await c.prompt("SCRIPT:chat all good now");
  await c.record("misc-messages");
}

/**
 * The start of both Pis' "tree" scenario: three questions, then a navigation
 * with a summary (and custom instructions) to the second one, and another
 * second question there. Returns the user messages of the first branch and
 * a1, the first answer (now the second question's parent on both branches).
 */
export async function treeStart(c) {
  await c.steps("SCRIPT:chat CHARS=300 first question", "SCRIPT:tools second question with tools", "SCRIPT:chat third question");
  const users = await c.userEntries();
  const a1 = (await c.entries()).find((e) => e.parentId === users[0].entryId);
  // With a summary: the new leaf is the target's parent (a1).
  await c.steps(`/navtree ${users[1].entryId} summarize focus=Focus on file changes`, "SCRIPT:more alternative second question");
  return { users, a1 };
}

// runScenario runs scenarios[name] in its own dir under opts.work: start(scen, dirs)
// (dirs: name, base, agentDir, cwd) writes the agent dir, starts Pi and returns the
// ScenarioCtx; Pi is stopped at the end, and what the scenario recorded is copied to
// opts.out.
async function runScenario(label, scenarios, name, opts, start) {
  const scen = scenarios[name];
  if (!scen) throw new Error(`unknown scenario ${name}; known: ${Object.keys(scenarios).join(", ")}`);
  const base = path.join(opts.work, name);
  fs.rmSync(base, { recursive: true, force: true });
  const c = start(scen, { name, base, agentDir: path.join(base, "agent"), cwd: path.join(base, "project") });
  const started = Date.now();
  try {
    await scen.run(c);
  } catch (e) {
    e.message += `\n--- pi stderr (tail) ---\n${c.pi.stderr.slice(-3000)}`;
    throw e;
  } finally {
    await c.pi.stop();
  }
  copyRecorded(label, name, c.files, opts.out, started);
  return c.files;
}

// copyRecorded copies each session file a scenario recorded to OUTDIR/<name>.jsonl,
// byte for byte.
function copyRecorded(label, name, files, out, started) {
  for (const [fileName, src] of Object.entries(files)) {
    fs.copyFileSync(src, path.join(out, `${fileName}.jsonl`));
  }
  process.stderr.write(`${label}: ${name} done in ${((Date.now() - started) / 1000).toFixed(1)}s: ${Object.keys(files).join(", ")}\n`);
}

/**
 * Run the scenarios opts names (all of them without names) opts.concurrency
 * at a time within opts.deadlineSeconds, each as runScenario does with start,
 * and exit: 0 when all passed, 1 when one failed, 2 at the deadline.
 */
export async function runScenarios(label, scenarios, opts, start) {
  fs.mkdirSync(opts.out, { recursive: true });
  fs.mkdirSync(opts.work, { recursive: true });
  const names = opts.scenarios.length ? opts.scenarios : Object.keys(scenarios);
  const deadline = setTimeout(() => {
    process.stderr.write(`${label}: deadline of ${opts.deadlineSeconds}s exceeded\n`);
    process.exit(2);
  }, opts.deadlineSeconds * 1000);
  deadline.unref();
  const queue = [...names];
  const failures = [];
  const workers = Array.from({ length: Math.max(1, Math.min(opts.concurrency, queue.length)) }, async () => {
    while (queue.length) {
      const name = queue.shift();
      try {
        await runScenario(label, scenarios, name, opts, start);
      } catch (e) {
        failures.push(`${name}: ${e.stack ?? e}`);
      }
    }
  });
  await Promise.all(workers);
  if (failures.length) {
    process.stderr.write(`${label}: ${failures.length} scenario(s) failed\n${failures.join("\n\n")}\n`);
    process.exit(1);
  }
  process.exit(0);
}
