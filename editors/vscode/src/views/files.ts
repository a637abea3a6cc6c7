// The Files view (files the agent read and modified on the current path) and the explorer
// badges for them: π for modified, π! for stale (changed on disk since the agent read it).

import * as vscode from "vscode";
import { EXTENSION_COMMANDS as C } from "../models/commands";
import { FileGroup, FileItem, FilesModel, StaleInfo, staleText } from "../models/files";

type FilesNode = FileGroup | FileItem;

export class FilesProvider implements vscode.TreeDataProvider<FilesNode> {
  private readonly changed = new vscode.EventEmitter<FilesNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private model: FilesModel | undefined;
  private signature = "";

  set(model: FilesModel): void {
    const signature = JSON.stringify(model.groups.map((g) => [g.state, g.label, g.items.map((i) => [i.absPath, i.stale?.reason, i.stale?.modifiedAt])]));
    if (signature === this.signature) return;
    this.signature = signature;
    this.model = model;
    this.changed.fire(undefined);
  }

  getChildren(element?: FilesNode): FilesNode[] {
    if (!element) return this.model?.groups ?? [];
    return "items" in element ? element.items : [];
  }

  getTreeItem(n: FilesNode): vscode.TreeItem {
    if ("items" in n) {
      const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${n.state}`;
      item.iconPath = new vscode.ThemeIcon(n.state === "modified" ? "edit" : "eye");
      item.contextValue = `piFilesGroup.${n.state}`;
      return item;
    }
    const uri = vscode.Uri.file(n.absPath);
    const item = new vscode.TreeItem(uri, vscode.TreeItemCollapsibleState.None);
    item.id = `${n.state}:${n.absPath}`;
    item.label = n.label;
    item.description = n.description;
    item.tooltip = n.tooltip;
    item.iconPath = n.stale ? new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground")) : vscode.ThemeIcon.File;
    item.contextValue = `piFile.${n.state}${n.stale ? ".stale" : ""}`;
    item.accessibilityInformation = { label: `${n.label}${n.stale ? `, stale: ${staleText(n.stale).short}` : ""}` };
    item.command = { command: C.filesOpen, title: "Open File", arguments: [n] };
    return item;
  }
}

export class ModifiedFilesDecorations implements vscode.FileDecorationProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri[]>();
  readonly onDidChangeFileDecorations = this.changed.event;
  private modified = new Set<string>();
  private stale = new Map<string, StaleInfo>();
  private signature = "";

  set(modified: Set<string>, stale: Map<string, StaleInfo>): void {
    const signature = JSON.stringify([[...modified].sort(), [...stale.entries()].map(([p, s]) => [p, s.reason]).sort()]);
    if (signature === this.signature) return;
    this.signature = signature;
    const touched = new Set<string>([...this.modified, ...this.stale.keys(), ...modified, ...stale.keys()]);
    this.modified = new Set(modified);
    this.stale = new Map(stale);
    if (touched.size > 0) this.changed.fire([...touched].map((p) => vscode.Uri.file(p)));
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    if (uri.scheme !== "file") return undefined;
    const st = this.stale.get(uri.fsPath);
    if (st) {
      // Distinct from the modified badge: the agent's view of this file is out of date.
      const why = st.reason === "deleted" ? "deleted" : "changed on disk";
      return new vscode.FileDecoration("π!", `Pi: ${why} since the agent read it`, new vscode.ThemeColor("list.warningForeground"));
    }
    if (!this.modified.has(uri.fsPath)) return undefined;
    return new vscode.FileDecoration("π", "Modified by the Pi agent on the current path of the session");
  }
}
