#!/usr/bin/env node
// Print the STRUCTURE of Pi session files, free of ids, timestamps, uuids and
// machine paths, one line per JSONL line, so two generations can be diffed:
//
//   node corpus-structure.mjs FILE.jsonl            # structure of one file
//   node corpus-structure.mjs --compare DIR_A DIR_B # diff every *.jsonl pair, exit 1 on drift
//
// A line's structure is: its index, its type, the message role (and an
// assistant's stopReason and content block kinds), where its parent is (the
// index of the parent line, "null", "self" or "missing"), and for entries that
// reference other entries (firstKeptEntryId, targetId, fromId) the index of
// the referenced line. Headers show version and whether parentSession is set.
// Pi >= 0.86 kinds add (only when present, so 0.73-era files print as before):
// a system message's section names and added/removed tool names, an
// assistant's thinkingLevel, bashExecution excludeFromContext, a context
// edit's target and replacement kind, a usage entry's kind, a compaction's
// systemMessage/usage and split-turn summary, a branch summary's usage.
import fs from "node:fs";
import path from "node:path";

export function structureOf(text) {
  const lines = text.split("\n");
  const objs = [];
  for (const line of lines) {
    if (line.trim() === "") continue;
    try {
      objs.push(JSON.parse(line));
    } catch {
      objs.push({ __unparsable: true });
    }
  }
  const indexById = new Map();
  objs.forEach((o, i) => {
    if (o && typeof o.id === "string" && o.type !== "session") indexById.set(o.id, i);
  });
  const ref = (id, self) => {
    if (id === null || id === undefined) return "null";
    if (id === "root") return "root";
    if (indexById.has(id)) return indexById.get(id) === self ? "self" : String(indexById.get(id));
    return "missing";
  };
  return objs.map((o, i) => {
    if (o.__unparsable) return `${i} <unparsable>`;
    if (o.type === "session") {
      return `${i} session v${o.version ?? "?"}${o.parentSession ? " parentSession" : ""}`;
    }
    const parts = [String(i), o.type];
    if (o.type === "message" && o.message) {
      const m = o.message;
      parts.push(m.role);
      if (m.role === "assistant") {
        parts.push(m.stopReason);
        if (Array.isArray(m.content)) parts.push(`[${m.content.map((b) => (b.type === "toolCall" ? `toolCall:${b.name}` : b.type)).join(",")}]`);
        if (m.thinkingLevel !== undefined) parts.push(`thinking=${m.thinkingLevel}`);
      }
      if (m.role === "system") {
        if (m.sections) parts.push(`sections=[${Object.entries(m.sections).map(([k, v]) => (v === null ? `-${k}` : k)).join(",")}]`);
        if (m.toolsAdded) parts.push(`toolsAdded=[${m.toolsAdded.map((t) => t.name).join(",")}]`);
        if (m.toolsRemoved) parts.push(`toolsRemoved=[${m.toolsRemoved.map((t) => t.name).join(",")}]`);
      }
      if (m.role === "user" && Array.isArray(m.content)) parts.push(`[${m.content.map((b) => b.type).join(",")}]`);
      if (m.role === "toolResult") parts.push(m.toolName, m.isError ? "error" : "ok");
      if (m.role === "bashExecution") parts.push(`exit=${m.exitCode}`);
      if (m.role === "bashExecution" && m.excludeFromContext) parts.push("excludeFromContext");
    }
    parts.push(`parent=${ref(o.parentId, i)}`);
    if (o.type === "compaction") {
      parts.push(`firstKept=${ref(o.firstKeptEntryId, i)}`, `fromHook=${o.fromHook}`, `details=${o.details ? "yes" : "no"}`);
      if (o.usage) parts.push(`usage=${o.usage.cost ? "cost" : "no-cost"}`);
      if (o.systemMessage) parts.push(`systemMessage=[${Object.keys(o.systemMessage.sections ?? {}).join(",")}]+${(o.systemMessage.toolsAdded ?? []).length}tools`);
      if (typeof o.summary === "string" && o.summary.includes("**Turn Context (split turn):**")) parts.push("split");
    }
    if (o.type === "context_edit") {
      const r = o.replacement;
      const kind = r === null ? "omit" : typeof r?.content === "string" ? "string" : Array.isArray(r?.content) ? `[${r.content.map((b) => b.type).join(",")}]` : "?";
      parts.push(`target=${ref(o.targetId, i)}`, `replacement=${kind}`);
    }
    if (o.type === "usage") parts.push(`kind=${o.kind}`, `usage=${o.usage?.cost ? "cost" : "no-cost"}`);
    if (o.type === "branch_summary") {
      parts.push(`fromId=${ref(o.fromId, i)}`, `details=${o.details ? "yes" : "no"}`);
      if (o.usage) parts.push(`usage=${o.usage.cost ? "cost" : "no-cost"}`);
    }
    if (o.type === "label") parts.push(`target=${ref(o.targetId, i)}`, `label=${o.label === undefined ? "<cleared>" : "set"}`);
    if (o.type === "session_info") parts.push(`name=${o.name ? "set" : "empty"}`);
    if (o.type === "custom" || o.type === "custom_message") parts.push(`customType=${o.customType}`);
    if (o.type === "thinking_level_change") parts.push(o.thinkingLevel);
    if (o.type === "model_change") parts.push(`${o.provider}/${o.modelId}`);
    return parts.join(" ");
  });
}

function compareDirs(a, b) {
  const list = (d) => fs.readdirSync(d).filter((f) => f.endsWith(".jsonl")).sort();
  const fa = list(a);
  const fb = list(b);
  let drift = 0;
  const all = [...new Set([...fa, ...fb])].sort();
  for (const f of all) {
    if (!fa.includes(f) || !fb.includes(f)) {
      console.log(`DRIFT ${f}: only in ${fa.includes(f) ? a : b}`);
      drift++;
      continue;
    }
    const sa = structureOf(fs.readFileSync(path.join(a, f), "utf8"));
    const sb = structureOf(fs.readFileSync(path.join(b, f), "utf8"));
    const n = Math.max(sa.length, sb.length);
    const diffs = [];
    for (let i = 0; i < n; i++) {
      if (sa[i] !== sb[i]) diffs.push(`  line ${i}:\n    checked-in: ${sa[i] ?? "<none>"}\n    generated:  ${sb[i] ?? "<none>"}`);
    }
    if (diffs.length) {
      drift++;
      console.log(`DRIFT ${f}: ${diffs.length} line(s) differ`);
      console.log(diffs.slice(0, 10).join("\n"));
    } else {
      console.log(`ok    ${f} (${sa.length} lines)`);
    }
  }
  return drift;
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (isMain) {
  const args = process.argv.slice(2);
  if (args[0] === "--compare" && args.length === 3) {
    const drift = compareDirs(args[1], args[2]);
    console.log(drift ? `${drift} file(s) drifted` : "no structural drift");
    process.exit(drift ? 1 : 0);
  } else if (args.length >= 1) {
    for (const f of args) {
      if (args.length > 1) console.log(`== ${f}`);
      console.log(structureOf(fs.readFileSync(f, "utf8")).join("\n"));
    }
  } else {
    console.error("usage: corpus-structure.mjs FILE... | --compare DIR_A DIR_B");
    process.exit(2);
  }
}
