/**
 * pi-lsp bridge: lets pi-lsp (the editor's sidecar) compact, navigate and label the
 * session of this running pi through Pi's own extension API, so every entry in the
 * file is written by this pi and its in-memory leaf stays right.
 *
 * Load it with `pi -e <repo>/editors/pi/extension.ts`, or install it once with
 * `pi install <repo>/editors/pi`.
 *
 * While a session is open it listens on a Unix socket in the user's runtime
 * directory ($XDG_RUNTIME_DIR/pi-lsp; without one <tmpdir>/pi-lsp-<uid>, or, when that
 * is not a private directory of this user, $XDG_STATE_HOME/pi-lsp/bridge; the directory
 * is 0700, the socket and the registry file 0600) and announces it in a registry file
 * beside it (`<pid>-<n>.json`: protocol, this package's version, pid, its start time,
 * session file, socket, pi version, token). Both are removed when the session closes or
 * pi exits; pi-lsp removes a registry file whose pid is gone or reused, or whose socket
 * refuses. Pi's status line says where the bridge listens, or why it does not.
 *
 * Protocol 1: newline-delimited JSON; the types are in ./protocol.ts, generated from
 * pi-lsp's Go types (internal/bridge). A request is {"id", "type", ...} (the id a number
 * or a string of at most 64 letters, digits and ._:-, or it is refused as malformed);
 * the first one
 * on a connection must be {"type": "hello", "protocol": 1, "token": <the registry's
 * token>} (otherwise the connection is refused and closed). Answers:
 *   {"type": "response", "id", "ok": true, "result": {...}}
 *   {"type": "response", "id", "ok": false, "error": {"code", "message"}}
 * and, while a request runs, {"type": "event", "id", "event": {...Pi's event}}.
 * Requests: hello, ping, status, compact {customInstructions?}, navigate {targetId,
 * summarize?, customInstructions?, replaceInstructions?, label?}, label {entryId,
 * label?}, cancel {target} (aborts the running compaction or branch summary),
 * contextEdit (refused: Pi's extension API appends context edits only as drafts of a
 * running turn). Writes run only while Pi is idle: when the agent is running (or
 * another write is), the request is refused with code "busy" at once.
 * Error codes: malformed, unauthorized, protocol, unknownType, invalidParams, busy,
 * notFound, unsupported, failed, aborted.
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import type {
  BridgeEvent,
  CompactionEndEvent,
  CompactionEntry,
  CompactResult,
  ErrorCode,
  ErrorResponse,
  EventFrame,
  NavigateResult,
  OKResponse,
  RequestID,
  Results,
  Status,
  TreeEvent,
} from "./protocol.ts";

const PROTOCOL = 1;
// This package's version (the repository's VERSION file; scripts/set-version.sh writes it).
const VERSION = "0.2.0";
const COMMAND = "pi-lsp-bridge";
const MAX_LINE = 1 << 20;

type Conn = { socket: net.Socket; authed: boolean };
type Op = {
  id: RequestID; // the client's request id, echoed in answers and events
  key: string; // internal: what the command handler is given (never the client's id)
  type: "compact" | "navigate";
  conn: Conn;
  args: any;
  ended: boolean; // compaction_end sent
  entry?: CompactionEntry;
  tree?: Omit<TreeEvent, "type">;
  abort?: () => void;
  timer?: ReturnType<typeof setTimeout>;
};

/**
 * The directory to register in: $XDG_RUNTIME_DIR/pi-lsp when there is a runtime dir;
 * otherwise <tmpdir>/pi-lsp-<uid>, unless that path is not a private directory of this
 * user (another local user can create it first), and then the user's own state dir
 * ($XDG_STATE_HOME/pi-lsp/bridge or ~/.local/state/pi-lsp/bridge). pi-lsp searches all
 * three. Returns the directory, made private, and why a fallback was taken.
 */
