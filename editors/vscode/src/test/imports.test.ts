import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

// The compiled extension has no runtime import cycle: a module that imports client.ts
// for a helper while client.ts imports it back (directly or through others) loads half
// initialized. Type-only imports are erased by tsc and do not count.

const OUT = path.resolve(__dirname, "..");

/** The files under dir whose names end in ending, the tests' own folder left out. */
function filesUnder(dir: string, ending: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "test") out.push(...filesUnder(p, ending));
    } else if (e.name.endsWith(ending)) out.push(p);
  }
  return out;
}

function resolveLocal(from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [base + ".js", path.join(base, "index.js")]) if (fs.existsSync(c)) return c;
  return undefined;
}

function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const m of filesUnder(OUT, ".js")) {
    const src = fs.readFileSync(m, "utf8");
    const deps: string[] = [];
    for (const r of src.matchAll(/require\("([^"]+)"\)/g)) {
      const d = resolveLocal(m, r[1]!);
      if (d) deps.push(d);
    }
    g.set(m, deps);
  }
  return g;
}

function cycles(g: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (n: string) => {
    state.set(n, 1);
    stack.push(n);
    for (const d of g.get(n) ?? []) {
      if (state.get(d) === 1) found.push([...stack.slice(stack.indexOf(d)), d]);
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of g.keys()) if (!state.has(n)) visit(n);
  return found;
}

test("the extension's modules import each other without a cycle", () => {
  const g = graph();
  assert.ok(g.size > 10, `only ${g.size} compiled modules found in ${OUT}`);
  const rel = (p: string) => path.relative(OUT, p);
  assert.deepEqual(cycles(g).map((c) => c.map(rel).join(" -> ")), []);
});

test("the cycle check finds a cycle", () => {
  const g = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", []]]);
  assert.equal(cycles(g).length, 1);
});

// context.ts is an interface the parts share: it imports no value (type-only imports are
// erased), so no part that takes a PiContext loads, through it, a module that builds one.
// extension.ts builds the parts.
test("context.ts imports no value", () => {
  const src = fs.readFileSync(path.join(OUT, "context.js"), "utf8");
  assert.deepEqual([...src.matchAll(/require\("([^"]+)"\)/g)].map((r) => r[1]), []);
  assert.doesNotMatch(fs.readFileSync(path.join(OUT, "..", "src", "context.ts"), "utf8"), /^import (?!type )/m);
});

// The parts are given only what they use (vscode-go's goMain.ts, rust-analyzer's ctx.ts):
// no constructor takes the whole PiContext, and extension.ts builds the context of finished
// parts instead of casting a half-built one. Commands, which are functions of the context,
// still take it.

const SRC = path.join(OUT, "..", "src");

test("no part's constructor takes the whole context", () => {
  const files = filesUnder(SRC, ".ts");
  assert.ok(files.length > 10, `only ${files.length} sources found in ${SRC}`);
  const offenders = files.filter((f) => /constructor\([^)]*\bPiContext\b/.test(fs.readFileSync(f, "utf8"))).map((f) => path.relative(SRC, f));
  assert.deepEqual(offenders, []);
  for (const part of ["client.ts", "status.ts", path.join("views", "index.ts")]) {
    assert.doesNotMatch(fs.readFileSync(path.join(SRC, part), "utf8"), /\bPiContext\b/, `${part} names PiContext`);
  }
});

test("extension.ts casts no half-built object to the context", () => {
  assert.doesNotMatch(fs.readFileSync(path.join(SRC, "extension.ts"), "utf8"), /as PiContext|Partial<PiContext>|\?: PiContext\[/);
});
