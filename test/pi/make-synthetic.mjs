#!/usr/bin/env node
// Write the hand-made edge-case session files of testdata/corpus/synthetic/
// and their manifest.json. Deterministic: same bytes on every run.
//
//   node test/pi/make-synthetic.mjs [OUTDIR]     (default: testdata/corpus/synthetic)
//
// manifest.json lists every file with a one-line description and which
// leaves are safe to ask Pi about ("all", or indices into the non-header
// entries as parseSessionEntries returns them, file order). Pi's getBranch and
// buildSessionContext loop forever on a parent cycle, so unsafe leaves must
// never reach Pi. Optional "expect" blocks hold the results the behaviour
// spec gives for that file (checked against the oracle by internal/oracle).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.resolve(process.argv[2] || path.join(HERE, "..", "..", "testdata", "corpus", "synthetic"));

// ---------------------------------------------------------------------------
// Builders

const BASE = Date.parse("2025-06-01T10:00:00.000Z");
let clock = 0;
function resetClock() {
  clock = 0;
}
function tick(seconds = 1) {
  clock += seconds;
  return BASE + clock * 1000;
}
const iso = (ms) => new Date(ms).toISOString();

function header(extra = {}) {
  return { type: "session", version: 3, id: "0197a000-0000-7000-8000-000000000001", timestamp: iso(BASE), cwd: "/tmp/pi-lsp-synthetic/project", ...extra };
}

const text = (n, label = "x") => {
  const base = `${label} lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor. `;
  let s = "";
  while (s.length < n) s += base;
  return s.slice(0, n);
};

