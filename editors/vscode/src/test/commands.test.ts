// package.json's contributes.commands must give a title to exactly the server's commands (pi.*),
// and must agree with the server's own table: `pi-lsp commands --json` when the binary has it,
// else initialize's executeCommandProvider.commands. The server binary is PI_LSP_BIN or the
// repository's bin/pi-lsp; without one the server comparison is skipped (PI_LSP_REQUIRE_SERVER=1
// turns that into a failure, as scripts/test-vscode.sh sets it).
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { contributedServerCommands, diffCommandIds, EXTENSION_COMMANDS, SERVER_COMMANDS } from "../models/commands";

const extRoot = path.resolve(__dirname, "..", "..");
const repoRoot = path.resolve(extRoot, "..", "..");
const pkg = JSON.parse(fs.readFileSync(path.join(extRoot, "package.json"), "utf8"));
const contributions: { command: string; title: string }[] = pkg.contributes.commands;

test("package.json titles the server commands exactly as the extension's table", () => {
  assert.deepEqual(contributedServerCommands(contributions), SERVER_COMMANDS);
});

test("every command id starts with pi., in the Pi category; extension-side ids are never server ids", () => {
  const serverIds = new Set<string>(SERVER_COMMANDS.map((c) => c.id));
  for (const id of Object.values(EXTENSION_COMMANDS)) {
    assert.ok(id.startsWith("pi."), id);
    assert.ok(!serverIds.has(id), `${id} is a server command`);
    assert.ok(contributions.some((c) => c.command === id), `${id} is contributed`);
  }
  for (const c of contributions as { command: string; title: string; category?: string }[]) {
    assert.ok(c.command.startsWith("pi."), c.command);
    assert.equal(c.category, "Pi", `${c.command} is in the Pi category`);
    assert.ok(!c.title.startsWith("Pi:"), `${c.command}: the category says Pi, not the title "${c.title}"`);
  }
  // menus only reference contributed commands
  const ids = new Set(contributions.map((c) => c.command));
  for (const list of Object.values(pkg.contributes.menus) as { command: string }[][]) {
    for (const m of list) assert.ok(ids.has(m.command), `menu entry ${m.command} is contributed`);
  }
});

test("diffCommandIds", () => {
  assert.deepEqual(diffCommandIds(["pi.a", "pi.b"], ["pi.b", "pi.c"]), { missing: ["pi.a"], extra: ["pi.c"] });
});

function serverBinary(): string | undefined {
  const candidates = [process.env.PI_LSP_BIN, path.join(repoRoot, "bin", "pi-lsp")].filter((p): p is string => !!p);
  return candidates.find((p) => fs.existsSync(p));
}

function tempEnv(): NodeJS.ProcessEnv {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-lsp-cmdtest-"));
  return {
    ...process.env,
    HOME: tmp,
    XDG_CONFIG_HOME: path.join(tmp, "config"),
    XDG_DATA_HOME: path.join(tmp, "data"),
    XDG_CACHE_HOME: path.join(tmp, "cache"),
    XDG_STATE_HOME: path.join(tmp, "state"),
    PI_CODING_AGENT_DIR: path.join(tmp, "agent"),
  };
}

/** initialize over stdio with a minimal Content-Length framer; resolves the command ids. */
function initializeCommands(bin: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const env = tempEnv();
    const child = spawn(bin, ["serve", "--stdio"], { env, stdio: ["pipe", "pipe", "pipe"] });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("no initialize answer in 10 s"));
    }, 10_000);
    let buf = Buffer.alloc(0);
    const send = (msg: object) => {
      const body = Buffer.from(JSON.stringify(msg), "utf8");
      child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
      child.stdin.write(body);
    };
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.stdout.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const sep = buf.indexOf("\r\n\r\n");
        if (sep < 0) return;
        const m = /Content-Length: *(\d+)/i.exec(buf.subarray(0, sep).toString("ascii"));
        if (!m) return reject(new Error("bad header"));
        const len = Number(m[1]);
        if (buf.length < sep + 4 + len) return;
        const msg = JSON.parse(buf.subarray(sep + 4, sep + 4 + len).toString("utf8"));
        buf = buf.subarray(sep + 4 + len);
        if (msg.id === 1) {
          clearTimeout(timer);
          send({ jsonrpc: "2.0", id: 2, method: "shutdown" });
          setTimeout(() => {
            send({ jsonrpc: "2.0", method: "exit" });
            setTimeout(() => child.kill("SIGKILL"), 2000).unref();
          }, 100);
          resolve(msg.result?.capabilities?.executeCommandProvider?.commands ?? []);
        }
      }
    });
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { processId: process.pid, rootUri: null, workspaceFolders: null, capabilities: {} },
    });
  });
}

test("the server's command table matches contributes.commands", async (t) => {
  const bin = serverBinary();
  if (!bin) {
    if (process.env.PI_LSP_REQUIRE_SERVER === "1") assert.fail("no pi-lsp binary: run make build (or set PI_LSP_BIN)");
    t.skip("no bin/pi-lsp: run make build to compare with the server");
    return;
  }
  const contributed = contributedServerCommands(contributions);
  const cli = spawnSync(bin, ["commands", "--json"], { env: tempEnv(), encoding: "utf8", timeout: 10_000 });
  let table: { id: string; title?: string }[] | undefined;
  if (cli.status === 0) {
    try {
      table = JSON.parse(cli.stdout);
    } catch {
      assert.fail(`pi-lsp commands --json printed no JSON: ${cli.stdout.slice(0, 200)}`);
    }
  }
  if (table) {
    const d = diffCommandIds(table.map((c) => c.id), contributed.map((c) => c.id));
    assert.deepEqual(d, { missing: [], extra: [] }, "pi-lsp commands --json vs package.json");
    for (const c of table) {
      if (c.title === undefined) continue;
      const mine = contributed.find((x) => x.id === c.id);
      assert.equal(mine?.title, c.title, `title of ${c.id}`);
    }
  } else {
    t.diagnostic(`pi-lsp commands --json is not available (exit ${cli.status}); comparing with initialize`);
  }
  const fromInit = await initializeCommands(bin);
  assert.deepEqual(diffCommandIds(fromInit, contributed.map((c) => c.id)), { missing: [], extra: [] }, "initialize executeCommandProvider.commands vs package.json");
});
