import { test } from "node:test";
import * as assert from "node:assert/strict";
import type { EntryType, FlatTreeResult, TreeNode, TreeResult } from "../protocol";
import { buildTreeModel, findEntry, flattenEntries, iconFor, mainChild, nestTree, oneLine, parentMap } from "../models/tree";
import type { ViewNode } from "../models/tree";

function node(id: string, type: EntryType, extra: Partial<TreeNode> = {}, children: TreeNode[] = []): TreeNode {
  return { id, type, onPath: false, isLeaf: false, children, timestamp: "2026-11-29T10:00:00.000Z", ...extra };
}

// u1 ─ a1 ─ t1 ─ a2 ─ u2 ─ a3            (old branch)
//                    └─ c1 ─ u3 ─ a4*    (compaction, current path, leaf a4)
function sample(): TreeResult {
  const a3 = node("a3", "message", { role: "assistant", preview: "old answer" });
  const u2 = node("u2", "message", { role: "user", preview: "old question" }, [a3]);
  const a4 = node("a4", "message", { role: "assistant", preview: "new answer", onPath: true, isLeaf: true, label: "good", editable: true });
  a4.pinned = true;
  const u3 = node("u3", "message", { role: "user", preview: "new\nquestion", onPath: true, editable: true }, [a4]);
  const c1 = node("c1", "compaction", { preview: "Summary of the work", onPath: true }, [u3]);
  const a2 = node("a2", "message", { role: "assistant", preview: "done", onPath: true }, [u2, c1]);
  const t1 = node("t1", "message", { role: "toolResult", preview: "file contents", onPath: true }, [a2]);
  const a1 = node("a1", "message", { role: "assistant", preview: "reading", onPath: true }, [t1]);
  const u1 = node("u1", "message", { role: "user", preview: "hello", onPath: true }, [a1]);
  return { session: "/s/2026_x.jsonl", leafId: "a4", roots: [u1] };
}

test("current path is a flat top-level list, other branches hang under the branch point", () => {
  const m = buildTreeModel(sample());
  assert.deepEqual(
    m.items.map((i) => i.entryId),
    ["u1", "a1", "t1", "a2", "c1", "u3", "a4"],
  );
  const a2 = m.items[3]!;
  assert.equal(a2.children.length, 1);
  const br = a2.children[0]!;
  assert.equal(br.kind, "branch");
  assert.equal(br.key, "branch:u2");
  assert.equal(br.contextValue, "piBranch");
  assert.match(br.label, /^Branch: old question/);
  assert.match(br.description, /^2 entries/);
  assert.deepEqual(br.children.map((c) => c.entryId), ["u2", "a3"]);
  assert.equal(m.entryCount, 9);
  assert.equal(m.pathLength, 7);
  assert.equal(m.leafId, "a4");
  assert.equal(m.leaf?.entryId, "a4");
});

test("labels, icons, leaf marker and context values", () => {
  const m = buildTreeModel(sample());
  const byId = (id: string) => findEntry(m.items, id)!;
  assert.equal(byId("u1").icon, "account");
  assert.equal(byId("a1").icon, "hubot");
  assert.equal(byId("t1").icon, "tools");
  assert.equal(byId("c1").icon, "fold");
  assert.equal(byId("u3").label, "new question"); // one line
  assert.equal(byId("c1").label, "Compaction: Summary of the work");
  assert.equal(byId("c1").contextValue, "piEntry.compaction.unpinned");
  const leaf = byId("a4");
  assert.equal(leaf.contextValue, "piEntry.leaf.pinned.editable.ctx-none");
  assert.match(leaf.description, /^● current · pinned · \[good\] · /);
  assert.match(leaf.tooltip, /pinned: quoted verbatim/);
  assert.match(leaf.tooltip, /current leaf/);
  assert.equal(byId("a3").onPath, false);
  assert.match(byId("a3").tooltip, /not on the current path/);
});

