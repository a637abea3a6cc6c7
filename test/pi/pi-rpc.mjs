// Shared helpers for driving the real Pi CLI in `--mode rpc` against
// test/pi/fake-openai.mjs. Used by rpc-scenarios.mjs and rpc-inspect.mjs.
// No dependencies beyond Node itself.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { onLines } from "./lines.mjs";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, "..", "..");
export const HELPER_EXTENSION = path.join(HERE, "ext", "pi-test-helper.ts");

export function piPackageDir() {
  return process.env.PI_LSP_PI_DIR || path.join(REPO, ".tools", "pi", "node_modules", "@mariozechner", "pi-coding-agent");
}

export function piCliPath() {
  // 0.73.1 ships dist/cli.js; 1.6.0 ships the CLI as dist/bundle/cli.js.
  const candidates = [path.join(piPackageDir(), "dist", "cli.js"), path.join(piPackageDir(), "dist", "bundle", "cli.js")];
  const cli = candidates.find((c) => fs.existsSync(c));
  if (!cli) {
    throw new Error(`real Pi not found at ${candidates[0]}; run scripts/install-pi.sh (or set PI_LSP_PI_DIR)`);
  }
  return cli;
}

const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/**
 * A models.json entry of the fake provider: a 128k context, 4096 output
 * tokens, text input and free unless opts say otherwise (opts' other fields,
 * such as promptCache, are appended).
 */
export function fakeModel(id, name, { reasoning = false, input = ["text"], cost = ZERO_COST, ...rest } = {}) {
  return { id, name, reasoning, input, contextWindow: 128000, maxTokens: 4096, cost, ...rest };
}

/**
 * Write models.json and settings.json for an isolated agent dir that points
 * Pi at the fake server on 127.0.0.1:port. models replaces the fake
 * provider's models (by default fake-model and the reasoning, image-taking
 * fake-model-2); settings adds to settings.json (before compaction and retry).
 */
export function writeAgentDir(
  agentDir,
  {
    port,
    keepRecentTokens = 20000,
    reserveTokens = 16384,
    compactionEnabled = true,
    models = [fakeModel("fake-model", "Fake Model"), fakeModel("fake-model-2", "Fake Model 2", { reasoning: true, input: ["text", "image"] })],
    settings = {},
  },
) {
  fs.mkdirSync(agentDir, { recursive: true });
  const compat = { supportsDeveloperRole: false, supportsReasoningEffort: false, supportsStore: false };
  const modelsJSON = {
    providers: {
      fake: { baseUrl: `http://127.0.0.1:${port}/v1`, api: "openai-completions", apiKey: "fake-key", compat, models },
    },
  };
  const settingsJSON = {
    defaultProvider: "fake",
    defaultModel: "fake-model",
    quietStartup: true,
    enableInstallTelemetry: false,
    ...settings,
    compaction: { enabled: compactionEnabled, reserveTokens, keepRecentTokens },
    retry: { enabled: false },
  };
  fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(modelsJSON, null, 2) + "\n");
  fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify(settingsJSON, null, 2) + "\n");
}

/** Environment for a Pi child: nothing may land under the real $HOME. */
export function isolatedEnv(baseDir, agentDir) {
  const home = path.join(baseDir, "home");
  const xdg = path.join(baseDir, "xdg");
  const tmp = path.join(baseDir, "tmp");
  for (const d of [home, tmp, `${xdg}/config`, `${xdg}/data`, `${xdg}/cache`, `${xdg}/state`]) fs.mkdirSync(d, { recursive: true });
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    // Never let a real provider key or a parent session setting leak in.
    if (/_API_KEY$|_OAUTH_TOKEN$/.test(k) || k === "PI_CODING_AGENT_SESSION_DIR") delete env[k];
  }
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: `${xdg}/config`,
    XDG_DATA_HOME: `${xdg}/data`,
    XDG_CACHE_HOME: `${xdg}/cache`,
    XDG_STATE_HOME: `${xdg}/state`,
    TMPDIR: tmp,
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    NO_COLOR: "1",
  };
}

const liveChildren = new Set();
function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}
process.on("exit", () => {
  for (const child of liveChildren) killGroup(child, "SIGKILL");
});

