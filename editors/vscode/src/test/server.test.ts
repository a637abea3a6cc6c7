import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describeSource, findServer, versionMismatch } from "../models/server";

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "pi-lsp-find-"));
}
function exe(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, "#!/bin/sh\n", { mode: 0o755 });
  return file;
}

test("the configured path wins, then the bundled binary, then PATH", () => {
  const d = tmp();
  const ext = path.join(d, "ext");
  const onPath = exe(path.join(d, "path-bin", "pi-lsp"));
  const pathEnv = [path.join(d, "empty"), path.dirname(onPath)].join(path.delimiter);
  assert.deepEqual(findServer(ext, "", pathEnv, d), { ok: true, command: onPath, source: "PATH" });
  const bundled = exe(path.join(ext, "bin", "pi-lsp"));
  assert.deepEqual(findServer(ext, "", pathEnv, d), { ok: true, command: bundled, source: "bundled" });
  const mine = exe(path.join(d, "home", "bin", "pi-lsp"));
  assert.deepEqual(findServer(ext, "~/bin/pi-lsp", pathEnv, path.join(d, "home")), { ok: true, command: mine, source: "piLsp.server.path" });
});

test("missing or non-executable binaries give a message that says how to fix it", () => {
  const d = tmp();
  const none = findServer(path.join(d, "ext"), "", path.join(d, "nothing"), d);
  assert.equal(none.ok, false);
  if (!none.ok) {
    assert.match(none.message.text, /pi-lsp was not found/);
    assert.match(none.message.text, /piLsp\.server\.path/);
    assert.deepEqual(none.message.actions, ["openSettings", "showOutput"]);
  }
  const wrong = findServer(path.join(d, "ext"), "/no/such/pi-lsp", "", d);
  assert.equal(wrong.ok, false);
  if (!wrong.ok) assert.match(wrong.message.text, /"\/no\/such\/pi-lsp": no such file/);
  const plain = path.join(d, "plain");
  fs.writeFileSync(plain, "not executable", { mode: 0o644 });
  const notExe = findServer(path.join(d, "ext"), plain, "", d);
  assert.equal(notExe.ok, false);
  if (!notExe.ok) assert.match(notExe.message.text, /not an executable file/);
  // a directory named pi-lsp on PATH is not a binary
  fs.mkdirSync(path.join(d, "dirs", "pi-lsp"), { recursive: true });
  assert.equal(findServer(path.join(d, "ext"), "", path.join(d, "dirs"), d).ok, false);
});

test("a server of another version is named with the extension's, once per pair", () => {
  assert.equal(versionMismatch("0.3.0", "0.2.0"), "pi-lsp 0.3.0 server, extension 0.2.0: update one of them");
  assert.equal(versionMismatch("0.2.0", "0.2.0"), undefined);
  assert.equal(versionMismatch(undefined, "0.2.0"), undefined);
  assert.equal(versionMismatch("", "0.2.0"), undefined);
  assert.equal(describeSource("bundled"), "bundled with the extension");
  assert.equal(describeSource("PATH"), "from PATH");
});
