import { test } from "node:test";
import * as assert from "node:assert/strict";
import { buildFilesModel, decodeSessionDir, encodeSessionDir, resolveFile } from "../models/files";

test("modified first, read files without those also modified, relative paths resolved", () => {
  const m = buildFilesModel(
    {
      readFiles: ["src/a.ts", "/work/proj/src/b.ts", "README.md", "src/a.ts", "/etc/hosts"],
      modifiedFiles: ["src/b.ts", "notes.txt"],
    },
    "/work/proj",
  );
  assert.deepEqual(m.groups.map((g) => g.label), ["Modified (2)", "Read (3)"]);
  assert.deepEqual(m.groups[0]!.items.map((i) => i.absPath), ["/work/proj/src/b.ts", "/work/proj/notes.txt"]);
  assert.deepEqual(m.groups[1]!.items.map((i) => i.absPath), ["/work/proj/src/a.ts", "/work/proj/README.md", "/etc/hosts"]);
  assert.deepEqual([...m.modified].sort(), ["/work/proj/notes.txt", "/work/proj/src/b.ts"]);
  assert.equal(m.total, 5);
  const a = m.groups[1]!.items[0]!;
  assert.equal(a.label, "a.ts");
  assert.equal(a.description, "src");
  assert.equal(m.groups[1]!.items[1]!.description, "");
  assert.equal(m.groups[1]!.items[2]!.description, "/etc");
  assert.match(m.groups[0]!.items[0]!.tooltip, /Modified/);
});

test("empty and missing lists give no groups", () => {
  assert.deepEqual(buildFilesModel({ readFiles: [], modifiedFiles: [] }, "/p").groups, []);
  assert.deepEqual(buildFilesModel({}, "/p").groups, []);
  assert.equal(buildFilesModel({ readFiles: ["", "  "], modifiedFiles: null }, "/p").total, 0);
});

test("home expansion and normalisation", () => {
  assert.equal(resolveFile("~/x/y.txt", "/p", "/home/me"), "/home/me/x/y.txt");
  assert.equal(resolveFile("./a/../b.txt", "/p"), "/p/b.txt");
  assert.equal(resolveFile("/abs//c.txt", "/p"), "/abs/c.txt");
});

test("Pi's session folder encoding", () => {
  assert.equal(encodeSessionDir("/home/me/proj"), "--home-me-proj--");
  assert.equal(encodeSessionDir("C:\\Users\\me"), "--C--Users-me--");
  assert.equal(decodeSessionDir("--home-me-proj--"), "/home/me/proj");
  assert.equal(decodeSessionDir("nope"), undefined);
});