// startFakeOpenAI starts test/pi/fake-openai.mjs on a free port in its own process group
// (killed when this process exits) and resolves to { port, stop }. logPath, when set,
// receives the server's request log; logBodies adds the request bodies to it.
export async function startFakeOpenAI({ logPath, maxSeconds = 120, logBodies = false, stderr = "pipe" } = {}) {
  const args = [path.join(HERE, "fake-openai.mjs"), "0", ...(logPath ? [logPath] : [])];
  const env = { ...process.env, FAKE_OPENAI_MAX_SECONDS: String(maxSeconds), ...(logBodies ? { FAKE_OPENAI_LOG_BODIES: "1" } : {}) };
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", stderr], detached: true, env });
  const port = await new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error("fake server did not start")), 10000);
    child.stdout.on("data", (d) => {
      buf += d.toString();
      const nl = buf.indexOf("\n");
      if (nl !== -1) {
        clearTimeout(timer);
        resolve(Number(buf.slice(0, nl)));
      }
    });
    child.once("exit", (code) => reject(new Error(`fake server exited (${code})`)));
  });
  const stop = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // gone
    }
  };
  process.on("exit", stop);
  return { port, stop };
}

const HELPER_OK = "pi-test-helper:";
const HELPER_ERR = "pi-test-helper-error:";

/**
 * The report of a test extension command (ext/helper-commands.ts) that event
 * carries, { error } for a failed command, or undefined when event is no such
 * report.
 */
export function helperReport(event) {
  if (event.type !== "extension_ui_request" || event.method !== "notify" || typeof event.message !== "string") return undefined;
  if (event.message.startsWith(HELPER_ERR)) return { error: event.message.slice(HELPER_ERR.length) };
  if (!event.message.startsWith(HELPER_OK)) return undefined;
  try {
    return JSON.parse(event.message.slice(HELPER_OK.length));
  } catch {
    return undefined;
  }
}