test("a branch holding the leaf says so", () => {
  const r = sample();
  // move the leaf onto the old branch
  const walk = (n: TreeNode, f: (n: TreeNode) => void) => { f(n); n.children.forEach((c) => walk(c, f)); };
  walk(r.roots[0]!, (n) => { n.onPath = false; n.isLeaf = false; });
  for (const id of ["u1", "a1", "t1", "a2", "u2", "a3"]) walk(r.roots[0]!, (n) => { if (n.id === id) n.onPath = true; });
  walk(r.roots[0]!, (n) => { if (n.id === "a3") n.isLeaf = true; });
  r.leafId = "a3";
  const m = buildTreeModel(r);
  assert.deepEqual(m.items.map((i) => i.entryId), ["u1", "a1", "t1", "a2", "u2", "a3"]);
  assert.equal(m.items[3]!.children[0]!.key, "branch:c1");
  assert.equal(m.leaf?.entryId, "a3");
});

test("mainChild prefers the path, else the newest child", () => {
  const a = node("a", "message");
  const b = node("b", "message");
  assert.equal(mainChild([a, b]), b);
  b.onPath = false;
  a.onPath = true;
  assert.equal(mainChild([a, b]), a);
  assert.equal(mainChild([]), undefined);
});

test("entry types map to icons", () => {
  assert.equal(iconFor("branch_summary"), "git-branch");
  assert.equal(iconFor("message", "bashExecution"), "terminal");
  assert.equal(iconFor("label"), "tag");
  assert.equal(iconFor("model_change"), "settings-gear");
  assert.equal(iconFor("thinking_level_change"), "lightbulb");
  assert.equal(iconFor("session_info"), "info");
  assert.equal(iconFor("custom_message"), "extensions");
  assert.equal(iconFor("something_new"), "circle-outline");
});

test("empty tree, several roots, deep chains and cycles do not break the model", () => {
  assert.deepEqual(buildTreeModel({ session: "s", leafId: null, roots: [] }).items, []);
  const r1 = node("r1", "message", { role: "user", preview: "one", onPath: true, isLeaf: true });
  const r2 = node("r2", "message", { role: "user", preview: "two" }, [node("r2a", "message", { role: "assistant" })]);
  const m = buildTreeModel({ session: "s", leafId: "r1", roots: [r2, r1] });
  assert.equal(m.items[0]!.entryId, "r1");
  assert.equal(m.items[1]!.kind, "branch");
  assert.deepEqual(m.items[1]!.children.map((c) => c.entryId), ["r2", "r2a"]);
  // 20k entries in one chain: no recursion per entry
  let cur = node("n19999", "message", { role: "assistant", onPath: true, isLeaf: true });
  for (let i = 19998; i >= 0; i--) cur = node(`n${i}`, "message", { role: i % 2 ? "assistant" : "user", onPath: true }, [cur]);
  const big = buildTreeModel({ session: "s", leafId: "n19999", roots: [cur] });
  assert.equal(big.items.length, 20000);
  // a cycle (malformed input) terminates
  const x = node("x", "message", { onPath: true });
  const y = node("y", "message", { onPath: true }, [x]);
  x.children.push(y);
  assert.equal(buildTreeModel({ session: "s", leafId: null, roots: [x] }).items.length, 2);
});

test("flattenEntries is depth first in file order; parentMap finds parents", () => {
  assert.deepEqual(flattenEntries(sample()).map((n) => n.id), ["u1", "a1", "t1", "a2", "u2", "a3", "c1", "u3", "a4"]);
  const m = buildTreeModel(sample());
  const parents = parentMap(m.items);
  const a3 = findEntry(m.items, "a3")!;
  assert.equal(parents.get(a3)?.key, "branch:u2");
  assert.equal(parents.get(m.items[0]!), undefined);
});

test("oneLine flattens whitespace and cuts long text", () => {
  assert.equal(oneLine("  a\n\tb  "), "a b");
  assert.equal(oneLine("x".repeat(100), 10), "xxxxxxxxx…");
  assert.equal(oneLine(undefined), "");
});

