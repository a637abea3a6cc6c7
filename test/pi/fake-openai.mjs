#!/usr/bin/env node
// Fake OpenAI-compatible streaming server for driving the real Pi CLI offline.
// No dependencies. Usage:
//
//   node fake-openai.mjs [PORT] [REQUEST_LOG.jsonl]
//
// PORT 0 (the default) picks a free port. The first line printed on stdout is
// the port actually listened on (127.0.0.1 only), so callers can run several
// instances in parallel.
//
// POST */chat/completions answers with a chat.completion.chunk SSE stream
// (text, reasoning_content, tool_calls, finish_reason, then a usage chunk and
// [DONE]). What it answers depends on the request:
//
// * Summarizer calls (system prompt starts with "You are a context
//   summarization assistant"): a branch summary, a split-turn prefix summary,
//   or a compaction checkpoint (initial or update), chosen from the prompt
//   text. Custom instructions ("Additional focus: ...") are echoed back.
// * Agent turns: the last user message that contains "SCRIPT:<name>" picks a
//   script; the step is the number of assistant messages after that user
//   message. Scripts: tools, more, big, chat, think, overflow, slow, fail,
//   length (see SCRIPTS below). "STEPS=<n>" sets the number of tool steps of
//   the "big" script. Without a SCRIPT keyword the "chat" script is used.
// * "BIGUSAGE" anywhere in that user message reports prompt_tokens=120000, so
//   Pi's threshold auto-compaction triggers after the turn.
// * SCRIPT:overflow answers HTTP 400 context_length_exceeded the first time a
//   given prompt text is seen and a normal answer afterwards (Pi compacts and
//   retries).
// * SCRIPT:fail answers HTTP 500 (a persisted error assistant message).
// * SCRIPT:lengthonce answers finish_reason "length" the first time a given
//   prompt text is seen and a normal answer afterwards (Pi >= 0.84 recovers
//   from a cut-off answer below maxTokens by compacting and retrying).
// * Summarizer calls are logged with the custom instructions they carry ("focus");
//   "SLOWSUMMARY" in them streams the summary over about 10 s.
// * A request with max_completion_tokens (or max_tokens) 1 is a prompt-cache
//   warm (Pi >= 0.86 re-sends the last request capped at one token): one
//   output token, finish "length", the whole prompt reported as cached.
// * Split-turn prefix prompts are recognized in both forms: Pi 0.73's
//   "This is the PREFIX of a turn" inside <conversation> tags and Pi 1.6's
//   "The messages above are earlier context ..." after "# Conversation".
import http from "node:http";
import fs from "node:fs";

const port = Number(process.argv[2] ?? 0);
const logPath = process.argv[3];
const maxSeconds = Number(process.env.FAKE_OPENAI_MAX_SECONDS ?? 900);

const SUMMARIZER_MARKER = "You are a context summarization assistant";
const overflowSeen = new Map();
const lengthSeen = new Map();
const TURN_PREFIX_MARKER_16 = "The messages above are earlier context from an ongoing conversation";
let requestCounter = 0;

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === "object" && typeof p.text === "string" ? p.text : ""))
      .join("");
  }
  return "";
}

function logRequest(record) {
  if (!logPath) return;
  try {
    fs.appendFileSync(logPath, JSON.stringify(record) + "\n");
  } catch {
    // logging is best effort
  }
}

// Deterministic filler text of an exact length.
function filler(label, length) {
  const base = `${label}: the quick brown fox jumps over the lazy dog while the compiler checks types. `;
  let out = "";
  while (out.length < length) out += base;
  return out.slice(0, length);
}

function countOf(haystack, needle) {
  let n = 0;
  let i = haystack.indexOf(needle);
  while (i !== -1) {
    n++;
    i = haystack.indexOf(needle, i + needle.length);
  }
  return n;
}

// ---------------------------------------------------------------------------
// Summarizer answers

