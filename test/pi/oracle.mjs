#!/usr/bin/env node
// Long-running oracle: answers questions about Pi session files with the real
// Pi library code, for pi-lsp's differential tests: the reference Pi 1.6.0
// (@earendil-works, run with Node 22) or the legacy Pi 0.73.1 (@mariozechner),
// whichever $PI_LSP_PI_DIR names.
//
//   node test/pi/oracle.mjs        (reads requests on stdin, one JSON per line)
//
// Every request line gets exactly one response line on stdout:
//   {"ok":true,"result":...}  or  {"ok":false,"error":"..."}
// (plus "id" when the request had one). A bad request never kills the process.
//
// Pi is taken from $PI_LSP_PI_DIR (default <repo>/.tools/pi-current/
// node_modules/@earendil-works/pi-coding-agent). Non-exported dist modules are
// imported by file URL. Results carry Pi 1.6.0's extra figures (the projected
// context estimate) only when the Pi has them.
//
// File handling. A request's "file" is read, parsed with parseSessionEntries
// and migrated with migrateSessionEntries ONCE per (path, content): the
// migrated entries are cached, so ids invented by v1/v2 migration stay the
// same across requests about an unchanged file. The migrated entries are also
// written to a private v3 copy that SessionManager opens, so SessionManager
// ids equal the cached ids. Every file-based result carries "ids": the ids of
// the non-header entries in file order (for "piload", the ids of the
// SessionManager that Pi built from the raw file).
//
// Leaf selection: "leafIndex" (index into the non-header entries in file
// order), "leaf" (an id; null means Pi's explicit "before the first entry"),
// or neither (Pi's default: the last entry).
//
// Ops: entries, context, breakdown, tree, files, cut, prepare, collect, piload (need "file"),
// constants, serialize, estimate, ping (no file). See
// testdata/corpus/genuine/README.md and internal/oracle for the shapes.
//
// Safety: leaves whose parent chain contains a cycle are refused (Pi's
// getBranch/buildSessionContext would loop forever), and each request runs in
// a worker thread with a timeout (PI_LSP_ORACLE_TIMEOUT_MS, default 60000);
// a worker that times out is replaced and the request answered with an error.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { onLines } from "./lines.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..");
const PI_DIR = path.resolve(
  process.env.PI_LSP_PI_DIR || path.join(REPO, ".tools", "pi-current", "node_modules", "@earendil-works", "pi-coding-agent"),
);
const DIST = path.join(PI_DIR, "dist");

function distUrl(rel) {
  return pathToFileURL(path.join(DIST, rel)).href;
}

function findPiAi() {
  const candidates = [
    path.join(PI_DIR, "node_modules", "@earendil-works", "pi-ai", "dist", "index.js"),
    path.join(PI_DIR, "node_modules", "@mariozechner", "pi-ai", "dist", "index.js"),
    path.join(PI_DIR, "..", "pi-ai", "dist", "index.js"),
  ];
  for (const c of candidates) if (fs.existsSync(c)) return pathToFileURL(c).href;
  throw new Error(`pi-ai not found next to ${PI_DIR}`);
}

const MAX_NESTED_DEPTH = 500;

/** Throw if walking parent links from startId revisits an entry. */
function assertAcyclic(entries, startId, what) {
  if (startId === null || startId === undefined) return;
  const byId = new Map();
  for (const e of entries) byId.set(e.id, e);
  const seen = new Set();
  let cur = byId.get(startId);
  while (cur) {
    if (seen.has(cur.id)) {
      throw new Error(`unsafe ${what} ${startId}: its parent chain has a cycle at ${cur.id} (Pi would loop forever)`);
    }
    seen.add(cur.id);
    cur = cur.parentId ? byId.get(cur.parentId) : undefined;
  }
}

// =============================================================================
// Worker: runs the Pi calls.
// =============================================================================

