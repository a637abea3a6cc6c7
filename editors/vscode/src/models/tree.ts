// View model of the "Pi Session" tree view, built from a pi.tree result. Pure: no vscode import.
//
// A Pi session is a tree whose branches are long chains (every message is the child of the one
// before it). Showing it nested one level per entry would be unreadable, so, like Pi's own /tree
// selector, a chain is shown flat: the current path is the top-level list, and at a branch point
// the other branches hang under the entry as collapsible "branch" items holding their own chain.

import type { FlatTreeResult, TreeNode, TreeResult } from "../protocol";

export type IconId =
  | "account"
  | "hubot"
  | "tools"
  | "terminal"
  | "fold"
  | "git-branch"
  | "tag"
  | "extensions"
  | "settings-gear"
  | "lightbulb"
  | "info"
  | "comment"
  | "circle-outline"
  | "pinned"
  | "eye-closed";

export interface ViewNode {
  /** Unique within the view (branch items get a "branch:" prefix). */
  key: string;
  kind: "entry" | "branch";
  /** The session entry this item stands for (for a branch item: the first entry of the branch). */
  entryId: string;
  entryType: string;
  role?: string;
  label: string;
  description: string;
  tooltip: string;
  icon: IconId;
  onPath: boolean;
  isLeaf: boolean;
  /** Pinned entries (pi.pin) show the pin icon and "pinned" in the description. */
  pinned: boolean;
  /** piEntry[.leaf][.compaction].pinned|.unpinned[.editable.ctx-none|.ctx-omitted|.ctx-replaced] or piBranch: drives the context menu (`viewItem`). */
  contextValue: string;
  children: ViewNode[];
}

export interface TreeModel {
  session: string;
  leafId: string | null;
  items: ViewNode[];
  /** Number of entries in the session tree. */
  entryCount: number;
  /** Entries on the current path (root to leaf). */
  pathLength: number;
  leaf?: ViewNode;
}

const MAX_LABEL = 80;

export function oneLine(text: string | undefined, max = MAX_LABEL): string {
  if (!text) return "";
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

export function iconFor(type: string, role?: string): IconId {
  if (type === "message") {
    switch (role) {
      case "user":
        return "account";
      case "assistant":
        return "hubot";
      case "toolResult":
        return "tools";
      case "bashExecution":
        return "terminal";
      default:
        return "comment";
    }
  }
  switch (type) {
    case "compaction":
      return "fold";
    case "branch_summary":
      return "git-branch";
    case "label":
      return "tag";
    case "custom":
    case "custom_message":
      return "extensions";
    case "model_change":
      return "settings-gear";
    case "thinking_level_change":
      return "lightbulb";
    case "session_info":
      return "info";
    default:
      return "circle-outline";
  }
}

/** What kind of entry this is, in words (the start of the label when there is no preview). */
export function kindName(type: string, role?: string): string {
  if (type === "message") {
    switch (role) {
      case "user":
        return "User";
      case "assistant":
        return "Assistant";
      case "toolResult":
        return "Tool result";
      case "bashExecution":
        return "Bash";
      case "custom":
        return "Custom message";
      default:
        return role ? role : "Message";
    }
  }
  switch (type) {
    case "compaction":
      return "Compaction";
    case "branch_summary":
      return "Branch summary";
    case "label":
      return "Label";
    case "custom":
      return "Custom";
    case "custom_message":
      return "Custom message";
    case "model_change":
      return "Model change";
    case "thinking_level_change":
      return "Thinking level";
    case "session_info":
      return "Session info";
    default:
      return type;
  }
}

export function formatTime(timestamp: string | undefined): string {
  if (!timestamp) return "";
  const d = new Date(timestamp);
  if (Number.isNaN(d.getTime())) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function entryView(n: TreeNode): ViewNode {
  const kind = kindName(n.type, n.role);
  const preview = oneLine(n.preview);
  const label = preview ? (n.type === "message" && n.role !== "custom" ? preview : `${kind}: ${preview}`) : kind;
  const desc: string[] = [];
  if (n.isLeaf) desc.push("● current");
  if (n.pinned) desc.push("pinned");
  if (n.label) desc.push(`[${n.label}]`);
  if (n.contextEdit === "omitted") desc.push("hidden from context");
  if (n.contextEdit === "replaced") desc.push("replaced in context");
  const time = formatTime(n.timestamp);
  if (time) desc.push(time);
  const tip: string[] = [`${kind} · ${n.id}`];
  if (n.label) tip.push(`label: ${n.label}`);
  if (n.pinned) tip.push("pinned: quoted verbatim in every later summary");
  if (n.timestamp) tip.push(n.timestamp);
  if (n.contextEdit === "omitted") tip.push("hidden from the LLM context (Restore to Context brings it back)");
  if (n.contextEdit === "replaced") tip.push("its content is replaced in the LLM context (Restore to Context brings the original back)");
  if (n.isLeaf) tip.push("current leaf: the next prompt continues from here");
  else if (!n.onPath) tip.push("not on the current path");
  if (n.preview) tip.push("", n.preview);
  let contextValue = "piEntry";
  if (n.isLeaf) contextValue += ".leaf";
  if (n.type === "compaction") contextValue += ".compaction";
  contextValue += n.pinned ? ".pinned" : ".unpinned";
  // Which entries a context edit may name is the server's to say (Pi's rule).
  if (n.editable) contextValue += `.editable.ctx-${n.contextEdit ?? "none"}`;
  return {
    key: n.id,
    kind: "entry",
    entryId: n.id,
    entryType: n.type,
    role: n.role,
    label,
    description: desc.join(" · "),
    tooltip: tip.join("\n"),
    icon: n.pinned ? "pinned" : n.contextEdit === "omitted" ? "eye-closed" : iconFor(n.type, n.role),
    onPath: n.onPath,
    isLeaf: n.isLeaf,
    pinned: n.pinned === true,
    contextValue,
    children: [],
  };
}

/** Which child continues the chain shown at this level: the one on the current path, else the newest. */
export function mainChild(children: readonly TreeNode[]): TreeNode | undefined {
  if (children.length === 0) return undefined;
  return children.find((c) => c.onPath) ?? children[children.length - 1];
}

function countChain(start: TreeNode, seen: Set<string>): number {
  // Entries in the whole subtree (iterative; guarded against cycles).
  let count = 0;
  const stack: TreeNode[] = [start];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (seen.has(n.id)) continue;
    seen.add(n.id);
    count++;
    for (const c of n.children) stack.push(c);
  }
  return count;
}

function chain(start: TreeNode, seen: Set<string>, acc: { leaf?: ViewNode }): ViewNode[] {
  const out: ViewNode[] = [];
  let cur: TreeNode | undefined = start;
  while (cur && !seen.has(cur.id)) {
    seen.add(cur.id);
    const v = entryView(cur);
    if (cur.isLeaf) acc.leaf = v;
    out.push(v);
    const main = mainChild(cur.children);
    for (const alt of cur.children) {
      if (alt === main || seen.has(alt.id)) continue;
      const size = countChain(alt, new Set(seen));
      const items = chain(alt, seen, acc);
      const head = items[0];
      if (!head) continue;
      const onPath = items.some((i) => i.onPath);
      v.children.push({
        key: `branch:${alt.id}`,
        kind: "branch",
        entryId: alt.id,
        entryType: alt.type,
        role: alt.role,
        label: `Branch: ${head.label}`,
        description: `${size} ${size === 1 ? "entry" : "entries"}${items.some((i) => i.isLeaf) ? " · ● current" : ""}`,
        tooltip: `Another branch from ${v.entryId}, ${size} ${size === 1 ? "entry" : "entries"}\n\n${head.tooltip}`,
        icon: "git-branch",
        onPath,
        isLeaf: false,
        pinned: false,
        contextValue: "piBranch",
        children: items,
      });
    }
    cur = main;
  }
  return out;
}

export function buildTreeModel(result: TreeResult): TreeModel {
  const seen = new Set<string>();
  const acc: { leaf?: ViewNode } = {};
  const items: ViewNode[] = [];
  const roots = result.roots ?? [];
  // The root holding the current path comes first; other roots follow in file order.
  const ordered = [...roots.filter((r) => r.onPath), ...roots.filter((r) => !r.onPath)];
  for (const r of ordered) {
    const part = chain(r, seen, acc);
    if (roots.length > 1 && !r.onPath && part.length > 0) {
      items.push({
        ...part[0]!,
        key: `branch:${r.id}`,
        kind: "branch",
        label: `Branch: ${part[0]!.label}`,
        description: `${part.length}+ entries (separate root)`,
        icon: "git-branch",
        contextValue: "piBranch",
        isLeaf: false,
        pinned: false,
        children: part,
      });
    } else {
      items.push(...part);
    }
  }
  let entryCount = 0;
  let pathLength = 0;
  const stack = [...roots];
  const counted = new Set<string>();
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (counted.has(n.id)) continue;
    counted.add(n.id);
    entryCount++;
    if (n.onPath) pathLength++;
    stack.push(...n.children);
  }
  return { session: result.session, leafId: result.leafId, items, entryCount, pathLength, leaf: acc.leaf };
}