/** One `pi --mode rpc` process (its own process group) with a JSONL client. */
export class PiRpc {
  /**
   * settledEvent is the event that ends a prompt's agent run (Pi 1.6 sends
   * agent_settled once retries, recovery and compaction are done); with
   * dispositions, a prompt's response must say it "started" a run and a
   * command's that it was "handled" (Pi 1.6's prompt response carries one).
   */
  constructor(child, label, { settledEvent = "agent_end", dispositions = false } = {}) {
    this.child = child;
    this.label = label;
    this.settledEvent = settledEvent;
    this.dispositions = dispositions;
    this.events = [];
    this.waiters = [];
    this.pending = new Map();
    this.nextId = 1;
    this.stderr = "";
    this.exited = false;
    onLines(child.stdout, (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        this.stderr += `[unparsable stdout] ${line.slice(0, 200)}\n`;
        return;
      }
      this.onMessage(msg);
    });
    child.stderr.on("data", (data) => {
      this.stderr += data.toString("utf8");
      if (this.stderr.length > 200000) this.stderr = this.stderr.slice(-100000);
    });
    child.on("exit", (code, signal) => {
      this.exited = true;
      liveChildren.delete(child);
      const err = new Error(`${label}: pi exited (code ${code}, signal ${signal})\n${this.stderr.slice(-4000)}`);
      for (const { reject } of this.pending.values()) reject(err);
      this.pending.clear();
      for (const w of this.waiters) w.reject(err);
      this.waiters = [];
    });
  }

  static start({ cwd, agentDir, baseDir, extensions = [HELPER_EXTENSION], args = [], label = "pi", env: extraEnv = {}, ...opts }) {
    const cli = piCliPath();
    const env = { ...isolatedEnv(baseDir, agentDir), ...extraEnv };
    fs.mkdirSync(cwd, { recursive: true });
    const argv = [
      cli,
      "--mode",
      "rpc",
      "--provider",
      "fake",
      "--model",
      "fake-model",
      "--no-extensions",
      "--no-skills",
      "--no-prompt-templates",
      "--no-themes",
      "--no-context-files",
      ...extensions.flatMap((e) => ["-e", e]),
      ...args,
    ];
    const child = spawn(process.execPath, argv, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    liveChildren.add(child);
    return new PiRpc(child, label, opts);
  }

  onMessage(msg) {
    if (msg.type === "response" && msg.id !== undefined && this.pending.has(msg.id)) {
      const { resolve } = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      resolve(msg);
      return;
    }
    this.events.push(msg);
    const still = [];
    for (const w of this.waiters) {
      if (w.index <= this.events.length - 1 && this.scan(w)) continue;
      still.push(w);
    }
    this.waiters = still;
  }

  scan(w) {
    for (let i = w.index; i < this.events.length; i++) {
      if (w.pred(this.events[i])) {
        clearTimeout(w.timer);
        w.resolve({ event: this.events[i], index: i });
        return true;
      }
    }
    w.index = this.events.length;
    return false;
  }

  /** Send a command and wait for its response; throws on success:false unless allowFailure. */
  async send(cmd, { timeoutMs = 30000, allowFailure = false } = {}) {
    if (this.exited) throw new Error(`${this.label}: pi is not running`);
    const id = `req-${this.nextId++}`;
    const p = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.label}: timeout waiting for response to ${JSON.stringify(cmd).slice(0, 200)}\n${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
    this.child.stdin.write(JSON.stringify({ ...cmd, id }) + "\n");
    const res = await p;
    if (!res.success && !allowFailure) {
      throw new Error(`${this.label}: command ${cmd.type} failed: ${res.error}`);
    }
    return res;
  }

  /** Wait for the first event at or after `from` (an index into this.events) matching pred. */
  waitEvent(pred, { from = 0, timeoutMs = 30000, what = "event" } = {}) {
    return new Promise((resolve, reject) => {
      const w = { pred, index: from, resolve, reject, timer: null };
      if (this.scan(w)) return;
      if (this.exited) return reject(new Error(`${this.label}: pi is not running`));
      w.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        const tail = this.events.slice(-8).map((e) => e.type + (e.method ? `:${e.method}` : "")).join(", ");
        reject(new Error(`${this.label}: timeout waiting for ${what}; last events: ${tail}\n${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** Poll get_state until neither streaming nor compacting (and nothing pending). */
  async settle({ timeoutMs = 30000 } = {}) {
    const deadline = Date.now() + timeoutMs;
    let quietSince = 0;
    let lastCount = -1;
    for (;;) {
      const st = (await this.send({ type: "get_state" })).data;
      const idle = !st.isStreaming && !st.isCompacting && !st.pendingMessageCount;
      if (idle && this.events.length === lastCount) {
        if (!quietSince) quietSince = Date.now();
        if (Date.now() - quietSince >= 250) return st;
      } else {
        quietSince = 0;
      }
      lastCount = this.events.length;
      if (Date.now() > deadline) throw new Error(`${this.label}: pi did not settle: ${JSON.stringify(st)}`);
      await new Promise((r) => setTimeout(r, 60));
    }
  }

  /** Throw unless a prompt's response has the disposition Pi 1.6 gives what was sent. */
  checkDisposition(text, res, want) {
    if (this.dispositions && res.data?.disposition !== want) {
      throw new Error(`${this.label}: ${text} was not ${want}: ${JSON.stringify(res.data)}`);
    }
  }

  /**
   * Run a command of a test extension (ext/helper-commands.ts) and return its
   * report, the first one named after the command (an extension's event
   * reports may come between).
   */
  async helper(text, { timeoutMs = 30000 } = {}) {
    const command = text.slice(1).split(/\s+/)[0];
    const from = this.events.length;
    this.checkDisposition(text, await this.send({ type: "prompt", message: text }, { timeoutMs }), "handled");
    const { event } = await this.waitEvent(
      (e) => {
        const r = helperReport(e);
        return r !== undefined && (r.error !== undefined || r.command === command);
      },
      { from, timeoutMs, what: `helper report for ${text}` },
    );
    const r = helperReport(event);
    if (r.error !== undefined) throw new Error(`${this.label}: ${text} failed: ${r.error}`);
    return r;
  }

  /** Send a prompt and wait until the agent run (and any compaction it triggers) is over. */
  async prompt(message, { timeoutMs = 30000, extra = {} } = {}) {
    const from = this.events.length;
    this.checkDisposition(message, await this.send({ type: "prompt", message, ...extra }, { timeoutMs }), "started");
    const end = this.settledEvent;
    await this.waitEvent((e) => e.type === end, { from, timeoutMs, what: `${end} after ${message}` });
    await this.settle({ timeoutMs });
    return this.events.slice(from);
  }

  async stop() {
    if (this.exited) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    try {
      this.child.stdin.end();
    } catch {
      // ignore
    }
    killGroup(this.child, "SIGTERM");
    const t = setTimeout(() => killGroup(this.child, "SIGKILL"), 3000);
    await exited;
    clearTimeout(t);
  }
}