async function workerMain() {
  const { tmpDir } = workerData;
  const pi = await import(distUrl("index.js"));
  const comp = await import(distUrl("core/compaction/index.js"));
  const msgs = await import(distUrl("core/messages.js"));
  const ai = await import(findPiAi());
  const smCache = new Map();

  const openCopy = (copyPath) => {
    let sm = smCache.get(copyPath);
    if (!sm) {
      sm = pi.SessionManager.open(copyPath, tmpDir);
      smCache.set(copyPath, sm);
    }
    return sm;
  };

  let constantsCache = null;
  async function constants() {
    if (constantsCache) return constantsCache;
    const ai = await import(findPiAi());
    // pi-ai 1.6.0 moved the faux provider's registration out of its index into compat.js.
    const registerFauxProvider = ai.registerFauxProvider ?? (await import(new URL("compat.js", findPiAi()).href)).registerFauxProvider;
    const captured = [];
    const reg = registerFauxProvider({
      provider: "pi-lsp-oracle-faux",
      api: "pi-lsp-oracle-faux",
      models: [{ id: "oracle-faux", contextWindow: 128000 }],
    });
    const respond = () => (context, options) => {
      captured.push({
        system: context.systemPrompt,
        text: context.messages?.[0]?.content?.[0]?.text ?? "",
        maxTokens: options?.maxTokens,
      });
      return ai.fauxAssistantMessage("");
    };
    const model = reg.getModel();
    const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 0 });
    try {
      // Branch summary preamble: empty model answer, no file operations.
      reg.setResponses([respond()]);
      const entry = { type: "message", id: "00000001", parentId: null, timestamp: new Date(0).toISOString(), message: user("x") };
      const branch = await comp.generateBranchSummary([entry], { model, apiKey: "k", signal: new AbortController().signal });
      const branchPrompt = captured[captured.length - 1];
      // Initial and update compaction prompts.
      reg.setResponses([respond()]);
      await comp.generateSummary([user("x")], model, 16384, "k");
      const initial = captured[captured.length - 1];
      reg.setResponses([respond()]);
      await comp.generateSummary([user("x")], model, 16384, "k", undefined, undefined, undefined, "PREV");
      const update = captured[captured.length - 1];
      // Turn-prefix prompt: a split turn with nothing before it.
      reg.setResponses([respond()]);
      await comp.compact(
        {
          firstKeptEntryId: "x",
          messagesToSummarize: [],
          turnPrefixMessages: [user("x")],
          isSplitTurn: true,
          tokensBefore: 0,
          previousSummary: undefined,
          fileOps: comp.createFileOps(),
          settings: pi.DEFAULT_COMPACTION_SETTINGS,
        },
        model,
        "k",
      );
      const prefix = captured[captured.length - 1];
      const afterConversation = (t) => t.slice(t.indexOf("</conversation>\n\n") + "</conversation>\n\n".length);
      const afterPrevious = (t) => t.slice(t.indexOf("</previous-summary>\n\n") + "</previous-summary>\n\n".length);
      constantsCache = {
        COMPACTION_SUMMARY_PREFIX: msgs.COMPACTION_SUMMARY_PREFIX,
        COMPACTION_SUMMARY_SUFFIX: msgs.COMPACTION_SUMMARY_SUFFIX,
        BRANCH_SUMMARY_PREFIX: msgs.BRANCH_SUMMARY_PREFIX,
        BRANCH_SUMMARY_SUFFIX: msgs.BRANCH_SUMMARY_SUFFIX,
        BRANCH_SUMMARY_PREAMBLE: branch.summary,
        VERSION: pi.VERSION,
        CURRENT_SESSION_VERSION: pi.CURRENT_SESSION_VERSION,
        DEFAULT_COMPACTION_SETTINGS: pi.DEFAULT_COMPACTION_SETTINGS,
        SUMMARIZATION_SYSTEM_PROMPT: comp.SUMMARIZATION_SYSTEM_PROMPT,
        prompts: {
          initial: afterConversation(initial.text),
          update: afterPrevious(update.text),
          turnPrefix: afterConversation(prefix.text),
          branch: afterConversation(branchPrompt.text),
        },
        maxTokens: {
          summary16384: initial.maxTokens,
          turnPrefix16384: prefix.maxTokens,
          branch: branchPrompt.maxTokens,
        },
      };
      return constantsCache;
    } finally {
      reg.unregister();
    }
  }

  const leafOf = (req, ids, fallback) => {
    if (req.leafIndex !== undefined && req.leafIndex !== null) {
      if (!Number.isInteger(req.leafIndex) || req.leafIndex < 0 || req.leafIndex >= ids.length) {
        throw new Error(`leafIndex ${req.leafIndex} out of range (${ids.length} entries)`);
      }
      return ids[req.leafIndex];
    }
    if (Object.prototype.hasOwnProperty.call(req, "leaf")) return req.leaf;
    return fallback;
  };

  // A copy of the session, and the leaf the request names (leafIndex or leaf), else the copy's own.
  const openAtLeaf = (req, copyPath, ids) => {
    const sm = openCopy(copyPath);
    return { sm, leafId: leafOf(req, ids, sm.getLeafId() ?? null) };
  };

  const branchOf = (sm, entries, leafId) => {
    assertAcyclic(entries, leafId, "leaf");
    return leafId ? sm.getBranch(leafId) : [];
  };

  const fileLists = (fileOps) => comp.computeFileLists(fileOps);
  const serialize = (messages) => pi.serializeConversation(pi.convertToLlm(messages));

  async function handle(job) {
    const { req, copyPath, ids } = job;
    switch (req.op) {
      case "ping":
        return { version: pi.VERSION };
      case "settings": {
        // Pi's settings for a project without a UI: the trust decision (trust.json,
        // defaultProjectTrust), then getCompactionSettings for the model, or its refusal.
        const sm = await import(distUrl("core/settings-manager.js"));
        const trust = await import(distUrl("core/trust-manager.js"));
        const pt = await import(distUrl("core/project-trust.js"));
        const boot = sm.SettingsManager.create(req.cwd, req.agentDir, { projectTrusted: false });
        const trusted = await pt.resolveProjectTrusted({
          cwd: req.cwd, trustStore: new trust.ProjectTrustStore(req.agentDir),
          defaultProjectTrust: boot.getDefaultProjectTrust(), projectTrustContext: { hasUI: false },
        });
        const settings = sm.SettingsManager.create(req.cwd, req.agentDir, { projectTrusted: trusted });
        const model = req.provider ? { provider: req.provider, id: req.model } : undefined;
        let compaction = null, error = null;
        try { compaction = settings.getCompactionSettings(model); } catch (e) { error = String(e?.message ?? e); }
        return { trusted, compaction, error, branchSummary: settings.getBranchSummarySettings() };
      }
      case "mostrecent": {
        // Pi's findMostRecentSession over a folder: the newest file with a valid header.
        const sm = await import(distUrl("core/session-manager.js"));
        const found = sm.findMostRecentSession(req.dir);
        return { path: found ? path.basename(found) : null };
      }
      case "constants":
        return constants();
      case "serialize":
        if (!Array.isArray(req.messages)) throw new Error("serialize needs messages: [...]");
        return { serialized: serialize(req.messages) };
      case "estimate":
        if (!req.message || typeof req.message !== "object") throw new Error("estimate needs message: {...}");
        return { tokens: pi.estimateTokens(req.message) };
    }

    if (req.op === "piload") {
      const copy = path.join(tmpDir, `piload-${crypto.randomUUID()}.jsonl`);
      fs.copyFileSync(job.file, copy);
      try {
        const before = fs.readFileSync(copy);
        const sm = pi.SessionManager.open(copy, tmpDir);
        const entries = sm.getEntries();
        const leafId = sm.getLeafId();
        assertAcyclic(entries, leafId, "leaf");
        const ctx = sm.buildSessionContext();
        const after = fs.readFileSync(copy);
        const header = sm.getHeader();
        // When the file had no usable header, Pi made a new session with a
        // random id; report that instead of the random value.
        const newSession = !before.toString("utf8").includes(JSON.stringify(sm.getSessionId()));
        return {
          leafId: leafId ?? null,
          messages: ctx.messages,
          thinkingLevel: ctx.thinkingLevel,
          model: ctx.model,
          entryCount: entries.length,
          rootCount: sm.getTree().length,
          sessionId: newSession ? null : sm.getSessionId(),
          newSession,
          sessionName: sm.getSessionName() ?? null,
          headerVersion: header?.version ?? null,
          // Pi 0.84.4+ ends a file whose last line lacks its newline with one when it
          // opens it: a repair, not a rewrite.
          appendedNewline: after.length === before.length + 1 && after[before.length] === 10 && after.subarray(0, before.length).equals(before),
          rewritten: !before.equals(after) && !(after.length === before.length + 1 && after[before.length] === 10 && after.subarray(0, before.length).equals(before)),
          ids: entries.map((e) => e.id),
        };
      } finally {
        fs.rmSync(copy, { force: true });
      }
    }

    const entries = pi.parseSessionEntries(fs.readFileSync(copyPath, "utf8")).filter((e) => e.type !== "session");

    switch (req.op) {
      case "entries":
        // The entries as Pi holds them after parsing and migration (header left out).
        return { entries };
      case "context": {
        const requested = leafOf(req, ids, undefined);
        let effective;
        if (requested === null) effective = null;
        else if (requested !== undefined && entries.some((e) => e.id === requested)) effective = requested;
        else effective = entries.length ? entries[entries.length - 1].id : null;
        assertAcyclic(entries, effective, "leaf");
        const ctx = pi.buildSessionContext(entries, requested);
        const out = {
          leafId: effective,
          messages: ctx.messages,
          thinkingLevel: ctx.thinkingLevel,
          model: ctx.model,
          tokens: comp.estimateContextTokens(ctx.messages),
          estimates: ctx.messages.map((m) => pi.estimateTokens(m)),
          llm: pi.convertToLlm(ctx.messages),
        };
        if (pi.buildSessionProjection && comp.estimateProjectedContextTokens) {
          // The figure Pi 1.6.0 reports and compacts on (getContextUsage, the
          // threshold check, tokensBefore): usage recorded at or before the latest
          // context edit or compaction is not trusted.
          const projection = pi.buildSessionProjection(entries, requested);
          const byId = new Map(entries.map((e) => [e.id, e]));
          const branch = [];
          for (let cur = effective ? byId.get(effective) : undefined; cur; cur = cur.parentId ? byId.get(cur.parentId) : undefined) branch.unshift(cur);
          out.projectedTokens = comp.estimateProjectedContextTokens(projection, branch);
          if (ai.getCurrentSystemMessage) out.systemMessage = ai.getCurrentSystemMessage(projection.messages) ?? null;
        }
        return out;
      }
      case "breakdown": {
        // The context at a glance, from Pi's own code: buildSessionContext's messages by
        // kind with Pi's estimateTokens (the system messages counted once, as Pi's
        // getCurrentSystemMessage replays them; an assistant message's estimate split
        // over its text, thinking and tool-call characters, floors then the largest
        // remainders, ties in that order), and the context's size at each reply and
        // event of the branch: the usage Pi counts (getLastAssistantUsage of the entry,
        // calculateContextTokens) or estimateProjectedContextTokens with that entry as leaf.
        if (!pi.buildSessionProjection || !comp.estimateProjectedContextTokens) throw new Error("breakdown needs Pi 1.6.0");
        const requested = leafOf(req, ids, undefined);
        const effective = requested !== undefined && entries.some((e) => e.id === requested)
          ? requested : (entries.length ? entries[entries.length - 1].id : null);
        assertAcyclic(entries, effective, "leaf");
        const byId = new Map(entries.map((e) => [e.id, e]));
        const branchTo = (id) => {
          const out = [];
          for (let cur = id ? byId.get(id) : undefined; cur; cur = cur.parentId ? byId.get(cur.parentId) : undefined) out.unshift(cur);
          return out;
        };
        const projection = pi.buildSessionProjection(entries, effective);
        const messages = pi.buildSessionContext(entries, effective).messages;
        const kinds = {};
        const add = (kind, entryId, tokens) => {
          const k = (kinds[kind] ??= { tokens: 0, entries: new Set() });
          k.tokens += tokens;
          k.entries.add(entryId);
        };
        let system = false;
        let i = 0;
        for (const pe of projection.entries) {
          for (const m of pe.messages) {
            if (JSON.stringify(m) !== JSON.stringify(messages[i++])) throw new Error("buildSessionContext's messages are not the projection's");
            const tokens = pi.estimateTokens(m);
            switch (m.role) {
              case "system": system = true; add("system", pe.sourceEntry.id, 0); break;
              case "assistant": {
                const chars = [0, 0, 0];
                for (const b of m.content) {
                  if (b.type === "text") chars[0] += b.text.length;
                  else if (b.type === "thinking") chars[1] += b.thinking.length;
                  else if (b.type === "toolCall") chars[2] += b.name.length + JSON.stringify(b.arguments).length;
                }
                const total = chars[0] + chars[1] + chars[2];
                if (total === 0) break;
                const share = chars.map((c) => Math.floor((tokens * c) / total));
                const rem = chars.map((c) => (tokens * c) % total);
                for (let left = tokens - share[0] - share[1] - share[2]; left > 0; left--) {
                  let best = -1;
                  for (let j = 0; j < 3; j++) if (chars[j] > 0 && (best < 0 || rem[j] > rem[best])) best = j;
                  share[best]++;
                  rem[best] = -1;
                }
                ["assistant", "thinking", "toolCall"].forEach((k, j) => { if (share[j] > 0) add(k, pe.sourceEntry.id, share[j]); });
                break;
              }
              case "toolResult": add(`toolResult:${m.toolName}`, pe.sourceEntry.id, tokens); break;
              case "user": case "compactionSummary": case "branchSummary": case "custom": case "bashExecution":
                add(m.role, pe.sourceEntry.id, tokens); break;
            }
          }
        }
        if (system) kinds.system.tokens = pi.estimateTokens(ai.getCurrentSystemMessage(messages));
        let total = 0;
        for (const k of Object.values(kinds)) total += k.tokens;
        const branch = branchTo(effective);
        const history = [];
        for (const e of branch) {
          let event = null;
          if (e.type === "message") {
            if (e.message.role !== "assistant") continue;
            const usage = comp.getLastAssistantUsage([e]);
            if (usage) {
              history.push({ entryId: e.id, tokens: comp.calculateContextTokens(usage), source: "usage", event: null });
              continue;
            }
          } else if (e.type === "compaction" || e.type === "branch_summary" || e.type === "context_edit") {
            event = e.type;
          } else continue;
          const tokens = comp.estimateProjectedContextTokens(pi.buildSessionProjection(entries, e.id), branchTo(e.id)).tokens;
          history.push({ entryId: e.id, tokens, source: "estimate", event });
        }
        const projected = comp.estimateProjectedContextTokens(projection, branch);
        return {
          leafId: effective,
          total,
          kinds: Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, { tokens: v.tokens, entries: v.entries.size }])),
          usageTokens: projected.lastUsageIndex === null ? null : projected.tokens,
          projected,
          history,
        };
      }
      case "tree": {
        const { sm, leafId } = openAtLeaf(req, copyPath, ids);
        const roots = sm.getTree();
        const convert = (node) => {
          const out = { id: node.entry.id, type: node.entry.type };
          if (node.entry.type === "message") out.role = node.entry.message?.role;
          if (node.label) out.label = node.label;
          return out;
        };
        // Iterative walks: session trees can be thousands of levels deep.
        // "flat" lists every node in pre-order with its children's ids;
        // "roots" nests them, but only up to MAX_NESTED_DEPTH levels (deeper
        // nesting overflows JSON encoders, Go's decoder stops at 10000).
        const flat = [];
        const walk = roots.map((r) => [r, 1]).reverse();
        let depth = 0;
        while (walk.length) {
          const [node, d] = walk.pop();
          depth = Math.max(depth, d);
          flat.push({ ...convert(node), children: node.children.map((c) => c.entry.id) });
          for (let i = node.children.length - 1; i >= 0; i--) walk.push([node.children[i], d + 1]);
        }
        let outRoots = null;
        if (depth <= MAX_NESTED_DEPTH) {
          outRoots = [];
          const stack = [];
          for (const r of roots) {
            const o = { ...convert(r), children: [] };
            outRoots.push(o);
            stack.push([r, o]);
          }
          while (stack.length) {
            const [node, out] = stack.pop();
            for (const child of node.children) {
              const o = { ...convert(child), children: [] };
              out.children.push(o);
              stack.push([child, o]);
            }
          }
        }
        const branch = branchOf(sm, entries, leafId).map((e) => e.id);
        return {
          leafId: leafId ?? null,
          roots: outRoots,
          rootIds: roots.map((r) => r.entry.id),
          depth,
          flat,
          branch,
        };
      }
      case "files": {
        const { sm, leafId } = openAtLeaf(req, copyPath, ids);
        const ops = comp.createFileOps();
        for (const e of branchOf(sm, entries, leafId)) {
          if ((e.type === "compaction" || e.type === "branch_summary") && e.details && !e.fromHook) {
            if (Array.isArray(e.details.readFiles)) for (const f of e.details.readFiles) ops.read.add(f);
            if (Array.isArray(e.details.modifiedFiles)) for (const f of e.details.modifiedFiles) ops.edited.add(f);
          } else if (e.type === "message") {
            comp.extractFileOpsFromMessage(e.message, ops);
          }
        }
        return { leafId: leafId ?? null, ...fileLists(ops) };
      }
      case "cut": {
        if (!Number.isFinite(req.keep)) throw new Error("cut needs keep: N");
        const { sm, leafId } = openAtLeaf(req, copyPath, ids);
        const p = branchOf(sm, entries, leafId);
        const start = req.start ?? 0;
        const end = req.end ?? p.length;
        const r = pi.findCutPoint(p, start, end, req.keep);
        return {
          leafId: leafId ?? null,
          pathIds: p.map((e) => e.id),
          ...r,
          firstKeptEntryId: p[r.firstKeptEntryIndex]?.id ?? null,
          turnStartEntryId: r.turnStartIndex >= 0 ? (p[r.turnStartIndex]?.id ?? null) : null,
        };
      }
      case "prepare": {
        if (!Number.isFinite(req.keep)) throw new Error("prepare needs keep: N");
        const { sm, leafId } = openAtLeaf(req, copyPath, ids);
        const p = branchOf(sm, entries, leafId);
        const settings = { enabled: true, reserveTokens: req.reserve || 16384, keepRecentTokens: req.keep };
        const prep = comp.prepareCompaction(p, settings);
        if (!prep) return { leafId: leafId ?? null, undefined: true };
        const { readFiles, modifiedFiles } = fileLists(prep.fileOps);
        return {
          leafId: leafId ?? null,
          firstKeptEntryId: prep.firstKeptEntryId,
          isSplitTurn: prep.isSplitTurn,
          tokensBefore: prep.tokensBefore,
          messagesToSummarize: prep.messagesToSummarize,
          turnPrefixMessages: prep.turnPrefixMessages,
          previousSummary: prep.previousSummary ?? null,
          readFiles,
          modifiedFiles,
          serialized: serialize(prep.messagesToSummarize),
          serializedPrefix: serialize(prep.turnPrefixMessages),
          formattedFiles: comp.formatFileOperations(readFiles, modifiedFiles),
        };
      }
      case "collect": {
        const { sm, leafId } = openAtLeaf(req, copyPath, ids);
        let targetId;
        if (req.targetIndex !== undefined && req.targetIndex !== null) {
          if (!Number.isInteger(req.targetIndex) || req.targetIndex < 0 || req.targetIndex >= ids.length) {
            throw new Error(`targetIndex ${req.targetIndex} out of range (${ids.length} entries)`);
          }
          targetId = ids[req.targetIndex];
        } else if (typeof req.target === "string") {
          targetId = req.target;
        } else {
          throw new Error("collect needs target (id) or targetIndex");
        }
        assertAcyclic(entries, leafId, "leaf");
        assertAcyclic(entries, targetId, "target");
        const col = comp.collectEntriesForBranchSummary(sm, leafId ?? null, targetId);
        const prep = comp.prepareBranchEntries(col.entries, req.budget || 0);
        const { readFiles, modifiedFiles } = fileLists(prep.fileOps);
        return {
          leafId: leafId ?? null,
          targetId,
          entryIds: col.entries.map((e) => e.id),
          commonAncestorId: col.commonAncestorId ?? null,
          messages: prep.messages,
          totalTokens: prep.totalTokens,
          readFiles,
          modifiedFiles,
          serialized: serialize(prep.messages),
        };
      }
      case "summarize":
      case "branchsummarize":
        return summaryRequests(req, copyPath, ids, entries);
      default:
        throw new Error(`unknown op ${JSON.stringify(req.op)}`);
    }
  }

  // summaryRequests runs Pi's own summary call (compact() after prepareCompaction, or
  // generateBranchSummary after collectEntriesForBranchSummary) against a local
  // OpenAI-compatible server that records every request body and answers with req.answer
  // (finish reason req.finish: "stop", "length" or "tool_calls"). What Pi sent is the
  // reference for what pi-lsp's OpenAI summarizer sends.
  async function summaryRequests(req, copyPath, ids, entries) {
    const http = await import("node:http");
    const bodies = [];
    const answer = typeof req.answer === "string" ? req.answer : "SUMMARY";
    const finish = req.finish || "stop";
    const server = http.createServer((hreq, hres) => {
      let data = "";
      hreq.setEncoding("utf8");
      hreq.on("data", (c) => (data += c));
      hreq.on("end", () => {
        let body;
        try { body = JSON.parse(data); } catch { body = { unparsed: data }; }
        bodies.push({ path: hreq.url, body });
        hres.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (o) => hres.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: body.model, ...o })}\n\n`);
        const n = bodies.length;
        if (finish === "tool_calls") {
          chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "read", arguments: "{}" } }] }, finish_reason: null }] });
        } else {
          chunk({ choices: [{ index: 0, delta: { role: "assistant", content: `${answer}${n > 1 ? ` ${n}` : ""}` }, finish_reason: null }] });
        }
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: finish }] });
        chunk({ choices: [], usage: { prompt_tokens: 100 * n, completion_tokens: 10 * n, total_tokens: 110 * n } });
        hres.end("data: [DONE]\n\n");
      });
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const m = req.model || {};
    const model = {
      id: m.id || "summary-model", name: m.id || "summary-model", api: "openai-completions", provider: "pi-lsp-test",
      baseUrl: `http://127.0.0.1:${server.address().port}/v1`, reasoning: !!m.reasoning, input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: m.contextWindow ?? 128000, maxTokens: m.maxTokens ?? 16384,
    };
    const signal = new AbortController().signal;
    let result, error;
    try {
      const { sm, leafId } = openAtLeaf(req, copyPath, ids);
      if (req.op === "summarize") {
        const p = branchOf(sm, entries, leafId);
        const prep = comp.prepareCompaction(p, { enabled: true, reserveTokens: req.reserve || 16384, keepRecentTokens: req.keep });
        if (!prep) throw new Error("Nothing to compact (session too small)");
        result = await comp.compact(prep, model, "test-key", undefined, req.instructions || undefined, signal, req.thinkingLevel || undefined);
      } else {
        const targetId = ids[req.targetIndex];
        const col = comp.collectEntriesForBranchSummary(sm, leafId ?? null, targetId);
        result = await comp.generateBranchSummary(col.entries, {
          model, apiKey: "test-key", signal, thinkingLevel: req.thinkingLevel || undefined,
          customInstructions: req.instructions || undefined, replaceInstructions: !!req.replaceInstructions, reserveTokens: req.reserve || 16384,
        });
        if (result?.error) { error = result.error; result = undefined; }
      }
    } catch (e) {
      error = String(e?.message ?? e);
    } finally {
      server.close();
    }
    return { requests: bodies, result: result ?? null, error: error ?? null };
  }

  parentPort.on("message", async (job) => {
    try {
      const result = await handle(job);
      parentPort.postMessage({ ok: true, result: JSON.parse(JSON.stringify(result ?? null)) });
    } catch (e) {
      parentPort.postMessage({ ok: false, error: String(e?.message ?? e) });
    }
  });
  parentPort.postMessage({ ready: true });
}