function usage(input, output, total = input + output) {
  return {
    input,
    output,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: total,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

const msg = {
  user(content, ts) {
    return { role: "user", content, timestamp: ts };
  },
  assistant(content, ts, { stopReason = "stop", errorMessage, u = usage(100, 20) } = {}) {
    const m = {
      role: "assistant",
      content,
      api: "openai-completions",
      provider: "fake",
      model: "fake-model",
      usage: u,
      stopReason,
      timestamp: ts,
    };
    if (errorMessage !== undefined) m.errorMessage = errorMessage;
    return m;
  },
  toolResult(toolCallId, toolName, content, ts, isError = false) {
    return { role: "toolResult", toolCallId, toolName, content, isError, timestamp: ts };
  },
};

const T = (t) => ({ type: "text", text: t });
const IMG = { type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==", mimeType: "image/png" };
const call = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });

/** A v3 chain builder: ids e0001..., each entry the child of the previous unless told otherwise. */
class Chain {
  constructor(prefix = "e") {
    this.prefix = prefix;
    this.entries = [];
    this.n = 0;
    this.leaf = null;
  }
  nextId() {
    this.n++;
    return `${this.prefix}${String(this.n).padStart(7, "0")}`.slice(-8).padStart(8, "0");
  }
  add(fields, { parent, id, seconds = 1 } = {}) {
    const ts = tick(seconds);
    const e = { type: fields.type, id: id ?? this.nextId(), parentId: parent === undefined ? this.leaf : parent, timestamp: iso(ts), ...fields };
    // keep key order stable: type, id, parentId, timestamp, rest
    const { type, ...rest } = fields;
    const ordered = { type, id: e.id, parentId: e.parentId, timestamp: e.timestamp, ...rest };
    this.entries.push(ordered);
    this.leaf = ordered.id;
    return ordered;
  }
  message(m, opts) {
    return this.add({ type: "message", message: m }, opts);
  }
  u(t, opts) {
    return this.message(msg.user([T(t)], BASE + (clock + 1) * 1000), opts);
  }
  a(content, opts = {}, aopts) {
    return this.message(msg.assistant(Array.isArray(content) ? content : [T(content)], BASE + (clock + 1) * 1000, aopts), opts);
  }
  tr(callId, name, t, opts, isError = false) {
    return this.message(msg.toolResult(callId, name, [T(t)], BASE + (clock + 1) * 1000, isError), opts);
  }
}

const files = [];
function emit(name, description, lines, { safeLeaves = "all", raw, expect, notes, piErrors } = {}) {
  const body = raw ?? lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
  fs.writeFileSync(path.join(OUT, name), body);
  const rec = { name, description, safeLeaves };
  if (notes) rec.notes = notes;
  if (expect) rec.expect = expect;
  if (piErrors) rec.piErrors = piErrors;
  files.push(rec);
}

fs.mkdirSync(OUT, { recursive: true });
for (const f of fs.readdirSync(OUT)) if (f.endsWith(".jsonl")) fs.rmSync(path.join(OUT, f));

// ---------------------------------------------------------------------------
// 1. v1: no version, no ids, a compaction with firstKeptEntryIndex.
{
  resetClock();
  const h = { type: "session", id: "v1-session-0001", timestamp: iso(BASE), cwd: "/tmp/pi-lsp-synthetic/v1-project", provider: "anthropic", modelId: "claude-sonnet-4-5", thinkingLevel: "off" };
  const lines = [h];
  const push = (fields) => lines.push({ type: fields.type, timestamp: iso(tick()), ...fields });
  push({ type: "message", message: msg.user("first question about the parser", BASE + clock * 1000) });
  push({ type: "message", message: { ...msg.assistant([T(text(200, "answer one"))], BASE + clock * 1000, { u: { input: 500, output: 50, cacheRead: 0, cacheWrite: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } }), provider: "anthropic", model: "claude-sonnet-4-5", api: "anthropic-messages" } });
  push({ type: "message", message: msg.user("second question: read src/parser.ts", BASE + clock * 1000) });
  push({ type: "message", message: { ...msg.assistant([T("Reading it."), call("toolu_01", "read", { path: "src/parser.ts" })], BASE + clock * 1000, { stopReason: "toolUse" }), provider: "anthropic", model: "claude-sonnet-4-5", api: "anthropic-messages" } });
  push({ type: "message", message: msg.toolResult("toolu_01", "read", [T("export function parse() {}\n")], BASE + clock * 1000) });
  push({ type: "thinking_level_change", thinkingLevel: "high" });
  // Raw index 3 = the second user message (index 0 is the header).
  push({ type: "compaction", summary: "## Goal\nv1 summary of the first question", firstKeptEntryIndex: 3, tokensBefore: 1234 });
  push({ type: "message", message: msg.user("third question after the compaction", BASE + clock * 1000) });
  push({ type: "message", message: { ...msg.assistant([T("Third answer.")], BASE + clock * 1000), provider: "anthropic", model: "claude-sonnet-4-5", api: "anthropic-messages" } });
  emit("v1-compaction.jsonl", "v1 file: no version, no ids/parentIds, extra header fields, a compaction with firstKeptEntryIndex 3 (raw index, header = 0: the second user message), usage without totalTokens", lines);
}

// 1b. v1 compactions whose firstKeptEntryIndex is not a plain in-range index. Pi's
// migrateV1ToV2 resolves and deletes the field only when typeof is "number": an object,
// a string or null stays as it is (FuzzMigrate found the object case); a number that
// names the header, a forward entry (no id yet), a fraction or nothing resolves to no
// id but is still deleted.
{
  resetClock();
  const h = { type: "session", id: "v1-session-0002", timestamp: iso(BASE), cwd: "/tmp/pi-lsp-synthetic/v1-project" };
  const lines = [h];
  const push = (fields) => lines.push({ type: fields.type, timestamp: iso(tick()), ...fields });
  push({ type: "message", message: msg.user("first question", BASE + clock * 1000) });
  push({ type: "message", message: { ...msg.assistant([T("first answer")], BASE + clock * 1000), provider: "anthropic", model: "claude-sonnet-4-5", api: "anthropic-messages" } });
  push({ type: "compaction", "0000000": "0", summary: "object index", firstKeptEntryIndex: {}, tokensBefore: 10 });
  push({ type: "compaction", summary: "string index", firstKeptEntryIndex: "1", tokensBefore: 11 });
  push({ type: "compaction", summary: "null index", firstKeptEntryIndex: null, tokensBefore: 12 });
  push({ type: "compaction", summary: "array index", firstKeptEntryIndex: [2], tokensBefore: 13 });
  push({ type: "compaction", summary: "header index", firstKeptEntryIndex: 0, tokensBefore: 14 });
  push({ type: "compaction", summary: "forward index", firstKeptEntryIndex: 13, tokensBefore: 15 });
  push({ type: "compaction", summary: "forward index dropping an old id", firstKeptEntryIndex: 13, firstKeptEntryId: "stale", tokensBefore: 15 });
  push({ type: "compaction", summary: "forward index to an entry with a v1 id", firstKeptEntryIndex: 15, tokensBefore: 15 });
  push({ type: "compaction", summary: "fraction index", firstKeptEntryIndex: 1.5, tokensBefore: 16 });
  push({ type: "compaction", summary: "negative index", firstKeptEntryIndex: -1, tokensBefore: 17 });
  push({ type: "message", message: msg.user("question after the compactions", BASE + clock * 1000) });
  push({ type: "compaction", summary: "index 2.0 with an old id kept", firstKeptEntryIndex: 2.0, firstKeptEntryId: "stale", tokensBefore: 18 });
  push({ type: "message", id: "v1-own-id", message: { ...msg.assistant([T("last answer")], BASE + clock * 1000), provider: "anthropic", model: "claude-sonnet-4-5", api: "anthropic-messages" } });
  emit("v1-odd-compaction-index.jsonl", "v1 file: compactions whose firstKeptEntryIndex is an object, a string, null, an array (kept, as Pi keeps any non-number), or the header, a forward entry, a fraction, a negative number (deleted, resolving to no id)", lines);
}

// 2. v2: ids, and a hookMessage role (renamed to custom by v2->v3 migration).
{
  resetClock();
  const c = new Chain("b");
  c.add({ type: "model_change", provider: "fake", modelId: "fake-model" });
  c.u("question before the hook message");
  c.a("answer before the hook message");
  c.message({ role: "hookMessage", customType: "my-hook", content: "Injected by a v2 hook", display: true, details: { k: 1 }, timestamp: BASE + (clock + 1) * 1000 });
  c.u("question after the hook message");
  c.a("answer after the hook message");
  emit("v2-hookmessage.jsonl", "v2 file: version 2 header, ids present, a message with role hookMessage (migrated to custom)", [header({ version: 2, id: "0197a000-0000-7000-8000-0000000000v2" }), ...c.entries]);
}

// 3. Torn last line: no trailing newline, half a JSON object.
{
  resetClock();
  const c = new Chain("c");
  c.u("hello");
  c.a("hi there");
  c.u("one more");
  const full = [header(), ...c.entries].map((l) => JSON.stringify(l)).join("\n") + "\n";
  const torn = JSON.stringify({ type: "message", id: "c0000099", parentId: c.leaf, timestamp: iso(tick()), message: msg.assistant([T("this line was cut")], BASE) });
  emit("torn-last-line.jsonl", "last line is half a JSON object with no trailing newline (a crash mid-write); Pi skips it", null, { raw: full + torn.slice(0, Math.floor(torn.length / 2)) });
}

// 4. Orphan: an entry whose parent is missing, with a child.
{
  resetClock();
  const c = new Chain("d");
  c.u("root question");
  c.a("root answer");
  c.u("orphan question (parent missing)", { parent: "deadbeef" });
  c.a("orphan answer");
  emit("orphan.jsonl", "an entry whose parentId names a missing entry (becomes a root in getTree; context walks stop there), with a child", [header(), ...c.entries]);
}

// 5. Cycle of two entries (unsafe), with a safe chain around it.
{
  resetClock();
  const c = new Chain("f");
  c.u("safe root question"); // 0
  c.a("safe root answer"); // 1
  c.u("cycle member A", { id: "cyc0000a", parent: "cyc0000b" }); // 2
  c.a("cycle member B", { id: "cyc0000b", parent: "cyc0000a" }); // 3
  c.u("child of the cycle", { parent: "cyc0000b" }); // 4
  c.u("safe follow-up", { parent: "f0000002" }); // 5
  c.a("safe follow-up answer"); // 6
  emit("cycle.jsonl", "two entries that are each other's parent (plus a child of the cycle); Pi's getBranch/buildSessionContext would loop forever on leaves 2-4", [header(), ...c.entries], {
    safeLeaves: [0, 1, 5, 6],
  });
}

// 6. Self-parented entry (unsafe) and its child.
{
  resetClock();
  const c = new Chain("g");
  c.u("safe question"); // 0
  c.a("safe answer"); // 1
  c.u("self-parented entry", { id: "selfpar1", parent: "selfpar1" }); // 2
  c.a("child of the self-parented entry"); // 3
  c.u("safe continuation", { parent: "g0000002" }); // 4
  c.a("safe continuation answer"); // 5
  emit("self-parent.jsonl", "an entry whose parentId is its own id (a root in getTree) and its child; Pi loops forever from leaves 2-3", [header(), ...c.entries], {
    safeLeaves: [0, 1, 4, 5],
  });
}

// 7. Unknown entry type, unknown fields, unknown message role.
{
  resetClock();
  const c = new Chain("h");
  c.add({ type: "model_change", provider: "fake", modelId: "fake-model", futureField: { nested: [1, 2] } });
  c.u("question");
  c.add({ type: "future_entry_kind", payload: { anything: true } });
  const a = c.a("answer with an unknown top-level field");
  a.extraTopLevel = "kept verbatim";
  a.message.extraMessageField = 42;
  c.message({ role: "futureRole", content: "a role Pi does not know", timestamp: BASE + (clock + 1) * 1000 });
  c.u("last question");
  c.a("last answer");
  emit("unknown-types.jsonl", "an unknown entry type, unknown fields on header/entries/messages, and a message with an unknown role (0 tokens, dropped by convertToLlm)", [header({ futureHeaderField: "x" }), ...c.entries]);
}

// 8. Images in user, toolResult and custom_message content.
{
  resetClock();
  const c = new Chain("i");
  c.message(msg.user([T("what is in this picture?"), IMG], BASE + 1000));
  c.a([T("Let me look at the screenshot file."), call("call_img", "read", { path: "shot.png" })], {}, { stopReason: "toolUse" });
  c.message(msg.toolResult("call_img", "read", [T("Read image file [image/png]"), IMG], BASE + (clock + 1) * 1000));
  c.a("It is a red square.");
  c.add({ type: "custom_message", customType: "screenshot", content: [T("Attached screenshot:"), IMG], display: true, details: { source: "test" } });
  c.message(msg.user([IMG], BASE + (clock + 1) * 1000));
  c.a("Another image, no text.");
  emit("images.jsonl", "images in a user message (0 tokens), an image-only user message, a toolResult (1200 tokens per image) and a custom_message with image content", [header(), ...c.entries]);
}

// 9. Thinking blocks.
{
  resetClock();
  const c = new Chain("j");
  c.add({ type: "thinking_level_change", thinkingLevel: "high" });
  c.u("think hard");
  c.a([
    { type: "thinking", thinking: "First I consider the options.", thinkingSignature: "sig-abc" },
    T("Here is my plan."),
    { type: "thinking", thinking: "Then I pick one.", redacted: false },
    call("call_t1", "bash", { command: "ls -la" }),
  ], {}, { stopReason: "toolUse" });
  c.tr("call_t1", "bash", "total 0\n");
  c.a([{ type: "thinking", thinking: "", thinkingSignature: "encrypted-only", redacted: true }, T("Done.")]);
  emit("thinking.jsonl", "assistant messages with thinking blocks (signature, redacted, empty thinking) mixed with text and tool calls", [header(), ...c.entries]);
}

// 10. Empty file, header-only file, garbage first line.
emit("empty.jsonl", "a zero-byte file (Pi: no entries; opening it rewrites it to a fresh header)", null, { raw: "" });
resetClock();
emit("header-only.jsonl", "a header line and nothing else", [header()]);
{
  resetClock();
  const c = new Chain("k");
  c.u("question after garbage");
  c.a("answer after garbage");
  const body = "this first line is not JSON at all\n" + [header(), ...c.entries].map((l) => JSON.stringify(l)).join("\n") + "\n";
  emit("garbage-first-line.jsonl", "an unparsable first line followed by a valid header and entries (the header is the first parsed object, so Pi loads it)", null, { raw: body });
}

// 11. Malformed middle line, blank lines, CRLF line ends.
{
  resetClock();
  const c = new Chain("l");
  c.u("first");
  c.a("first answer");
  c.u("second");
  c.a("second answer");
  const ls = [header(), ...c.entries].map((l) => JSON.stringify(l));
  ls.splice(3, 0, '{"type":"message","id":"broken0', "");
  emit("malformed-middle.jsonl", "a malformed line and a blank line in the middle (skipped by Pi's parser)", null, { raw: ls.join("\n") + "\n\n" });
  emit("crlf.jsonl", "every line ends with CRLF (JSON.parse ignores the trailing CR)", null, {
    raw: [header(), ...c.entries].map((l) => JSON.stringify(l)).join("\r\n") + "\r\n",
  });
}

// 12. Labels set, changed and cleared.
{
  resetClock();
  const c = new Chain("m");
  const u1 = c.u("first question");
  const a1 = c.a("first answer");
  c.add({ type: "label", targetId: u1.id, label: "start" });
  c.add({ type: "label", targetId: a1.id, label: "response" });
  const u2 = c.u("second question");
  c.a("second answer");
  c.add({ type: "label", targetId: a1.id, label: "response-renamed" });
  c.add({ type: "label", targetId: u1.id }); // cleared: label key absent
  c.add({ type: "label", targetId: u2.id, label: "second" });
  c.add({ type: "label", targetId: u2.id, label: "" }); // cleared with ""
  const side = c.u("side branch", { parent: a1.id });
  c.add({ type: "label", targetId: side.id, label: "side" });
  c.a("side answer");
  emit("labels.jsonl", "labels set, renamed, cleared (label key absent and label \"\"), and set on another branch; label entries sit inside paths", [header(), ...c.entries]);
}

// 13. session_info set and cleared.
{
  resetClock();
  const c = new Chain("n");
  c.u("question");
  c.a("answer");
  c.add({ type: "session_info", name: "First name" });
  c.add({ type: "session_info", name: "Second name" });
  c.u("more");
  c.add({ type: "session_info", name: "" });
  c.a("more answer");
  emit("session-info.jsonl", "session_info entries: set, renamed, then cleared with an empty name (Pi 0.73: no name)", [header(), ...c.entries]);
}

// 14. Multiple roots (resetLeaf).
{
  resetClock();
  const c = new Chain("o");
  c.u("first root question");
  c.a("first root answer");
  c.u("second root question", { parent: null });
  c.a("second root answer");
  c.u("third root, a lone user message", { parent: null });
  emit("multi-root.jsonl", "three roots (parentId null after resetLeaf); the last entry is a lone root user message", [header(), ...c.entries]);
}

// 15. branch_summary at the root (fromId "root").
{
  resetClock();
  const c = new Chain("p");
  c.u("abandoned question");
  c.a("abandoned answer");
  c.add(
    { type: "branch_summary", fromId: "root", summary: "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nAbandoned work.", details: { readFiles: ["a.ts"], modifiedFiles: ["b.ts"] }, fromHook: false },
    { parent: null },
  );
  c.u("fresh start after the root summary");
  c.a("fresh answer");
  c.add({ type: "branch_summary", fromId: "p0000005", summary: "", details: { readFiles: [], modifiedFiles: [] } });
  c.u("after an empty branch summary");
  emit("branch-summary-root.jsonl", "a branch_summary at the root (parentId null, fromId \"root\") with details, and an empty-summary branch_summary (skipped in context)", [header(), ...c.entries]);
}

// 16. custom entries and custom messages.
{
  resetClock();
  const c = new Chain("q");
  c.u("question");
  c.add({ type: "custom", customType: "ext-state", data: { count: 1 } });
  c.add({ type: "custom_message", customType: "ext-note", content: "plain string content", display: false });
  c.add({ type: "custom_message", customType: "ext-note", content: [T("array content")], display: true, details: { hidden: "never sent to the LLM" } });
  c.a("answer");
  c.add({ type: "custom", customType: "ext-state" });
  emit("custom-entries.jsonl", "custom entries (with and without data) and custom_message entries (string and array content, display false/true, details)", [header(), ...c.entries]);
}

// 17. bashExecution variants.
{
  resetClock();
  const c = new Chain("r");
  c.u("run some commands");
  c.a("Go ahead.");
  const bash = (fields) => c.message({ role: "bashExecution", timestamp: BASE + (clock + 1) * 1000, ...fields });
  bash({ command: "ls", output: "a.txt\nb.txt\n", exitCode: 0, cancelled: false, truncated: false });
  bash({ command: "false", output: "", exitCode: 1, cancelled: false, truncated: false });
  bash({ command: "cat big.log", output: "line\n".repeat(20), exitCode: 0, cancelled: false, truncated: true, fullOutputPath: "/tmp/pi-bash-full.log" });
  bash({ command: "sleep 100", output: "partial", cancelled: true, truncated: false });
  bash({ command: "secret-command", output: "hidden output", exitCode: 0, cancelled: false, truncated: false, excludeFromContext: true });
  c.u("what happened?");
  c.a("Several commands ran.");
  emit("bash-execution.jsonl", "bashExecution messages: ok, non-zero exit, truncated with fullOutputPath, cancelled (no exitCode), and excludeFromContext (!! prefix)", [header(), ...c.entries]);
}

// 18. Errored and aborted assistants.
{
  resetClock();
  const c = new Chain("s");
  c.u("first");
  c.a("good answer", {}, { u: usage(1000, 200) });
  c.u("second");
  c.a([T("")], {}, { stopReason: "error", errorMessage: "500 upstream failure", u: usage(0, 0) });
  c.u("third");
  c.a([T("partial answ")], {}, { stopReason: "aborted", errorMessage: "Request was aborted", u: usage(0, 0) });
  c.u("fourth");
  c.a([], {}, { stopReason: "error", errorMessage: "400 This model's maximum context length is 128000 tokens. (context_length_exceeded)", u: usage(0, 0) });
  c.a([T("truncated by the length limit")], {}, { stopReason: "length", u: usage(1300, 10) });
  emit("assistant-errors.jsonl", "errored (empty text block, empty content) and aborted assistant messages, and a length stop; only valid usages count in estimates", [header(), ...c.entries]);
}

// 19. Children with out-of-order timestamps.
{
  resetClock();
  const c = new Chain("t");
  const root = c.u("root");
  const a = c.a("root answer");
  // Written c2 first (timestamp +9s), then c1 (timestamp +5s relative to the answer).
  const late = c.u("child written first, later timestamp", { parent: a.id, seconds: 9 });
  clock -= 5;
  const early = c.u("child written second, earlier timestamp", { parent: a.id, seconds: 1 });
  clock += 10;
  c.a("answer on the early child", { parent: early.id });
  void root;
  void late;
  emit("out-of-order-children.jsonl", "two children of one entry whose timestamps are not in file order (getTree sorts children by timestamp; roots stay in file order)", [header(), ...c.entries]);
}

// 20. Spec §9.5 findCutPoint examples (each u/a ~100 tokens = 399 chars unless noted).
const U100 = (c, label) => c.u(text(399, label));
const A100 = (c, label) => c.a(text(399, label));
{
  resetClock();
  const c = new Chain("A");
  for (let i = 0; i < 5; i++) {
    U100(c, `u${i}`);
    A100(c, `a${i}`);
  }
  emit("spec-9-5-A.jsonl", "spec 9.5 A: [u0,a0,...,u4,a4], 100 tokens each", [header(), ...c.entries], {
    expect: {
      cut: [
        { keep: 1, firstKeptEntryIndex: 9, turnStartIndex: 8, isSplitTurn: true },
        { keep: 100, firstKeptEntryIndex: 9, turnStartIndex: 8, isSplitTurn: true },
        { keep: 150, firstKeptEntryIndex: 8, turnStartIndex: -1, isSplitTurn: false },
        { keep: 250, firstKeptEntryIndex: 7, turnStartIndex: 6, isSplitTurn: true },
        { keep: 1000, firstKeptEntryIndex: 0, turnStartIndex: -1, isSplitTurn: false },
      ],
    },
  });
}
{
  resetClock();
  const c = new Chain("C");
  c.u(text(104, "u26t"));
  c.a([call("c1", "read", { path: "a" })], {}, { stopReason: "toolUse" });
  c.tr("c1", "read", "x".repeat(2000));
  c.a(text(48, "a12t"));
  emit("spec-9-5-C.jsonl", "spec 9.5 C: [u(26t), a(read a, 4t), toolResult(2000 chars, 500t), a(12t)]", [header(), ...c.entries], {
    expect: {
      cut: [
        { keep: 100, firstKeptEntryIndex: 3, turnStartIndex: 0, isSplitTurn: true },
        { keep: 520, firstKeptEntryIndex: 0, turnStartIndex: -1, isSplitTurn: false },
      ],
    },
  });
}
{
  resetClock();
  const c = new Chain("D");
  U100(c, "u");
  A100(c, "a");
  c.add({ type: "thinking_level_change", thinkingLevel: "low" });
  c.add({ type: "model_change", provider: "fake", modelId: "fake-model-2" });
  c.add({ type: "custom", customType: "ext", data: {} });
  c.add({ type: "label", targetId: "D0000001", label: "start" });
  U100(c, "u2");
  A100(c, "a2");
  emit("spec-9-5-D.jsonl", "spec 9.5 D: [u,a,thinking,model,custom,label,u2,a2]; keep 150 cuts on the settings entry, a split turn whose prefix is the previous turn", [header(), ...c.entries], {
    expect: {
      cut: [{ keep: 150, firstKeptEntryIndex: 2, turnStartIndex: 0, isSplitTurn: true }],
      prepare: [{ keep: 150, firstKeptEntryIndex: 2, isSplitTurn: true, messagesToSummarize: 0, turnPrefixMessages: 2 }],
    },
  });
}
{
  resetClock();
  const c = new Chain("E");
  U100(c, "u");
  A100(c, "a");
  c.add({ type: "custom_message", customType: "big", content: "y".repeat(4000), display: true });
  c.a(text(44, "a11t"));
  emit("spec-9-5-E.jsonl", "spec 9.5 E: [u,a,custom_message(4000 chars),a(11t)]; the custom_message costs 0 in findCutPoint", [header(), ...c.entries], {
    expect: { cut: [{ keep: 50, firstKeptEntryIndex: 1, turnStartIndex: 0, isSplitTurn: true }] },
  });
}
{
  resetClock();
  const c = new Chain("F");
  U100(c, "u");
  A100(c, "a");
  c.message({ role: "bashExecution", command: "run", output: text(401, "bash-output"), exitCode: 0, cancelled: false, truncated: false, timestamp: BASE + (clock + 1) * 1000 });
  A100(c, "a2");
  emit("spec-9-5-E2.jsonl", "spec 9.5 E2: [u,a,bashExecution(101t),a]; the bash message is both cut point and turn start", [header(), ...c.entries], {
    expect: { cut: [{ keep: 150, firstKeptEntryIndex: 2, turnStartIndex: 2, isSplitTurn: true }] },
  });
}
{
  resetClock();
  const c = new Chain("G");
  A100(c, "a0");
  A100(c, "a1");
  A100(c, "a2");
  emit("spec-9-5-F.jsonl", "spec 9.5 F: assistant-only [a0,a1,a2]; no turn start exists", [header(), ...c.entries], {
    expect: { cut: [{ keep: 150, firstKeptEntryIndex: 1, turnStartIndex: -1, isSplitTurn: false }] },
  });
}
{
  resetClock();
  const c = new Chain("H");
  c.tr("x1", "bash", text(400, "r1"));
  c.tr("x2", "bash", text(400, "r2"));
  c.tr("x3", "bash", text(400, "r3"));
  emit("spec-9-5-G.jsonl", "spec 9.5 G: only toolResults; no valid cut point", [header(), ...c.entries], {
    expect: {
      cut: [
        { keep: 150, firstKeptEntryIndex: 0, turnStartIndex: -1, isSplitTurn: false },
        { keep: 150, start: 1, firstKeptEntryIndex: 1, turnStartIndex: -1, isSplitTurn: false },
      ],
    },
  });
}
{
  resetClock();
  const c = new Chain("I");
  U100(c, "u");
  A100(c, "a");
  c.add({ type: "branch_summary", fromId: "I0000002", summary: "an earlier branch", details: { readFiles: [], modifiedFiles: [] } });
  c.add({ type: "custom_message", customType: "note", content: "a note", display: true });
  U100(c, "u1");
  A100(c, "a1");
  emit("spec-9-5-BS.jsonl", "spec 9.5 BS: [u,a,branch_summary,custom_message,u1,a1]; the backward scan pulls both non-message entries into the kept side", [header(), ...c.entries], {
    expect: { cut: [{ keep: 150, firstKeptEntryIndex: 2, turnStartIndex: 2, isSplitTurn: true }] },
  });
}

// 21. Spec §10.3 iterative compaction.
{
  resetClock();
  const c = new Chain("J");
  U100(c, "u0");
  c.a([T(text(300, "a0")), call("r0", "read", { path: "old-read.ts" })], {}, { stopReason: "toolUse" });
  c.tr("r0", "read", "old contents");
  const u1 = U100(c, "u1");
  c.a([T(text(300, "a-edit")), call("e1", "edit", { path: "kept-edit.ts", edits: [{ oldText: "a", newText: "b" }] })], {}, { stopReason: "toolUse" });
  c.tr("e1", "edit", "Successfully replaced 1 block(s) in kept-edit.ts.");
  c.add({ type: "compaction", summary: "SUMMARY-1", firstKeptEntryId: u1.id, tokensBefore: 5000, details: { readFiles: ["prev-read.ts", "both.ts"], modifiedFiles: ["prev-mod.ts"] }, fromHook: false });
  U100(c, "u2");
  c.a([T(text(300, "a-write")), call("w2", "write", { path: "both.ts", content: "x" })], {}, { stopReason: "toolUse" });
  c.tr("w2", "write", "Successfully wrote 1 bytes to both.ts");
  U100(c, "u3");
  A100(c, "a3");
  emit("spec-10-3-iterative.jsonl", "spec 10.3: a second compaction over a path with a previous compaction (firstKept u1, details); keep 150 -> firstKept u3, 6 messages to summarize, previous summary SUMMARY-1", [header(), ...c.entries], {
    expect: {
      prepare: [
        {
          keep: 150,
          firstKeptEntryIndex: 10,
          isSplitTurn: false,
          messagesToSummarize: 6,
          turnPrefixMessages: 0,
          previousSummary: "SUMMARY-1",
          readFiles: ["prev-read.ts"],
          modifiedFiles: ["both.ts", "kept-edit.ts", "prev-mod.ts"],
        },
      ],
    },
  });
}

// 22. Spec §10.4 dropped previous summary.
{
  resetClock();
  const c = new Chain("K");
  U100(c, "u0");
  A100(c, "a0");
  const u1 = U100(c, "u1 start of a big turn");
  c.a([T("")], {}, { stopReason: "error", errorMessage: "400 This model's maximum context length is 128000 tokens. (context_length_exceeded)", u: usage(0, 0) });
  c.add({ type: "compaction", summary: "SUMMARY-1", firstKeptEntryId: u1.id, tokensBefore: 130000, details: { readFiles: [], modifiedFiles: [] }, fromHook: false });
  for (let i = 0; i < 4; i++) {
    c.a([T(text(360, `step${i}`)), call(`b${i}`, "bash", { command: "ls" })], {}, { stopReason: "toolUse" });
    c.tr(`b${i}`, "bash", "ok");
  }
  A100(c, "final");
  emit("spec-10-4-dropped-summary.jsonl", "spec 10.4: overflow recovery left the previous kept boundary at the start of the running turn; keep 300 -> split turn with nothing to summarize (Pi drops SUMMARY-1)", [header(), ...c.entries], {
    expect: {
      prepare: [{ keep: 300, isSplitTurn: true, messagesToSummarize: 0, previousSummary: "SUMMARY-1" }],
    },
  });
}

// ---------------------------------------------------------------------------
// 23+. Pi 1.6.0 entry kinds and fields: system messages, context edits, compaction
// checkpoints, retain-none compactions, usage entries, codemode nested calls.
const SYS_TOOLS = [
  { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "bash", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } } } },
];
const sysDecl = (ts) => ({ role: "system", content: "", sections: { preamble: "<preamble>You are a helpful assistant.</preamble>", tools: "<tools>read, bash</tools>", cwd: "<cwd>/tmp/pi-lsp-synthetic/project</cwd>" }, toolsAdded: SYS_TOOLS, timestamp: ts });

