#!/usr/bin/env node
// "Does the real Pi CLI load this file?" Opens a COPY of a session file in
// `pi --mode rpc --session <copy>` (against a private fake OpenAI server, so
// nothing leaves the machine) and prints one JSON object on stdout:
//
//   {"file", "roles": [...], "messageCount", "state": {...}, "stats": {...},
//    "copyRewritten": bool}
//
// roles are the roles of `get_messages` (the agent's context as Pi built it
// from the file). The original file is never touched. Real Pi refuses to open
// a session whose header cwd does not exist; then the copy's cwd (only that
// value) is replaced by a private directory and "replacedCwd" says so.
//
//   node test/pi/rpc-inspect.mjs FILE.jsonl [--prompt TEXT]
//
// --prompt sends TEXT as the user's next message once the session is open and adds
// "request": what Pi sent to the model for it ({system, tools, messages}: the system
// prompt text, the tool names, the chat messages), as the fake server received it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { HERE, PiRpc, startFakeOpenAI, writeAgentDir } from "./pi-rpc.mjs";


/**
 * Real Pi refuses (in every non-interactive mode) to open a session whose
 * header cwd does not exist, and session files made elsewhere (the checked-in
 * corpus, synthetic files, files other tests wrote) name directories that
 * are gone. In that case only the cwd value of the header line of the private
 * copy is replaced by an existing private directory; every other byte stays.
 * Returns the replaced cwd, or null.
 */
function fixMissingCwd(copy, newCwd) {
  const text = fs.readFileSync(copy, "utf8");
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let o;
    try {
      o = JSON.parse(lines[i]);
    } catch {
      continue; // Pi skips unparsable lines before the header too
    }
    if (!o || o.type !== "session" || typeof o.cwd !== "string" || o.cwd === "" || fs.existsSync(o.cwd)) return null;
    const needle = `"cwd":${JSON.stringify(o.cwd)}`;
    if (lines[i].split(needle).length !== 2) {
      throw new Error(`the session's cwd ${o.cwd} does not exist (real Pi refuses to open it) and the header cannot be patched`);
    }
    fs.mkdirSync(newCwd, { recursive: true });
    lines[i] = lines[i].replace(needle, `"cwd":${JSON.stringify(newCwd)}`);
    fs.writeFileSync(copy, lines.join("\n"));
    return o.cwd;
  }
  return null;
}

function appendedTypes(before, after) {
  if (before.equals(after)) return [];
  if (after.length < before.length || !after.subarray(0, before.length).equals(before)) return null;
  return after
    .subarray(before.length)
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      try {
        return JSON.parse(l).type ?? "?";
      } catch {
        return "<unparsable>";
      }
    });
}

async function main() {
  const file = process.argv[2];
  const promptAt = process.argv.indexOf("--prompt");
  const promptText = promptAt > 0 ? process.argv[promptAt + 1] : undefined;
  if (!file || (promptAt > 0 && promptText === undefined)) {
    console.error("usage: rpc-inspect.mjs FILE.jsonl [--prompt TEXT]");
    process.exit(2);
  }
  const src = path.resolve(file);
  if (!fs.existsSync(src)) throw new Error(`no such file: ${src}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-lsp-inspect-"));
  let fake;
  let pi;
  const deadline = setTimeout(() => {
    console.error("rpc-inspect: timeout");
    process.exit(2);
  }, Number(process.env.PI_LSP_INSPECT_TIMEOUT_MS || 60000));
  deadline.unref();
  try {
    const requestLog = path.join(tmp, "requests.jsonl");
    fake = await startFakeOpenAI({ logPath: requestLog, maxSeconds: 120, logBodies: true });
    const agentDir = path.join(tmp, "agent");
    writeAgentDir(agentDir, { port: fake.port });
    const sessions = path.join(tmp, "sessions");
    fs.mkdirSync(sessions, { recursive: true });
    const copy = path.join(sessions, path.basename(src));
    fs.copyFileSync(src, copy);
    const replacedCwd = fixMissingCwd(copy, path.join(tmp, "session-cwd"));
    const before = fs.readFileSync(copy);
    pi = PiRpc.start({
      cwd: path.join(tmp, "work"),
      agentDir,
      baseDir: tmp,
      extensions: [],
      args: ["--session", copy, "--session-dir", sessions],
      label: "rpc-inspect",
    });
    const state = (await pi.send({ type: "get_state" })).data;
    const messages = (await pi.send({ type: "get_messages" })).data.messages;
    const stats = (await pi.send({ type: "get_session_stats" })).data;
    const after = fs.existsSync(copy) ? fs.readFileSync(copy) : Buffer.alloc(0);
    let request;
    if (promptText !== undefined) {
      await pi.prompt(promptText, { timeoutMs: 45000 });
      const records = fs.existsSync(requestLog)
        ? fs.readFileSync(requestLog, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l))
        : [];
      const body = records.filter((r) => r.kind === "agent" && r.body).map((r) => r.body)[0];
      if (!body) throw new Error("Pi sent no request to the model after the prompt");
      const text = (c) => (typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => (p && typeof p.text === "string" ? p.text : "")).join("") : "");
      const msgs = Array.isArray(body.messages) ? body.messages : [];
      request = {
        system: msgs.filter((m) => m.role === "system" || m.role === "developer").map((m) => text(m.content)).join("\n\n"),
        tools: (body.tools ?? []).map((t) => t?.function?.name ?? t?.name ?? null),
        messages: msgs.filter((m) => m.role !== "system" && m.role !== "developer").map((m) => ({ role: m.role, text: text(m.content) })),
        // The entries Pi appended to the file for the prompt (its system patch, if any,
        // the user message and the answer).
        appended: fs
          .readFileSync(copy)
          .subarray(after.length)
          .toString("utf8")
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l)),
      };
    }
    const out = {
      file: src,
      roles: messages.map((m) => m.role),
      messageCount: messages.length,
      state: {
        sessionId: state.sessionId,
        sessionName: state.sessionName ?? null,
        thinkingLevel: state.thinkingLevel,
        model: state.model ? { provider: state.model.provider, id: state.model.id } : null,
        messageCount: state.messageCount,
        sessionFileIsCopy: state.sessionFile === copy,
      },
      stats,
      // The header's cwd did not exist, so the copy's cwd was replaced (see fixMissingCwd).
      replacedCwd,
      copyRewritten: !before.equals(after),
      // What Pi changed in the copy by just opening it: entries appended after
      // the original bytes (types), or null when the file was rewritten as a whole.
      appendedTypes: appendedTypes(before, after),
    };
    if (request) out.request = request;
    process.stdout.write(JSON.stringify(out) + "\n");
  } finally {
    if (pi) await pi.stop();
    if (fake) fake.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`rpc-inspect: ${e?.stack ?? e}`);
    process.exit(1);
  },
);
