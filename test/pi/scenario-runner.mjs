// The parts the genuine-corpus generators (rpc-scenarios.mjs for Pi 0.73.1,
// rpc-scenarios-1.6.mjs for Pi 1.6.0) share: their command line, the bounded run of
// scenarios a few at a time, and the copy of what each recorded.
import fs from "node:fs";
import path from "node:path";

// A 2x2 PNG, for scenarios with user images.
export const TINY_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";

// parseScenarioArgs reads --port PORT --out OUTDIR --work WORKDIR [--concurrency N]
// [--deadline S] [scenario ...].
export function parseScenarioArgs(argv, { script, deadlineSeconds }) {
  const out = { port: 0, out: "", work: "", scenarios: [], concurrency: 3, deadlineSeconds };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--port") out.port = Number(argv[++i]);
    else if (a === "--out") out.out = argv[++i];
    else if (a === "--work") out.work = argv[++i];
    else if (a === "--concurrency") out.concurrency = Number(argv[++i]);
    else if (a === "--deadline") out.deadlineSeconds = Number(argv[++i]);
    else if (a.startsWith("--")) throw new Error(`unknown flag ${a}`);
    else out.scenarios.push(a);
  }
  if (!out.port || !out.out || !out.work) {
    throw new Error(`usage: ${script} --port PORT --out OUTDIR --work WORKDIR [scenario ...]`);
  }
  return out;
}

// copyRecorded copies each session file a scenario recorded to OUTDIR/<name>.jsonl,
// byte for byte.
export function copyRecorded(label, name, files, out, started) {
  for (const [fileName, src] of Object.entries(files)) {
    fs.copyFileSync(src, path.join(out, `${fileName}.jsonl`));
  }
  process.stderr.write(`${label}: ${name} done in ${((Date.now() - started) / 1000).toFixed(1)}s: ${Object.keys(files).join(", ")}\n`);
}

// runScenarios runs the named scenarios (all of them without names) opts.concurrency at a
// time within opts.deadlineSeconds, and exits: 0 when all passed, 1 when one failed, 2 at
// the deadline.
export async function runScenarios(label, scenarioNames, opts, runOne) {
  fs.mkdirSync(opts.out, { recursive: true });
  fs.mkdirSync(opts.work, { recursive: true });
  const names = opts.scenarios.length ? opts.scenarios : scenarioNames;
  const deadline = setTimeout(() => {
    process.stderr.write(`${label}: deadline of ${opts.deadlineSeconds}s exceeded\n`);
    process.exit(2);
  }, opts.deadlineSeconds * 1000);
  deadline.unref();
  const queue = [...names];
  const failures = [];
  const workers = Array.from({ length: Math.max(1, Math.min(opts.concurrency, queue.length)) }, async () => {
    while (queue.length) {
      const name = queue.shift();
      try {
        await runOne(name);
      } catch (e) {
        failures.push(`${name}: ${e.stack ?? e}`);
      }
    }
  });
  await Promise.all(workers);
  if (failures.length) {
    process.stderr.write(`${label}: ${failures.length} scenario(s) failed\n${failures.join("\n\n")}\n`);
    process.exit(1);
  }
  process.exit(0);
}