// 23. System messages: a declaration, then a patch (a section changed, one removed, a tool
// removed and one added), and an edit of nothing in particular.
{
  resetClock();
  const c = new Chain("S");
  c.add({ type: "model_change", provider: "fake", modelId: "fake-model" });
  c.add({ type: "thinking_level_change", thinkingLevel: "off" });
  c.message(sysDecl(BASE + (clock + 1) * 1000));
  c.u("read the parser please");
  c.a([T("Reading."), call("r1", "read", { path: "src/parser.ts" })], {}, { stopReason: "toolUse" });
  c.tr("r1", "read", "export function parse() {}");
  c.a("It exports parse().");
  c.message({ role: "system", content: [T("Extra rule: be brief.")], sections: { tools: "<tools>write</tools>", cwd: null }, toolsRemoved: [{ name: "bash" }], toolsAdded: [{ name: "write", description: "Write a file", parameters: { type: "object" } }], timestamp: BASE + (clock + 1) * 1000 });
  c.u("now write it");
  c.a([T("Writing."), call("w1", "write", { path: "src/out.ts", content: "x" })], {}, { stopReason: "toolUse" });
  c.tr("w1", "write", "ok");
  c.a("Done.");
  emit("system-messages.jsonl", "Pi 1.6.0 system messages: a first declaration (sections and tools) and a later patch (content, a changed and a removed section, a removed and an added tool)", [header(), ...c.entries]);
}

