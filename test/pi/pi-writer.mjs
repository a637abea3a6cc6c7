#!/usr/bin/env node
// Drives one real `pi --mode rpc` process on an existing session, offline against
// fake-openai.mjs, for tests where pi-lsp and Pi write the same file concurrently.
//
//   node test/pi/pi-writer.mjs --cwd DIR --agent-dir DIR --base-dir DIR --session FILE
//
// Writes models.json/settings.json into the agent dir (the fake provider; Pi's own
// compaction disabled so only the prompts write), starts the fake server and Pi, and
// prints one JSON line per event on stdout:
//   {"event":"ready","pid":<pi's pid>,"port":<fake server port>}
//   {"event":"prompted","i":<n>}          after each prompt's run settled
//   {"event":"done","prompts":<n>}        after a "prompts" command finished
//   {"event":"stopped"}                   after "quit"
//   {"event":"error","message":...}
// Commands, one per line on stdin:
//   prompts N CHARS    send N prompts "SCRIPT:chat CHARS=<CHARS> ..." one after another
//   quit               stop Pi and exit (also on stdin EOF)
// Pi and the fake server run in their own process groups and are killed on exit; the
// whole script stops after PI_WRITER_TIMEOUT_MS (default 300000).
import path from "node:path";
import readline from "node:readline";
import { HERE, PiRpc, startFakeOpenAI, writeAgentDir } from "./pi-rpc.mjs";

function arg(name) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`missing --${name}`);
  return process.argv[i + 1];
}

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}


async function main() {
  const cwd = arg("cwd");
  const agentDir = arg("agent-dir");
  const baseDir = arg("base-dir");
  const sessionFile = arg("session");
  const deadline = setTimeout(() => {
    emit({ event: "error", message: "pi-writer: timeout" });
    process.exit(2);
  }, Number(process.env.PI_WRITER_TIMEOUT_MS || 300000));
  deadline.unref();

  const fake = await startFakeOpenAI({ maxSeconds: 600, stderr: "inherit" });
  writeAgentDir(agentDir, { port: fake.port, compactionEnabled: false });
  const pi = PiRpc.start({
    cwd,
    agentDir,
    baseDir,
    extensions: [],
    args: ["--session", sessionFile],
    label: "pi-writer",
  });
  await pi.send({ type: "get_state" });
  emit({ event: "ready", pid: pi.child.pid, port: fake.port });

  let count = 0;
  const stop = async () => {
    await pi.stop();
    fake.stop();
    emit({ event: "stopped" });
    process.exit(0);
  };
  const rl = readline.createInterface({ input: process.stdin });
  const queue = [];
  let busy = false;
  const run = async () => {
    if (busy) return;
    busy = true;
    while (queue.length) {
      const line = queue.shift().trim().split(/\s+/);
      if (line[0] === "quit") return stop();
      if (line[0] === "prompts") {
        const n = Number(line[1] || 1);
        const chars = Number(line[2] || 2000);
        for (let i = 0; i < n; i++) {
          count++;
          await pi.prompt(`SCRIPT:chat CHARS=${chars} prompt ${count} from pi-writer`, { timeoutMs: 60000 });
          emit({ event: "prompted", i: count });
        }
        emit({ event: "done", prompts: count });
      }
    }
    busy = false;
  };
  rl.on("line", (l) => {
    queue.push(l);
    run().catch((e) => {
      emit({ event: "error", message: String(e?.stack ?? e) });
      process.exit(1);
    });
  });
  rl.on("close", () => {
    queue.push("quit");
    run().catch(() => process.exit(1));
  });
}

main().catch((e) => {
  emit({ event: "error", message: String(e?.stack ?? e) });
  process.exit(1);
});