// =============================================================================
// Main thread: stdin/stdout, file cache, worker supervision.
// =============================================================================

async function main() {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-lsp-oracle-"));
  // Pi must never touch the real ~/.pi.
  process.env.PI_CODING_AGENT_DIR ||= path.join(tmpDir, "agent");
  // PI_LSP_ORACLE_OWNED_DIR: a scratch dir the caller made for this process
  // (its HOME/XDG dirs); removed at exit, so a caller that never stops the
  // oracle explicitly (it just exits, closing stdin) leaves nothing behind.
  const owned = process.env.PI_LSP_ORACLE_OWNED_DIR;
  const cleanup = () => {
    for (const d of [tmpDir, owned]) {
      if (!d) continue;
      try {
        fs.rmSync(d, { recursive: true, force: true });
      } catch {
        // best effort
      }
    }
  };
  process.on("exit", cleanup);
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => process.exit(0));

  if (!fs.existsSync(path.join(DIST, "index.js"))) {
    process.stderr.write(`oracle: Pi not found at ${PI_DIR} (run scripts/install-pi.sh or set PI_LSP_PI_DIR)\n`);
    process.exit(3);
  }
  const pi = await import(distUrl("index.js"));
  const timeoutMs = Number(process.env.PI_LSP_ORACLE_TIMEOUT_MS || 60000);

  // file path -> {hash, ids, copyPath}
  const cache = new Map();
  let copyCounter = 0;
  function load(file) {
    const abs = path.resolve(file);
    const bytes = fs.readFileSync(abs);
    const hash = crypto.createHash("sha256").update(bytes).digest("hex");
    const hit = cache.get(abs);
    if (hit && hit.hash === hash) return hit;
    const fileEntries = pi.parseSessionEntries(bytes.toString("utf8"));
    pi.migrateSessionEntries(fileEntries);
    const copyPath = path.join(tmpDir, `copy-${++copyCounter}.jsonl`);
    fs.writeFileSync(copyPath, fileEntries.map((e) => JSON.stringify(e)).join("\n") + (fileEntries.length ? "\n" : ""));
    const ids = fileEntries.filter((e) => e.type !== "session").map((e) => e.id);
    if (hit) fs.rmSync(hit.copyPath, { force: true });
    const rec = { abs, hash, ids, copyPath };
    cache.set(abs, rec);
    return rec;
  }

  let worker = null;
  let workerReady = null;
  function startWorker() {
    worker = new Worker(fileURLToPath(import.meta.url), { workerData: { tmpDir } });
    worker.unref();
    workerReady = new Promise((resolve, reject) => {
      const onMsg = (m) => {
        if (m && m.ready) {
          worker.off("message", onMsg);
          resolve();
        }
      };
      worker.on("message", onMsg);
      worker.once("error", reject);
    });
    workerReady.catch(() => {});
  }
  startWorker();

  function runInWorker(job) {
    return new Promise((resolve) => {
      const w = worker;
      let done = false;
      const finish = (v) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        w.off("message", onMsg);
        w.off("error", onErr);
        w.off("exit", onExit);
        resolve(v);
      };
      const onMsg = (m) => {
        if (m && !m.ready) finish(m);
      };
      const onErr = (e) => {
        finish({ ok: false, error: `oracle worker crashed: ${e?.message ?? e}` });
        startWorker();
      };
      const onExit = (code) => {
        finish({ ok: false, error: `oracle worker exited (${code})` });
        startWorker();
      };
      const timer = setTimeout(() => {
        finish({ ok: false, error: `timeout after ${timeoutMs} ms (request abandoned, worker restarted)` });
        w.terminate().catch(() => {});
        startWorker();
      }, timeoutMs);
      w.on("message", onMsg);
      w.once("error", onErr);
      w.once("exit", onExit);
      w.postMessage(job);
    });
  }

  const FILELESS = new Set(["ping", "constants", "serialize", "estimate", "mostrecent", "settings"]);
  const FILE_OPS = new Set(["entries", "context", "breakdown", "tree", "files", "cut", "prepare", "collect", "piload", "summarize", "branchsummarize"]);
  async function handleLine(line) {
    let req;
    try {
      req = JSON.parse(line);
    } catch (e) {
      return { ok: false, error: `bad JSON request: ${e.message}` };
    }
    if (!req || typeof req !== "object" || Array.isArray(req)) return { ok: false, error: "request must be a JSON object" };
    const id = req.id;
    const withId = (r) => (id !== undefined ? { id, ...r } : r);
    try {
      if (typeof req.op !== "string") throw new Error("request needs op");
      if (!FILELESS.has(req.op) && !FILE_OPS.has(req.op)) {
        throw new Error(`unknown op ${JSON.stringify(req.op)}; known: ${[...FILELESS, ...FILE_OPS].join(", ")}`);
      }
      let job = { req };
      let rec = null;
      if (!FILELESS.has(req.op)) {
        if (typeof req.file !== "string" || req.file === "") throw new Error(`op ${req.op} needs file`);
        if (req.op === "piload") {
          job.file = path.resolve(req.file);
          if (!fs.existsSync(job.file)) throw new Error(`no such file: ${job.file}`);
        } else {
          rec = load(req.file);
          job = { req, copyPath: rec.copyPath, ids: rec.ids };
        }
      }
      await workerReady;
      const res = await runInWorker(job);
      if (res.ok && rec && res.result && typeof res.result === "object") res.result.ids = rec.ids;
      return withId(res);
    } catch (e) {
      return withId({ ok: false, error: String(e?.message ?? e) });
    }
  }

  // Strict LF-delimited JSONL on stdin, answered in order.
  let chain = Promise.resolve();
  const write = (obj) =>
    new Promise((resolve) => {
      if (!process.stdout.write(JSON.stringify(obj) + "\n")) process.stdout.once("drain", resolve);
      else resolve();
    });
  onLines(
    process.stdin,
    (line) => {
      chain = chain.then(() => handleLine(line)).then(write);
    },
    () => chain.then(() => process.exit(0)),
  );
}

if (isMainThread) {
  main().catch((e) => {
    process.stderr.write(`oracle: ${e?.stack ?? e}\n`);
    process.exit(1);
  });
} else {
  workerMain().catch((e) => {
    parentPort.postMessage({ ok: false, error: `oracle worker failed to start: ${e?.stack ?? e}` });
    process.exit(1);
  });
}