// 24. Context edits: omit a failed attempt and its tool result, replace a user message,
// an assistant (string replacement -> one text block), a tool result and a custom
// message, edit the same target twice (the last wins), restore a target with its
// original content, and an edit whose target is not on the branch.
{
  resetClock();
  const c = new Chain("E");
  c.message(sysDecl(BASE + (clock + 1) * 1000));
  const u0 = c.u("please summarize the log I paste: " + text(800, "LOG"));
  const a0 = c.a("The log shows three warnings.");
  const fail = c.a([T("partial "), call("b1", "bash", { command: "cat big.log" })], {}, { stopReason: "length", u: usage(1000, 50) });
  const failTr = c.tr("b1", "bash", text(2000, "BIGLOG"));
  c.add({ type: "context_edit", targetId: fail.id, replacement: null });
  c.add({ type: "context_edit", targetId: failTr.id, replacement: null });
  c.add({ type: "context_edit", targetId: u0.id, replacement: { content: [T("please summarize the log (pasted log removed)")] } });
  const cm = c.add({ type: "custom_message", customType: "note", content: "a custom note " + text(200, "NOTE"), display: true });
  c.add({ type: "context_edit", targetId: cm.id, replacement: { content: "custom note, trimmed" } });
  c.add({ type: "context_edit", targetId: a0.id, replacement: { content: "first replacement" } });
  c.add({ type: "context_edit", targetId: a0.id, replacement: { content: "Three warnings (edited twice)." } });
  const u1 = c.u("and the errors?");
  const a1 = c.a("No errors.", {}, { u: usage(400, 10) });
  c.add({ type: "context_edit", targetId: u1.id, replacement: { content: "hidden for a moment" } });
  c.add({ type: "context_edit", targetId: u1.id, replacement: { content: [T("and the errors?")] } });
  c.add({ type: "context_edit", targetId: "zzzzzzzz", replacement: null });
  const tr2call = c.a([T("Checking."), call("r2", "read", { path: "big.log" })], {}, { stopReason: "toolUse", u: usage(600, 10) });
  const tr2 = c.tr("r2", "read", text(1200, "READLOG"));
  c.add({ type: "context_edit", targetId: tr2.id, replacement: { content: "(read output trimmed)" } });
  c.a("Nothing else.", {}, { u: usage(0, 0) });
  emit("context-edits.jsonl", "Pi 1.6.0 context_edit entries: omissions of a failed attempt and its tool result, replacements of user, assistant (string), tool-result and custom messages, two edits of one target (the last wins), a restore, an edit of a missing target, all-zero usage last", [header(), ...c.entries]);
}