/**
 * The nested tree from pi.tree's flat form. The nested answer nests two JSON levels per
 * entry, which long sessions turn into tens of thousands; the flat one has no depth.
 */
export function nestTree(flat: FlatTreeResult): TreeResult {
  const byId = new Map<string, TreeNode>();
  const nodes: TreeNode[] = [];
  for (const f of flat.nodes ?? []) {
    const { parentId: _p, depth: _d, childCount: _c, ...rest } = f;
    const n: TreeNode = { ...rest, children: [] };
    byId.set(n.id, n);
    nodes.push(n);
  }
  const roots: TreeNode[] = [];
  (flat.nodes ?? []).forEach((f, i) => {
    const parent = f.parentId !== undefined ? byId.get(f.parentId) : undefined;
    (parent ? parent.children : roots).push(nodes[i]!);
  });
  return { session: flat.session, leafId: flat.leafId, roots };
}

/** Every entry of the tree, depth first in file order (for the "Navigate to…" QuickPick). */
export function flattenEntries(result: TreeResult): TreeNode[] {
  const out: TreeNode[] = [];
  const seen = new Set<string>();
  const stack = [...(result.roots ?? [])].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (seen.has(n.id)) continue;
    seen.add(n.id);
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

/** Find a view item by entry id (the item itself, not a branch wrapper). */
export function findEntry(items: readonly ViewNode[], entryId: string): ViewNode | undefined {
  const stack = [...items];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (v.kind === "entry" && v.entryId === entryId) return v;
    stack.push(...v.children);
  }
  return undefined;
}

/** Parent of each item, for TreeDataProvider.getParent (needed by TreeView.reveal). */
export function parentMap(items: readonly ViewNode[]): Map<ViewNode, ViewNode | undefined> {
  const m = new Map<ViewNode, ViewNode | undefined>();
  const stack: [ViewNode, ViewNode | undefined][] = items.map((i) => [i, undefined]);
  while (stack.length > 0) {
    const [v, p] = stack.pop()!;
    m.set(v, p);
    for (const c of v.children) stack.push([c, v]);
  }
  return m;
}