function summarizerAnswer(prompt) {
  const convStart = prompt.indexOf("<conversation>");
  const convEnd = prompt.indexOf("</conversation>");
  let conversation = convStart >= 0 && convEnd > convStart ? prompt.slice(convStart, convEnd) : "";
  if (!conversation && prompt.startsWith("# Conversation\n")) {
    const instr = prompt.lastIndexOf("\n\n# Instructions\n");
    conversation = instr > 0 ? prompt.slice(0, instr) : "";
  }
  const users = countOf(conversation, "[User]:");
  const calls = countOf(conversation, "[Assistant tool calls]:");
  const results = countOf(conversation, "[Tool result]:");
  const focusMatch = /Additional focus: ([^\n]*)/.exec(prompt);
  const focus = focusMatch ? focusMatch[1].trim() : "";
  const stats = `${users} user parts, ${calls} tool-call parts, ${results} tool results`;

  if (prompt.includes("Create a structured summary of this conversation branch")) {
    return {
      kind: "branch",
      text:
        `## Goal\nFake branch summary of an abandoned branch (${stats}).\n\n` +
        `## Progress\n### Done\n- [x] Explored the branch\n\n` +
        `## Next Steps\n1. Continue on the main line` +
        (focus ? `\n\n## Focus\n- ${focus}` : ""),
    };
  }
  if (prompt.includes("This is the PREFIX of a turn") || prompt.includes(TURN_PREFIX_MARKER_16)) {
    return {
      kind: "turn-prefix",
      text: `## Original Request\nFake turn prefix summary (${stats}).\n\n## Early Progress\n- Started the work\n\n## Context for Suffix\n- Keep going`,
    };
  }
  const update = prompt.includes("<previous-summary>");
  return {
    kind: update ? "compaction-update" : "compaction",
    text:
      `## Goal\nFake ${update ? "updated" : "initial"} checkpoint (${stats}).\n\n` +
      `## Constraints & Preferences\n- (none)\n\n` +
      `## Progress\n### Done\n- [x] Earlier work summarized\n\n### In Progress\n- [ ] Current work\n\n### Blocked\n- (none)\n\n` +
      `## Key Decisions\n- **fake**: deterministic test output\n\n` +
      `## Next Steps\n1. Continue\n\n` +
      `## Critical Context\n- ${focus ? `focus: ${focus}` : "(none)"}`,
  };
}

// ---------------------------------------------------------------------------
// Agent scripts. Each step returns {text?, thinking?, calls?: [{name, args}],
// finish?, error?: {status, message}, slow?: ms-per-chunk}.

const SCRIPTS = {
  tools(step) {
    switch (step) {
      case 0:
        return { text: "I'll create notes.txt.", calls: [{ name: "write", args: { path: "notes.txt", content: "alpha\n" } }] };
      case 1:
        return { text: "Reading it back.", calls: [{ name: "read", args: { path: "notes.txt" } }] };
      case 2:
        return { calls: [{ name: "edit", args: { path: "notes.txt", edits: [{ oldText: "alpha", newText: "beta" }] } }] };
      case 3:
        return {
          text: "Checking with two parallel calls.",
          calls: [
            { name: "bash", args: { command: "cat notes.txt" } },
            { name: "read", args: { path: "notes.txt", offset: 1, limit: 5 } },
          ],
        };
      default:
        return { text: "All done: notes.txt now says beta. " + filler("tools summary", 360) };
    }
  },
  more(step) {
    switch (step) {
      case 0:
        return { text: "Writing other.txt too.", calls: [{ name: "write", args: { path: "other.txt", content: "gamma\n" } }] };
      case 1:
        return {
          calls: [
            { name: "read", args: { path: "notes.txt" } },
            { name: "read", args: { path: "other.txt" } },
          ],
        };
      default:
        return { text: "Both files are in place: notes.txt (beta) and other.txt (gamma). " + filler("more summary", 300) };
    }
  },
  big(step, prompt) {
    const m = /STEPS=(\d+)/.exec(prompt);
    const steps = m ? Number(m[1]) : 6;
    if (step < steps) {
      return {
        text: filler(`step ${step}`, 400),
        calls: [{ name: "bash", args: { command: `echo big-step-${step}` } }],
      };
    }
    return { text: filler("big turn finished", 300) };
  },
  chat(_step, prompt) {
    const m = /CHARS=(\d+)/.exec(prompt);
    return { text: filler("chat reply", m ? Number(m[1]) : 240) };
  },
  think() {
    return {
      thinking: "Let me think about this carefully. The user wants a short answer.",
      text: "Here is a short answer after thinking.",
    };
  },
  overflow(step, prompt) {
    const seen = overflowSeen.get(prompt) ?? 0;
    overflowSeen.set(prompt, seen + 1);
    if (seen === 0) {
      return {
        error: {
          status: 400,
          body: {
            error: {
              message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. (context_length_exceeded)",
              type: "invalid_request_error",
              param: "messages",
              code: "context_length_exceeded",
            },
          },
        },
      };
    }
    return { text: "Recovered after compaction: here is the answer." };
  },
  slow() {
    return { text: filler("slow stream", 2000), slow: 150 };
  },
  fail() {
    return {
      error: {
        status: 500,
        body: { error: { message: "fake upstream failure", type: "server_error", code: "server_error" } },
      },
    };
  },
  length() {
    return { text: filler("truncated by length", 120), finish: "length" };
  },
  lengthonce(_step, prompt) {
    const seen = lengthSeen.get(prompt) ?? 0;
    lengthSeen.set(prompt, seen + 1);
    if (seen === 0) return { text: filler("cut off by length", 120), finish: "length" };
    return { text: "Recovered after the cut-off answer: here is the full answer." };
  },
};