function registryDir(): { dir: string; note?: string } {
  const base = process.env.XDG_RUNTIME_DIR;
  if (base && path.isAbsolute(base)) {
    const dir = path.join(base, "pi-lsp");
    privateDir(dir);
    return { dir };
  }
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  const tmp = path.join(os.tmpdir(), `pi-lsp-${uid}`);
  try {
    privateDir(tmp);
    return { dir: tmp };
  } catch (err) {
    const stateBase = process.env.XDG_STATE_HOME && path.isAbsolute(process.env.XDG_STATE_HOME)
      ? process.env.XDG_STATE_HOME
      : path.join(os.homedir(), ".local", "state");
    const dir = path.join(stateBase, "pi-lsp", "bridge");
    privateDir(dir);
    return { dir, note: `${tmp} is not usable (${errMsg(err)})` };
  }
}

/** Creates the directory 0700 (or tightens it) and refuses one another user owns. */
function privateDir(dir: string) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (typeof process.getuid === "function" && st.uid !== process.getuid()) {
    throw new Error(`${dir} belongs to another user`);
  }
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

/** This process's start time from /proc/self/stat (clock ticks since boot), or undefined. */
function procStart(): string | undefined {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 1).trim().split(/\s+/);
    return /^\d+$/.test(fields[19] ?? "") ? fields[19] : undefined;
  } catch {
    return undefined;
  }
}

/** A request id is a number or a short plain string; anything else is refused as malformed. */
const ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
function validId(id: unknown): id is string | number {
  return (typeof id === "number" && Number.isFinite(id)) || (typeof id === "string" && ID_PATTERN.test(id));
}

/** How long a navigation may wait for Pi to run the bridge's command before it fails. */
const COMMAND_WAIT_MS = 15_000;

