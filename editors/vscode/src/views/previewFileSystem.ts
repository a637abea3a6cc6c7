import * as vscode from "vscode";
import { PreviewStore } from "../models/preview";

/**
 * The pi-summary: scheme: previewed summaries as ordinary (Markdown) documents. Reading gives the
 * stored text; writing (Save) commits it through the extension and fails the save when the
 * server refuses, so the document stays dirty and the user can fix it and save again.
 */
export class PreviewFileSystem implements vscode.FileSystemProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  private readonly started = Date.now();

  constructor(
    private readonly store: PreviewStore,
    private readonly commit: (uri: vscode.Uri, text: string) => Promise<void>,
  ) {}

  changed(uri: vscode.Uri): void {
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  private isDir(p: string): boolean {
    return p === "/" || p === "" || p === "/compaction" || p === "/branch" || this.store.paths().some((x) => x.startsWith(p.endsWith("/") ? p : p + "/"));
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const d = this.store.get(uri.path);
    if (d) return { type: vscode.FileType.File, ctime: this.started, mtime: d.mtime, size: Buffer.byteLength(d.content, "utf8") };
    if (this.isDir(uri.path)) return { type: vscode.FileType.Directory, ctime: this.started, mtime: this.started, size: 0 };
    throw vscode.FileSystemError.FileNotFound(uri);
  }

  readDirectory(uri: vscode.Uri): [string, vscode.FileType][] {
    const dir = uri.path.endsWith("/") ? uri.path : uri.path + "/";
    const out = new Map<string, vscode.FileType>();
    for (const p of this.store.paths()) {
      if (!p.startsWith(dir)) continue;
      const rest = p.slice(dir.length).split("/");
      out.set(rest[0]!, rest.length > 1 ? vscode.FileType.Directory : vscode.FileType.File);
    }
    return [...out.entries()];
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const d = this.store.get(uri.path);
    if (!d) throw vscode.FileSystemError.FileNotFound(uri);
    return Buffer.from(d.content, "utf8");
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    await this.commit(uri, Buffer.from(content).toString("utf8"));
    this.changed(uri);
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions("Pi previews have no folders to create.");
  }

  delete(uri: vscode.Uri): void {
    this.store.delete(uri.path);
    this.emitter.fire([{ type: vscode.FileChangeType.Deleted, uri }]);
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions("Pi previews cannot be renamed: save commits them.");
  }
}