test("pinned entries: pin icon, 'pinned' description, toggle state and context value", () => {
  const m = buildTreeModel(sample());
  const leaf = findEntry(m.items, "a4")!;
  assert.equal(leaf.pinned, true);
  assert.equal(leaf.icon, "pinned");
  assert.match(leaf.contextValue, /\.pinned(\.|$)/);
  const u3 = findEntry(m.items, "u3")!;
  assert.equal(u3.pinned, false);
  assert.equal(u3.icon, "account");
  assert.match(u3.contextValue, /\.unpinned(\.|$)/);
  assert.doesNotMatch(u3.description, /pinned/);
  // pinned: false (unpinned again) is the same as absent
  const r = sample();
  const a4 = r.roots[0]!.children[0]!.children[0]!.children[0]!.children[1]!.children[0]!.children[0]!;
  assert.equal(a4.id, "a4");
  a4.pinned = false;
  const again = findEntry(buildTreeModel(r).items, "a4")!;
  assert.equal(again.pinned, false);
  assert.equal(again.icon, "hubot");
  assert.equal(again.contextValue, "piEntry.leaf.unpinned.editable.ctx-none");
  // branch wrappers are never pinned (their context menu has no Pin)
  const br = m.items[3]!.children[0]!;
  assert.equal(br.pinned, false);
  assert.equal(br.contextValue, "piBranch");
});

test("the flat answer nests back into the same tree, children in order", () => {
  const nested = sample();
  const flat: FlatTreeResult = { session: nested.session, leafId: nested.leafId, total: 0, offset: 0, nodes: [] };
  const walk = (n: TreeNode, parentId: string | undefined, depth: number) => {
    const { children, ...rest } = n;
    flat.nodes.push({ ...rest, parentId, depth, childCount: children.length });
    for (const c of children) walk(c, n.id, depth + 1);
  };
  for (const r of nested.roots) walk(r, undefined, 0);
  flat.total = flat.nodes.length;
  assert.deepEqual(nestTree(flat), nested);
  assert.deepEqual(buildTreeModel(nestTree(flat)).items.map((i) => i.entryId), buildTreeModel(nested).items.map((i) => i.entryId));
});

test("a long linear session nests without recursion", () => {
  const nodes = Array.from({ length: 50000 }, (_, i) => ({
    id: `e${i}`, type: "message" as const, timestamp: "", onPath: true, isLeaf: i === 49999, depth: i, childCount: i < 49999 ? 1 : 0,
    ...(i > 0 ? { parentId: `e${i - 1}` } : {}),
  }));
  const tree = nestTree({ session: "/s.jsonl", leafId: "e49999", total: nodes.length, offset: 0, nodes });
  const m = buildTreeModel(tree);
  assert.equal(m.entryCount, 50000);
  assert.equal(m.leaf?.entryId, "e49999");
});

test("context edits: hidden and replaced messages shown as such, menu values by state", () => {
  const r = sample();
  const a4 = r.roots[0]!.children[0]!.children[0]!.children[0]!.children[1]!.children[0]!.children[0]!;
  a4.contextEdit = "omitted";
  const m = buildTreeModel(r);
  const leaf = findEntry(m.items, "a4")!;
  assert.equal(leaf.contextValue, "piEntry.leaf.pinned.editable.ctx-omitted");
  assert.match(leaf.description, /hidden from context/);
  assert.match(leaf.tooltip, /hidden from the LLM context/);
  a4.contextEdit = "replaced";
  a4.pinned = false;
  const again = findEntry(buildTreeModel(r).items, "a4")!;
  assert.equal(again.contextValue, "piEntry.leaf.unpinned.editable.ctx-replaced");
  assert.match(again.description, /replaced in context/);
  a4.contextEdit = "omitted";
  assert.equal(findEntry(buildTreeModel(r).items, "a4")!.icon, "eye-closed");
  // The menu follows the server's editable flag: not a compaction, nor a message it
  // summarized, nor an entry off the current path.
  assert.doesNotMatch(findEntry(m.items, "c1")!.contextValue, /editable/);
  assert.doesNotMatch(findEntry(m.items, "u1")!.contextValue, /editable/);
  assert.match(findEntry(m.items, "u3")!.contextValue, /editable/);
  const off = flatten(m.items).find((n) => n.kind === "entry" && !n.onPath && n.role === "user");
  if (off) assert.doesNotMatch(off.contextValue, /editable/);
});

function flatten(items: ViewNode[]): ViewNode[] {
  return items.flatMap((n) => [n, ...flatten(n.children)]);
}
