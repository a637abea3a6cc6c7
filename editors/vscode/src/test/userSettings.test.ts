// Every setting that names a program, a URL, a key or an environment variable, or decides
// whether the conversation is sent to a model, is a user-level setting: `machine` (or
// `application`) scope, listed in capabilities.untrustedWorkspaces.restrictedConfigurations,
// and read by the extension from the user's settings only (USER_LEVEL_SETTINGS, settingValue).
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { USER_LEVEL_SETTINGS } from "../models/settings";

const extRoot = path.resolve(__dirname, "..", "..");
const pkg = JSON.parse(fs.readFileSync(path.join(extRoot, "package.json"), "utf8"));
type Prop = { type?: unknown; scope?: string; description?: string; markdownDescription?: string };
const props: Record<string, Prop> = pkg.contributes.configuration.properties;

// A setting whose name or description says it picks a program, an endpoint, a model, a key or
// an environment variable, or sends the conversation: the test catches a new one that forgets
// its scope.
const SENSITIVE_WORDS = new Set(["path", "command", "cmd", "binary", "exe", "url", "uri", "endpoint", "host", "key", "token", "secret", "env", "model", "provider", "drafts"]);
const SENSITIVE_TEXT = /binary|program|executable|\bURL\b|endpoint|environment variable|API key|provider|sends? the conversation/i;

/** "piLsp.summarizer.apiKeyEnv" → ["summarizer", "api", "key", "env"] */
function words(name: string): string[] {
  return name
    .replace(/^piLsp\./, "")
    .split(/[.\-_]|(?=[A-Z])/)
    .map((w) => w.toLowerCase())
    .filter(Boolean);
}

function sensitive(name: string, p: Prop): boolean {
  const text = `${p.description ?? ""} ${p.markdownDescription ?? ""}`;
  return name === "piLsp.summarizer.kind" || words(name).some((w) => SENSITIVE_WORDS.has(w)) || SENSITIVE_TEXT.test(text);
}

test("settings that choose a program, endpoint, key or variable are user-level and restricted", () => {
  const restricted: string[] = pkg.capabilities?.untrustedWorkspaces?.restrictedConfigurations ?? [];
  assert.equal(pkg.capabilities?.untrustedWorkspaces?.supported, "limited");
  const found = Object.keys(props).filter((k) => sensitive(k, props[k]));
  assert.ok(!found.includes("piLsp.compaction.keepRecentTokens") && !found.includes("piLsp.trace.server"), `too broad: ${found}`);
  for (const k of ["piLsp.server.path", "piLsp.summarizer.kind", "piLsp.summarizer.baseUrl", "piLsp.summarizer.apiKeyEnv", "piLsp.summarizer.model", "piLsp.summarizer.drafts"]) {
    assert.ok(found.includes(k), `${k} is recognised as sensitive`);
  }
  for (const k of found) {
    assert.ok(props[k].scope === "machine" || props[k].scope === "application", `${k}: scope ${props[k].scope ?? "(default: window)"}, want machine or application`);
    assert.ok(restricted.includes(k), `${k} is not in capabilities.untrustedWorkspaces.restrictedConfigurations`);
    assert.ok(USER_LEVEL_SETTINGS.includes(k.replace(/^piLsp\./, "")), `${k} is not in USER_LEVEL_SETTINGS (read from the workspace)`);
  }
});

test("the restricted list, the user-level scopes and USER_LEVEL_SETTINGS are the same settings", () => {
  const restricted = [...(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations as string[])].sort();
  const scoped = Object.keys(props).filter((k) => props[k].scope === "machine" || props[k].scope === "application").sort();
  const read = USER_LEVEL_SETTINGS.map((k) => `piLsp.${k}`).sort();
  assert.deepEqual(restricted, scoped);
  assert.deepEqual(read, scoped);
  for (const k of restricted) assert.ok(props[k], `${k} is a contributed setting`);
});

test("background drafts are off by default", () => {
  assert.equal(props["piLsp.summarizer.drafts"]?.type, "boolean");
  assert.equal((props["piLsp.summarizer.drafts"] as { default?: unknown }).default, false);
});