function agentAnswer(messages) {
  let lastUserIndex = -1;
  let prompt = "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m && m.role === "user") {
      const t = textOf(m.content);
      if (lastUserIndex === -1) {
        lastUserIndex = i;
        prompt = t;
      }
      if (t.includes("SCRIPT:")) {
        lastUserIndex = i;
        prompt = t;
        break;
      }
    }
  }
  let step = 0;
  for (let i = lastUserIndex + 1; i < messages.length; i++) {
    if (messages[i] && messages[i].role === "assistant") step++;
  }
  const m = /SCRIPT:([a-z]+)/.exec(prompt);
  const script = m && SCRIPTS[m[1]] ? m[1] : "chat";
  const answer = SCRIPTS[script](step, prompt);
  return { script, step, answer, bigUsage: prompt.includes("BIGUSAGE") };
}

// ---------------------------------------------------------------------------
// SSE output

function chunk(id, model, delta, finish) {
  return {
    id,
    object: "chat.completion.chunk",
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish ?? null }],
  };
}

async function streamAnswer(res, reqNo, model, answer, promptTokens, cachedTokens = 0) {
  const id = `chatcmpl-${reqNo}`;
  const events = [];
  events.push(chunk(id, model, { role: "assistant", content: "" }));
  if (answer.thinking) {
    const half = Math.ceil(answer.thinking.length / 2);
    events.push(chunk(id, model, { reasoning_content: answer.thinking.slice(0, half) }));
    events.push(chunk(id, model, { reasoning_content: answer.thinking.slice(half) }));
  }
  if (answer.text) {
    const pieces = answer.slow ? 20 : 2;
    const size = Math.ceil(answer.text.length / pieces);
    for (let i = 0; i < answer.text.length; i += size) {
      events.push(chunk(id, model, { content: answer.text.slice(i, i + size) }));
    }
  }
  (answer.calls ?? []).forEach((call, index) => {
    const args = JSON.stringify(call.args);
    const cut = Math.floor(args.length / 2);
    events.push(
      chunk(id, model, {
        tool_calls: [{ index, id: `call_${reqNo}_${index}`, type: "function", function: { name: call.name, arguments: "" } }],
      }),
    );
    events.push(chunk(id, model, { tool_calls: [{ index, function: { arguments: args.slice(0, cut) } }] }));
    events.push(chunk(id, model, { tool_calls: [{ index, function: { arguments: args.slice(cut) } }] }));
  });
  const finish = answer.finish ?? ((answer.calls ?? []).length > 0 ? "tool_calls" : "stop");
  events.push(chunk(id, model, {}, finish));
  const completionChars =
    (answer.text ?? "").length +
    (answer.thinking ?? "").length +
    (answer.calls ?? []).reduce((n, c) => n + c.name.length + JSON.stringify(c.args).length, 0);
  const completionTokens = Math.max(1, Math.ceil(completionChars / 4));
  events.push({
    id,
    object: "chat.completion.chunk",
    created: 0,
    model,
    choices: [],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      ...(cachedTokens > 0 ? { prompt_tokens_details: { cached_tokens: cachedTokens } } : {}),
    },
  });

  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  for (const ev of events) {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(ev)}\n\n`);
    if (answer.slow) await new Promise((r) => setTimeout(r, answer.slow));
  }
  if (!res.destroyed) res.end("data: [DONE]\n\n");
}

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function handleCompletions(req, res, body) {
  const reqNo = ++requestCounter;
  let payload;
  try {
    payload = JSON.parse(body);
  } catch (e) {
    logRequest({ n: reqNo, kind: "bad-json" });
    return sendJson(res, 400, { error: { message: `invalid JSON body: ${e.message}`, type: "invalid_request_error" } });
  }
  const messages = Array.isArray(payload.messages) ? payload.messages : [];
  const model = typeof payload.model === "string" ? payload.model : "fake-model";
  const promptChars = JSON.stringify(messages).length;
  let promptTokens = Math.max(1, Math.ceil(promptChars / 4));
  const system = messages.find((m) => m && (m.role === "system" || m.role === "developer"));
  const systemText = system ? textOf(system.content) : "";

  if (systemText.startsWith(SUMMARIZER_MARKER)) {
    const last = messages[messages.length - 1];
    const prompt = last ? textOf(last.content) : "";
    const { kind, text } = summarizerAnswer(prompt);
    const focusMatch = /Additional focus: ([^\n]*)/.exec(prompt);
    const focus = focusMatch ? focusMatch[1].trim() : undefined;
    logRequest({ n: reqNo, kind: "summarizer", summary: kind, tools: Array.isArray(payload.tools), focus });
    // "SLOWSUMMARY" in the instructions streams the summary over about 10 s.
    const slow = prompt.includes("SLOWSUMMARY") ? 500 : undefined;
    return streamAnswer(res, reqNo, model, { text, slow }, promptTokens);
  }

  if (payload.max_completion_tokens === 1 || payload.max_tokens === 1) {
    logRequest({ n: reqNo, kind: "cache-warm", tools: Array.isArray(payload.tools) });
    return streamAnswer(res, reqNo, model, { text: "ok", finish: "length" }, promptTokens, promptTokens);
  }

  const { script, step, answer, bigUsage } = agentAnswer(messages);
  if (bigUsage) promptTokens = 120000;
  const rec = { n: reqNo, kind: "agent", script, step, error: answer.error?.status, bigUsage };
  // FAKE_OPENAI_LOG_BODIES=1: the request itself too (rpc-inspect --prompt reads it).
  if (process.env.FAKE_OPENAI_LOG_BODIES === "1") rec.body = payload;
  logRequest(rec);
  if (answer.error) return sendJson(res, answer.error.status, answer.error.body);
  return streamAnswer(res, reqNo, model, answer, promptTokens);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const url = req.url ?? "";
    Promise.resolve()
      .then(() => {
        if (req.method === "POST" && url.split("?")[0].endsWith("/chat/completions")) {
          return handleCompletions(req, res, body);
        }
        if (req.method === "GET" && url.split("?")[0].endsWith("/models")) {
          return sendJson(res, 200, { object: "list", data: [{ id: "fake-model", object: "model", owned_by: "fake" }] });
        }
        return sendJson(res, 404, { error: { message: `no route for ${req.method} ${url}` } });
      })
      .catch((e) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: String(e?.stack ?? e) } });
        else res.destroy();
      });
  });
});

server.keepAliveTimeout = 2000;
server.listen(port, "127.0.0.1", () => {
  process.stdout.write(`${server.address().port}\n`);
});

const stop = () => process.exit(0);
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("SIGHUP", stop);
// Never outlive a forgotten caller.
setTimeout(stop, maxSeconds * 1000).unref();
