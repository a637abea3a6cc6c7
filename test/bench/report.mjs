// Turns scripts/bench.sh results into the table of docs/BENCHMARKS.md, with each target
// printed as pass/fail.   node report.mjs results.jsonl [--docs docs/BENCHMARKS.md]
import fs from "node:fs";
import os from "node:os";

const rs = fs.readFileSync(process.argv[2], "utf8").trim().split("\n").filter(Boolean).map(JSON.parse);
const byEntries = new Map();
for (const r of rs) {
  const k = r.entries;
  if (!byEntries.has(k)) byEntries.set(k, {});
  byEntries.get(k)[r.tool] = r;
}
const mb = (b) => (b / 1e6).toFixed(0);
const f1 = (x) => (x === undefined ? "-" : x < 10 ? x.toFixed(2) : x.toFixed(0));
const tot = (r) => r.openMs + r.contextMs + r.prepareMs;
const lines = [];
const verdicts = [];
lines.push("| file | entries | `wc -l` ms | pi-lsp open+context+prepare ms | Pi ms | speed-up | x `wc -l` | pi-lsp prepare ms | tree ms (pi-lsp / Pi) | files ms (pi-lsp / Pi) | peak RSS MB (pi-lsp / Pi) | RSS / file |");
lines.push("|---|---|---|---|---|---|---|---|---|---|---|---|");
const ordered = [...byEntries.entries()].sort((a, b) => a[0] - b[0]);
let prevRate;
for (const [n, g] of ordered) {
  const me = g["pi-lsp"], pi = g.pi, wc = g.wc;
  if (!me) continue;
  const ours = tot(me);
  const piT = pi && !pi.timeout ? tot(pi) : undefined;
  const speed = piT ? piT / ours : undefined;
  const xwc = wc ? ours / wc.ms : undefined;
  const rssRatio = (me.maxRssKB * 1024) / me.bytes;
  const rssVsPi = pi && !pi.timeout ? me.maxRssKB / pi.maxRssKB : undefined;
  lines.push(`| ${mb(me.bytes)} MB | ${n} | ${f1(wc?.ms)} | ${f1(ours)} | ${pi?.timeout ? `> ${pi.timeoutS} s (timeout)` : f1(piT)} | ${speed ? speed.toFixed(1) + "x" : pi?.timeout ? "> " + (pi.timeoutS * 1000 / ours).toFixed(0) + "x" : "-"} | ${xwc ? xwc.toFixed(1) : "-"} | ${f1(me.prepareMs)} | ${f1(me.treeMs)} / ${pi && !pi.timeout ? f1(pi.treeMs) : "-"} | ${f1(me.filesMs)} / ${pi && !pi.timeout ? f1(pi.filesMs) : "-"} | ${(me.maxRssKB / 1024).toFixed(0)} / ${pi && !pi.timeout ? (pi.maxRssKB / 1024).toFixed(0) : "-"} | ${rssRatio.toFixed(2)} |`);
  if (speed !== undefined) verdicts.push([`${mb(me.bytes)} MB: at least 10x faster than Pi`, speed >= 10, `${speed.toFixed(1)}x`]);
  if (pi?.timeout) verdicts.push([`${mb(me.bytes)} MB: at least 10x faster than Pi`, true, `Pi timed out after ${pi.timeoutS} s`]);
  if (xwc !== undefined) verdicts.push([`${mb(me.bytes)} MB: within 10x of wc -l`, xwc <= 10, `${xwc.toFixed(1)}x`]);
  if (rssVsPi !== undefined) verdicts.push([`${mb(me.bytes)} MB: peak RSS at most a third of Pi's`, rssVsPi <= 1 / 3, `${(rssVsPi * 100).toFixed(0)}% of Pi`]);
  verdicts.push([`${mb(me.bytes)} MB: peak RSS under 1.5x the file`, rssRatio < 1.5, `${rssRatio.toFixed(2)}x`]);
  if (me.bytes >= 90e6 && me.bytes <= 250e6) verdicts.push([`${mb(me.bytes)} MB: prepare compaction under 50 ms once loaded`, me.prepareMs < 50, `${f1(me.prepareMs)} ms`]);
  const rate = ours / me.bytes;
  if (prevRate !== undefined) verdicts.push([`${mb(me.bytes)} MB: linear (time per byte within 1.5x of the previous size)`, rate <= prevRate * 1.5, `${(rate * 1e6).toFixed(2)} ms/MB`]);
  prevRate = rate;
}
const drafts = Object.fromEntries(rs.filter((r) => r.tool === "draft-bench").map((r) => [r.name, r.ms]));
if (drafts.BenchmarkCompactionWithDraft !== undefined) {
  lines.push("");
  lines.push("| compaction, request to entry written (test LLM at ~60 tokens/s) | ms |");
  lines.push("|---|---|");
  lines.push(`| without a draft (full generation) | ${f1(drafts.BenchmarkCompactionWithoutDraft)} |`);
  lines.push(`| with a ready background draft | ${f1(drafts.BenchmarkCompactionWithDraft)} |`);
  verdicts.push(["compaction with a ready draft under 100 ms", drafts.BenchmarkCompactionWithDraft < 100, `${f1(drafts.BenchmarkCompactionWithDraft)} ms (vs ${f1(drafts.BenchmarkCompactionWithoutDraft)} ms without)`]);
}
const lat = rs.find((r) => r.tool === "lsp-latency");
if (lat) {
  lines.push("");
  lines.push(`| LSP latency on a ${lat.mb} MB session (100 concurrent requests) | ms |`);
  lines.push("|---|---|");
  const names = { "context-p50-ms": "pi/context p50", "context-p99-ms": "pi/context p99", "tree-p50-ms": "pi/tree (flat, 500-node page) p50", "tree-p99-ms": "pi/tree (flat, 500-node page) p99", "tree-full-ms": "pi/tree (flat, whole tree, one request)", "progress-begin-ms": "compact request to first $/progress begin", "append-to-changed-ms": "appended line to pi/sessionChanged p50 (30 appends)", "append-to-changed-p99-ms": "appended line to pi/sessionChanged p99 (30 appends)" };
  for (const k of Object.keys(names)) if (lat[k] !== undefined) lines.push(`| ${names[k]} | ${f1(lat[k])} |`);
  verdicts.push([`pi/tree p99 under 50 ms (${lat.mb} MB, 100 concurrent, one 500-node page)`, lat["tree-p99-ms"] < 50, `${f1(lat["tree-p99-ms"])} ms`]);

  verdicts.push([`first $/progress begin within 20 ms of a compact request`, lat["progress-begin-ms"] <= 20, `${f1(lat["progress-begin-ms"])} ms`]);
  const appendP99 = lat["append-to-changed-p99-ms"] ?? lat["append-to-changed-ms"];
  verdicts.push([`appended entry reaches the editor within 100 ms p99`, appendP99 <= 100, `${f1(appendP99)} ms`]);
}
lines.push("");
lines.push("| target | result | measured |");
lines.push("|---|---|---|");
for (const [name, ok, m] of verdicts) lines.push(`| ${name} | ${ok ? "pass" : "FAIL"} | ${m} |`);
const table = lines.join("\n") + "\n";
const docsIdx = process.argv.indexOf("--docs");
if (docsIdx > 0) {
  const docPath = process.argv[docsIdx + 1];
  const begin = "<!-- BEGIN BENCH TABLE -->", end = "<!-- END BENCH TABLE -->";
  // Pi's version and Node are the ones the Pi runs reported (Pi 1.6.0 runs on Node 22).
  const piRun = rs.find((r) => r.tool === "pi" && r.piVersion);
  const piOn = piRun ? `Pi ${piRun.piVersion} on Node ${piRun.node}` : `Node ${process.version}`;
  const machine = `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} cores (${os.cpus()[0].model}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${piOn}, Linux ${os.release()}.`;
  let doc = fs.existsSync(docPath) ? fs.readFileSync(docPath, "utf8") : `${begin}\n${end}\n`;
  const i = doc.indexOf(begin), j = doc.indexOf(end);
  doc = doc.slice(0, i) + begin + "\n\n" + machine + "\n\n" + table + "\n" + doc.slice(j);
  fs.writeFileSync(docPath, doc);
}
process.stdout.write(table);
