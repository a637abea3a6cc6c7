import { test } from "node:test";
import * as assert from "node:assert/strict";
import { didChangeConfigurationParams, readSettings, settingValue, toInitializationOptions } from "../models/settings";
import { describeError, missingServerMessage } from "../models/errors";

test("only settings the user set become initializationOptions", () => {
  const s = readSettings(() => undefined);
  assert.deepEqual(toInitializationOptions(s), { drafts: false, clearToolOutput: false });
  const set: Record<string, unknown> = {
    "server.path": "/opt/pi-lsp",
    "summarizer.kind": "openai",
    "summarizer.baseUrl": " http://127.0.0.1:9/v1 ",
    "summarizer.model": "m",
    "summarizer.apiKeyEnv": "MY_KEY",
    "summarizer.drafts": true,
    "compaction.reserveTokens": 8000,
    "compaction.keepRecentTokens": 12000.7,
    "compaction.clearToolOutput": true,
  };
  const t = readSettings((k) => set[k]);
  assert.equal(t.serverPath, "/opt/pi-lsp");
  assert.deepEqual(toInitializationOptions(t), {
    summarizer: "openai",
    baseUrl: "http://127.0.0.1:9/v1",
    model: "m",
    apiKeyEnv: "MY_KEY",
    drafts: true,
    reserveTokens: 8000,
    keepRecentTokens: 12000,
    clearToolOutput: true,
  });
  assert.deepEqual(didChangeConfigurationParams(t), {
    settings: {
      piLsp: {
        summarizer: { kind: "openai", baseUrl: "http://127.0.0.1:9/v1", model: "m", apiKeyEnv: "MY_KEY", drafts: true },
        compaction: { reserveTokens: 8000, keepRecentTokens: 12000, clearToolOutput: true },
      },
    },
  });
  // drafts and clearToolOutput are always sent, so that turning one off reaches a running server
  assert.deepEqual(didChangeConfigurationParams(readSettings(() => undefined)), { settings: { piLsp: { summarizer: { drafts: false }, compaction: { clearToolOutput: false } } } });
  assert.deepEqual(didChangeConfigurationParams(readSettings((k) => (k === "compaction.keepRecentTokens" ? 5 : undefined))), {
    settings: { piLsp: { summarizer: { drafts: false }, compaction: { keepRecentTokens: 5, clearToolOutput: false } } },
  });
  // an unknown kind, negative numbers and a non-boolean drafts or clearToolOutput are dropped
  const bad = readSettings((k) => ({ "summarizer.kind": "gpt", "compaction.reserveTokens": -1, "summarizer.drafts": "yes", "compaction.clearToolOutput": "yes" } as Record<string, unknown>)[k]);
  assert.deepEqual(toInitializationOptions(bad), { drafts: false, clearToolOutput: false });
});

test("the API key itself is never part of the options", () => {
  const o = toInitializationOptions(readSettings((k) => (k === "summarizer.apiKeyEnv" ? "OPENAI_API_KEY" : undefined)));
  assert.deepEqual(Object.keys(o).sort(), ["apiKeyEnv", "clearToolOutput", "drafts"]);
});

test("a workspace cannot set the binary, the endpoint, the key variable or drafts", () => {
  const inspected = (key: string) => ({
    defaultValue: key === "summarizer.drafts" ? false : "",
    globalValue: undefined,
    workspaceValue: ({ "server.path": "./evil", "summarizer.kind": "openai", "summarizer.baseUrl": "https://attacker.example/v1", "summarizer.model": "m", "summarizer.apiKeyEnv": "AWS_SECRET_ACCESS_KEY", "summarizer.drafts": true, "compaction.reserveTokens": 100 } as Record<string, unknown>)[key],
    workspaceFolderValue: key === "summarizer.baseUrl" ? "https://folder.example/v1" : undefined,
  });
  const fromWorkspace = readSettings((k) => settingValue(k, inspected(k)));
  assert.equal(fromWorkspace.serverPath, "");
  assert.deepEqual(toInitializationOptions(fromWorkspace), { drafts: false, reserveTokens: 100, clearToolOutput: false });
  // the user's own values are used
  const user = readSettings((k) => settingValue(k, { ...inspected(k), globalValue: ({ "server.path": "/opt/pi-lsp", "summarizer.baseUrl": "http://127.0.0.1:11434/v1", "summarizer.drafts": true } as Record<string, unknown>)[k] }));
  assert.equal(user.serverPath, "/opt/pi-lsp");
  assert.deepEqual(toInitializationOptions(user), { baseUrl: "http://127.0.0.1:11434/v1", drafts: true, reserveTokens: 100, clearToolOutput: false });
});

test("errors say what to do", () => {
  const cancelled = describeError("Compaction", { code: -32800, message: "cancelled" });
  assert.equal(cancelled.severity, "info");
  assert.match(cancelled.text, /cancelled.*not changed/);
  const summ = describeError("Compaction", { code: -32803, message: "connection refused", data: { kind: "summarizerFailed" } });
  assert.equal(summ.severity, "error");
  assert.match(summ.text, /piLsp\.summarizer/);
  assert.deepEqual(summ.actions, ["openSettings", "useExtractive", "showOutput"]);
  const noSession = describeError("Compaction", { code: -32803, message: "no session", data: { kind: "noSession" } });
  assert.deepEqual(noSession.actions, ["selectSession"]);
  assert.match(describeError("Compaction", { code: -32803, message: "x", data: { kind: "nothingToCompact" } }).text, /^Nothing to compact/);
  assert.match(describeError("Navigation", { code: -32601, message: "unknown" }).text, /Update pi-lsp/);
  assert.match(describeError("Navigation", new Error("boom")).text, /Navigation failed: boom/);
  assert.match(missingServerMessage(undefined, "not on PATH").text, /make build/);
  assert.match(describeError("Compaction", { code: -32801, message: "changed", data: { kind: "sessionChanged" } }).text, /nothing was written/);
  assert.match(describeError("Compaction", { code: -32803, message: "pid 42", data: { kind: "ownedByPi" } }).text, /running pi process/);
  assert.match(describeError("Compaction", { code: -32803, message: "pi (pid 42): pi is busy", data: { kind: "piBusy" } }).text, /live pi is busy/);
  assert.match(describeError("Compaction", { code: -32803, message: "pi (pid 42) went away during the request; the session is as pi left it", data: { kind: "piGone" } }).text, /as pi left it/);
  assert.match(describeError("Compaction", { code: -32803, message: "x", data: { kind: "pinnedDropped" } }).text, /pinned/);
  assert.match(missingServerMessage("/nope", "no such file").text, /piLsp\.server\.path "\/nope"/);
});

test("piLsp.compaction.clearToolOutput is a workspace-allowed boolean, off by default, sent flat and nested", () => {
  const pkg = JSON.parse(require("node:fs").readFileSync(require("node:path").resolve(__dirname, "..", "..", "package.json"), "utf8"));
  const prop = pkg.contributes.configuration.properties["piLsp.compaction.clearToolOutput"];
  assert.equal(prop?.type, "boolean");
  assert.equal(prop?.default, false);
  const on = readSettings((k) => settingValue(k, { workspaceValue: k === "compaction.clearToolOutput" ? true : undefined }));
  assert.equal(toInitializationOptions(on).clearToolOutput, true);
  assert.deepEqual(didChangeConfigurationParams(on).settings.piLsp.compaction, { clearToolOutput: true });
});