// 25. Compactions with a systemMessage checkpoint: a system declaration before the kept
// range and one inside it (dropped there), an edit summarized away and one kept, then a
// second compaction whose kept range holds the first one (it contributes nothing), then
// a retain-none compaction (firstKeptEntryId = its own id), and a usage entry.
{
  resetClock();
  const c = new Chain("C");
  c.add({ type: "model_change", provider: "fake", modelId: "fake-model" });
  const sys0 = c.message(sysDecl(BASE + (clock + 1) * 1000));
  const u0 = c.u("first task " + text(300, "T1"));
  c.a("first answer " + text(300, "A1"), {}, { u: usage(2000, 100) });
  c.add({ type: "context_edit", targetId: u0.id, replacement: { content: "first task (edited before the cut)" } });
  const u1 = c.u("second task " + text(300, "T2"));
  const sys1 = c.message({ role: "system", content: "", sections: { rules: "<rules>be terse</rules>" }, timestamp: BASE + (clock + 1) * 1000 });
  const a1 = c.a("second answer " + text(300, "A2"), {}, { u: usage(3000, 100) });
  const checkpoint = { role: "system", content: "", sections: { preamble: "<preamble>You are a helpful assistant.</preamble>", tools: "<tools>read, bash</tools>", cwd: "<cwd>/tmp/pi-lsp-synthetic/project</cwd>", rules: "<rules>be terse</rules>" }, toolsAdded: SYS_TOOLS, timestamp: BASE + (clock + 1) * 1000 };
  const c1 = c.add({ type: "compaction", summary: "## Goal\nfirst summary", firstKeptEntryId: u1.id, tokensBefore: 3100, details: { readFiles: ["a.ts"], modifiedFiles: [] }, usage: { ...usage(900, 80), cost: { input: 0.01, output: 0.02, cacheRead: 0, cacheWrite: 0, total: 0.03 } }, fromHook: false, systemMessage: checkpoint });
  c.add({ type: "context_edit", targetId: a1.id, replacement: { content: "second answer (edited after the compaction)" } });
  const u2 = c.u("third task " + text(300, "T3"));
  c.a("third answer", {}, { u: usage(1500, 50) });
  c.add({ type: "usage", kind: "cache_warm", provider: "fake", model: "fake-model", usage: { ...usage(1200, 1), cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } });
  c.add({ type: "compaction", summary: "## Goal\nsecond summary", firstKeptEntryId: u1.id, tokensBefore: 2000, details: { readFiles: ["b.ts"], modifiedFiles: ["c.ts"] }, fromHook: false, systemMessage: checkpoint });
  c.u("fourth task");
  c.a("fourth answer", {}, { u: usage(800, 20) });
  const rn = c.add({ type: "compaction", summary: "## Goal\nretain none", firstKeptEntryId: "__self__", tokensBefore: 900, fromHook: true, systemMessage: checkpoint });
  rn.firstKeptEntryId = rn.id;
  c.u("after retain-none");
  c.a("ok", {}, { u: usage(300, 5) });
  emit("compaction-checkpoints.jsonl", "Pi 1.6.0 compactions: systemMessage checkpoints, a system message inside the kept range (dropped), edits before and after the cut, an older compaction inside a later kept range (contributes nothing), a retain-none compaction, a usage (cache_warm) entry, usage with cost", [header(), ...c.entries]);
}