function errMsg(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export default function (pi: any) {
  let ctx: any; // the context of session_start; valid while this runtime is active
  let server: net.Server | undefined;
  let socketPath = "";
  let registryPath = "";
  let token = "";
  let sessionFile = "";
  let piVersion = "unknown";
  let current: Op | undefined;
  const pending = new Map<string, Op>(); // navigate ops waiting for the command handler, by op key
  let opSeq = 0;
  const conns = new Set<Conn>();

  function send(conn: Conn, msg: unknown) {
    if (conn.socket.destroyed) return;
    try {
      conn.socket.write(JSON.stringify(msg) + "\n");
    } catch {
      // the client went away
    }
  }
  const ok = (conn: Conn, id: RequestID, result: Results[keyof Results]) =>
    send(conn, { type: "response", id, ok: true, result } satisfies OKResponse);
  const fail = (conn: Conn, id: RequestID | null, code: ErrorCode, message: string) =>
    send(conn, { type: "response", id, ok: false, error: { code, message } } satisfies ErrorResponse);
  const event = (op: Op, ev: BridgeEvent) => send(op.conn, { type: "event", id: op.id, event: ev } satisfies EventFrame);

  function status(): Status {
    const sm = ctx?.sessionManager;
    return {
      protocol: PROTOCOL,
      version: VERSION,
      pid: process.pid,
      sessionFile,
      piVersion,
      idle: ctx ? ctx.isIdle() : false,
      running: current ? { id: current.id, type: current.type } : null,
      leafId: sm?.getLeafId?.() ?? null,
    };
  }

  function finish(op: Op, result: CompactResult | NavigateResult | undefined, error?: { code: ErrorCode; message: string }) {
    if (current === op) current = undefined;
    pending.delete(op.key);
    if (op.timer) clearTimeout(op.timer);
    if (error) fail(op.conn, op.id, error.code, error.message);
    else ok(op.conn, op.id, result!);
  }

  function endCompaction(op: Op, fields: Partial<Omit<CompactionEndEvent, "type">> & { aborted: boolean }) {
    if (op.ended) return;
    op.ended = true;
    event(op, { type: "compaction_end", reason: "manual", willRetry: false, ...fields });
  }

  function runCompact(op: Op) {
    const customInstructions = op.args.customInstructions;
    op.abort = () => ctx.abort();
    event(op, { type: "compaction_start", reason: "manual" });
    ctx.compact({
      customInstructions: customInstructions || undefined,
      onComplete: (result: any) => {
        endCompaction(op, { aborted: false, result });
        finish(op, { result, entry: op.entry ?? null, leafId: ctx.sessionManager.getLeafId() ?? null });
      },
      onError: (err: Error) => {
        const message = errMsg(err);
        const aborted = /cancel|abort/i.test(message);
        endCompaction(op, { aborted, errorMessage: aborted ? undefined : `Compaction failed: ${message}` });
        const code = aborted ? "aborted" : /nothing to compact|already compacted/i.test(message) ? "nothingToCompact" : "failed";
        finish(op, undefined, { code, message });
      },
    });
  }

  async function runNavigate(op: Op, cctx: any) {
    op.abort = () => cctx.abort();
    const a = op.args;
    try {
      const res = await cctx.navigateTree(a.targetId, {
        summarize: !!a.summarize,
        customInstructions: a.customInstructions || undefined,
        replaceInstructions: !!a.replaceInstructions,
        label: a.label || undefined,
      });
      const leafId = cctx.sessionManager.getLeafId() ?? null;
      finish(op, {
        cancelled: !!res?.cancelled,
        leafId,
        oldLeafId: op.tree?.oldLeafId ?? null,
        summaryEntry: op.tree?.summaryEntry ?? null,
      });
    } catch (err) {
      const message = errMsg(err);
      finish(op, undefined, { code: /abort/i.test(message) ? "aborted" : /^Wait for/.test(message) ? "busy" : "failed", message });
    }
  }

  function str(v: unknown, name: string, required = false): string | undefined {
    if (v === undefined || v === null) {
      if (required) throw new Error(`${name} is required`);
      return undefined;
    }
    if (typeof v !== "string") throw new Error(`${name} must be a string`);
    if (required && v === "") throw new Error(`${name} is required`);
    return v;
  }

  function handle(conn: Conn, req: any) {
    const id = req.id ?? null;
    if (typeof req.type !== "string") return fail(conn, id, "malformed", "a request needs a string type");
    if (!conn.authed) {
      if (req.type !== "hello") {
        fail(conn, id, "unauthorized", "the first request must be hello with the registry's token");
        return conn.socket.end();
      }
      const given = typeof req.token === "string" ? Buffer.from(req.token) : Buffer.alloc(0);
      const want = Buffer.from(token);
      if (given.length !== want.length || !crypto.timingSafeEqual(given, want)) {
        fail(conn, id, "unauthorized", "wrong token");
        return conn.socket.end();
      }
      if (req.protocol !== PROTOCOL) {
        fail(conn, id, "protocol", `pi-lsp's Pi extension ${VERSION} speaks bridge protocol ${PROTOCOL}, this pi-lsp speaks protocol ${req.protocol}: update one of them so they match`);
        return conn.socket.end();
      }
      conn.authed = true;
      return ok(conn, id, status());
    }
    if (!validId(id)) {
      return fail(conn, null, "malformed", "a request needs an id: a number or a string of 1 to 64 letters, digits, '.', '_', ':' or '-'");
    }
    switch (req.type) {
      case "hello":
      case "status":
        return ok(conn, id, status());
      case "ping":
        return ok(conn, id, { pong: true });
      case "cancel": {
        const target = current && current.id === req.target && current.conn === conn ? current : undefined;
        if (target?.abort) target.abort();
        return ok(conn, id, { cancelled: !!target });
      }
      case "contextEdit":
        return fail(conn, id, "unsupported",
          "Pi's extension API has no call to append a context edit on demand (it takes context_edit drafts only from a running turn's turn_end or agent_before_settle handlers)");
      case "compact":
      case "navigate":
      case "label":
        break;
      default:
        return fail(conn, id, "unknownType", `unknown request type ${JSON.stringify(req.type)}`);
    }
    let args: any;
    try {
      if (req.type === "compact") args = { customInstructions: str(req.customInstructions, "customInstructions") };
      else if (req.type === "label") args = { entryId: str(req.entryId, "entryId", true), label: str(req.label, "label") };
      else {
        args = {
          targetId: str(req.targetId, "targetId", true),
          customInstructions: str(req.customInstructions, "customInstructions"),
          label: str(req.label, "label"),
          summarize: req.summarize === undefined ? false : req.summarize,
          replaceInstructions: req.replaceInstructions === undefined ? false : req.replaceInstructions,
        };
        if (typeof args.summarize !== "boolean" || typeof args.replaceInstructions !== "boolean") {
          throw new Error("summarize and replaceInstructions must be booleans");
        }
      }
    } catch (err) {
      return fail(conn, id, "invalidParams", errMsg(err));
    }
    if (!ctx) return fail(conn, id, "busy", "pi has no session open");
    if (current) return fail(conn, id, "busy", `pi is running another pi-lsp request (${current.type})`);
    if (!ctx.isIdle()) return fail(conn, id, "busy", "pi is busy (the agent is running or compacting); try again when it is idle");
    const sm = ctx.sessionManager;
    const entryId = req.type === "label" ? args.entryId : req.type === "navigate" ? args.targetId : undefined;
    if (entryId !== undefined && !sm.getEntry(entryId)) return fail(conn, id, "notFound", `entry ${entryId} not found`);
    if (req.type === "label") {
      try {
        pi.setLabel(args.entryId, args.label ? args.label : undefined);
      } catch (err) {
        return fail(conn, id, "failed", errMsg(err));
      }
      return ok(conn, id, { entryId: args.entryId, label: args.label || null, leafId: sm.getLeafId() ?? null });
    }
    const op: Op = { id, key: `op${++opSeq}`, type: req.type, conn, args, ended: false };
    current = op;
    if (req.type === "compact") return runCompact(op);
    // navigateTree exists only on a command's context: Pi runs this extension's
    // command for it at once (extension commands are not sent to the model). If Pi
    // never runs it, the op fails after a while so the bridge cannot stay busy.
    pending.set(op.key, op);
    op.timer = setTimeout(() => {
      if (pending.has(op.key)) {
        finish(op, undefined, { code: "failed", message: `pi did not run the bridge's /${COMMAND} command within ${COMMAND_WAIT_MS / 1000}s` });
      }
    }, COMMAND_WAIT_MS);
    try {
      pi.sendUserMessage(`/${COMMAND} ${op.key}`, { expandPromptTemplates: true });
    } catch (err) {
      finish(op, undefined, { code: "failed", message: errMsg(err) });
    }
  }

  function onConnection(socket: net.Socket) {
    const conn: Conn = { socket, authed: false };
    conns.add(conn);
    let buf = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      buf += chunk;
      if (buf.length > MAX_LINE && buf.indexOf("\n") < 0) {
        fail(conn, null, "malformed", "request line too long");
        socket.destroy();
        return;
      }
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        let req: any;
        try {
          req = JSON.parse(line);
        } catch (err) {
          fail(conn, null, "malformed", `not JSON: ${errMsg(err)}`);
          continue;
        }
        if (!req || typeof req !== "object" || Array.isArray(req)) {
          fail(conn, null, "malformed", "a request is a JSON object");
          continue;
        }
        try {
          handle(conn, req);
        } catch (err) {
          fail(conn, req.id ?? null, "failed", errMsg(err));
        }
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      conns.delete(conn);
      // A client that goes away cancels its running request, as a cancel would.
      if (current && current.conn === conn && current.abort) current.abort();
    });
  }

  function cleanup() {
    for (const p of [registryPath, socketPath]) {
      if (!p) continue;
      try {
        fs.unlinkSync(p);
      } catch {
        // already gone
      }
    }
    registryPath = "";
    socketPath = "";
  }

  const onExit = () => cleanup();

  async function stop() {
    process.off("exit", onExit);
    for (const c of conns) c.socket.end();
    conns.clear();
    const s = server;
    server = undefined;
    cleanup();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }

  async function start(): Promise<string | undefined> {
    sessionFile = ctx.sessionManager.getSessionFile?.() ?? "";
    if (!sessionFile) return undefined; // --no-session: nothing to bridge
    try {
      const mod: any = await import("@earendil-works/pi-coding-agent");
      if (typeof mod?.VERSION === "string") piVersion = mod.VERSION;
    } catch {
      // the version is informative only
    }
    const { dir, note } = registryDir();
    const stem = `${process.pid}-${crypto.randomBytes(4).toString("hex")}`;
    socketPath = path.join(dir, `${stem}.sock`);
    token = crypto.randomBytes(24).toString("hex");
    const srv = net.createServer(onConnection);
    srv.on("error", () => {});
    await new Promise<void>((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(socketPath, () => resolve());
    });
    server = srv;
    fs.chmodSync(socketPath, 0o600);
    const registry = {
      protocol: PROTOCOL,
      version: VERSION,
      pid: process.pid,
      sessionFile: path.resolve(sessionFile),
      socket: socketPath,
      piVersion,
      token,
      cwd: ctx.cwd,
      startedAt: new Date().toISOString(),
      procStart: procStart(),
    };
    const file = path.join(dir, `${stem}.json`);
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(registry) + "\n", { mode: 0o600 });
    fs.renameSync(tmp, file);
    registryPath = file;
    process.on("exit", onExit);
    return note ? `listening in ${dir} (${note})` : `listening in ${dir}`;
  }

  /** Shows in pi whether the bridge listens, and where or why not. */
  function showStatus(c: any, text: string | undefined, warning?: string) {
    try {
      c.ui.setStatus("pi-lsp", text);
      if (warning) c.ui.notify(warning, "warning");
    } catch {
      // no UI
    }
  }

  pi.registerCommand(COMMAND, {
    description: "Internal: runs a pi-lsp request that needs a command context",
    handler: async (args: string, cctx: any) => {
      const op = pending.get(args.trim());
      if (!op) return;
      pending.delete(op.key);
      if (op.timer) clearTimeout(op.timer);
      await runNavigate(op, cctx);
    },
  });

  pi.on("session_start", async (_ev: any, c: any) => {
    ctx = c;
    try {
      await stop();
      const where = await start();
      showStatus(c, where ? `pi-lsp bridge: ${where}` : "pi-lsp bridge: off (no session file)");
    } catch (err) {
      cleanup();
      showStatus(c, "pi-lsp bridge: not listening", `pi-lsp bridge not started: ${errMsg(err)}`);
    }
  });

  pi.on("session_shutdown", async () => {
    if (current) finish(current, undefined, { code: "failed", message: "pi closed the session during the request" });
    await stop();
    ctx = undefined;
  });

  pi.on("session_before_compact", (ev: any) => {
    if (current?.type === "compact") {
      event(current, {
        type: "session_before_compact",
        reason: ev.reason,
        customInstructions: ev.customInstructions ?? null,
        tokensBefore: ev.preparation?.tokensBefore,
        firstKeptEntryId: ev.preparation?.firstKeptEntryId ?? null,
      });
    }
    return undefined;
  });

  pi.on("session_compact", (ev: any) => {
    if (current?.type === "compact") current.entry = ev.compactionEntry;
  });

  pi.on("session_compact_failed", (ev: any) => {
    if (current?.type === "compact") {
      endCompaction(current, { reason: ev.reason, aborted: !!ev.aborted, willRetry: !!ev.willRetry, errorMessage: ev.errorMessage });
    }
  });

  pi.on("session_before_tree", (ev: any) => {
    if (current?.type === "navigate") {
      const p = ev.preparation ?? {};
      event(current, {
        type: "session_before_tree",
        targetId: p.targetId,
        oldLeafId: p.oldLeafId ?? null,
        commonAncestorId: p.commonAncestorId ?? null,
        entries: Array.isArray(p.entriesToSummarize) ? p.entriesToSummarize.length : 0,
        userWantsSummary: !!p.userWantsSummary,
      });
    }
    return undefined;
  });

  pi.on("session_tree", (ev: any) => {
    if (current?.type === "navigate") {
      current.tree = ev;
      event(current, {
        type: "session_tree",
        newLeafId: ev.newLeafId ?? null,
        oldLeafId: ev.oldLeafId ?? null,
        summaryEntry: ev.summaryEntry ?? null,
      });
    }
  });
}
