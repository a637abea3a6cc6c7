// The Pi Session view: the session tree from models/tree.ts, the current leaf highlighted.

import * as vscode from "vscode";
import { parentMap, TreeModel, ViewNode } from "../models/tree";

export class SessionTreeProvider implements vscode.TreeDataProvider<ViewNode> {
  private readonly changed = new vscode.EventEmitter<ViewNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  model: TreeModel | undefined;
  private parents = new Map<ViewNode, ViewNode | undefined>();
  private signature = "";

  set(model: TreeModel | undefined): boolean {
    // Session files are append-only: every change (labels and names too) adds an entry. Re-render
    // only on a real change, so a click on a row never races a needless refresh.
    const signature = model ? `${model.session}|${model.leafId}|${model.entryCount}` : "";
    if (signature === this.signature) return false;
    this.signature = signature;
    this.model = model;
    this.parents = model ? parentMap(model.items) : new Map();
    this.changed.fire(undefined);
    return true;
  }

  getChildren(element?: ViewNode): ViewNode[] {
    if (!element) return this.model?.items ?? [];
    return element.children;
  }

  getParent(element: ViewNode): ViewNode | undefined {
    return this.parents.get(element);
  }

  getTreeItem(n: ViewNode): vscode.TreeItem {
    const containsLeaf = n.kind === "branch" && n.description.includes("current");
    const state =
      n.children.length === 0
        ? vscode.TreeItemCollapsibleState.None
        : containsLeaf
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(
      n.isLeaf ? { label: n.label, highlights: [[0, Math.min(n.label.length, 200)]] } : n.label,
      state,
    );
    item.id = n.key;
    item.description = n.description;
    item.tooltip = n.tooltip;
    item.contextValue = n.contextValue;
    item.iconPath = new vscode.ThemeIcon(
      n.icon,
      n.isLeaf
        ? new vscode.ThemeColor("charts.green")
        : n.pinned
          ? new vscode.ThemeColor("charts.orange")
          : n.onPath
            ? undefined
            : new vscode.ThemeColor("disabledForeground"),
    );
    item.accessibilityInformation = { label: `${n.label}${n.pinned ? ", pinned" : ""}${n.isLeaf ? ", current leaf" : ""}` };
    return item;
  }
}