// 26. Messages with null or missing content, a user image, and codemode nested calls on a
// tool result (file tracking reads them).
{
  resetClock();
  const c = new Chain("N");
  c.message({ role: "user", content: [T("look at this"), IMG], timestamp: BASE + (clock + 1) * 1000 });
  c.message({ role: "assistant", content: null, api: "openai-completions", provider: "fake", model: "fake-model", usage: usage(50, 0), stopReason: "stop", timestamp: BASE + (clock + 1) * 1000 });
  c.message({ role: "user", timestamp: BASE + (clock + 1) * 1000 });
  c.message({ role: "system", content: null, sections: { a: "<a>1</a>", b: null }, timestamp: BASE + (clock + 1) * 1000 });
  c.a([T("Running a script."), call("x1", "codemode", { code: "await read('src/a.ts'); await edit('src/b.ts')" })], {}, { stopReason: "toolUse" });
  c.message({ role: "toolResult", toolCallId: "x1", toolName: "codemode", content: [T("done")], isError: false, nestedCalls: { calls: [{ name: "read", arguments: { path: "src/a.ts" } }, { name: "edit", arguments: { path: "src/b.ts", edits: [] } }, { name: "write", argumentsBytes: 999999 }, { name: "read", arguments: { path: "" } }] }, timestamp: BASE + (clock + 1) * 1000 });
  c.message({ role: "toolResult", toolCallId: "x2", toolName: "bash", content: "a string tool result", isError: false, timestamp: BASE + (clock + 1) * 1000 });
  c.a("Both files handled.");
  emit("null-content-nested-calls.jsonl", "Pi 1.6.0 rules on messages: null and missing content (projected as empty), a user image (1200 tokens), a system message with null content, a codemode toolResult with nestedCalls (file tracking), a string tool result", [header(), ...c.entries], {
    // Pi's branch collection reads a message's content without the null check its context
    // building has, so collecting the branch that holds the null-content messages throws.
    piErrors: { collect: "content is not iterable" },
  });
}

// ---------------------------------------------------------------------------

files.sort((x, y) => x.name.localeCompare(y.name));
const manifest = {
  description:
    "Hand-made edge-case Pi session files. safeLeaves: which leaves (indices into the non-header entries that parseSessionEntries returns, file order) Pi can be asked about; the others sit on or below a parent cycle and make Pi loop forever. Regenerate with: node test/pi/make-synthetic.mjs",
  files,
};
fs.writeFileSync(path.join(OUT, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
process.stderr.write(`make-synthetic: wrote ${files.length} files to ${OUT}\n`);
