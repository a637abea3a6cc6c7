import { test } from "node:test";
import * as assert from "node:assert/strict";
import { buildFilesModel, decodeSessionDir, encodeSessionDir, resolveFile, staleMap, staleText } from "../models/files";

test("modified first, read files without those also modified, relative paths resolved", () => {
  const m = buildFilesModel(
    {
      readFiles: ["src/a.ts", "/home/dev/proj/src/b.ts", "README.md", "src/a.ts", "/etc/hosts"],
      modifiedFiles: ["src/b.ts", "notes.txt"],
    },
    "/home/dev/proj",
  );
  assert.deepEqual(m.groups.map((g) => g.label), ["Modified (2)", "Read (3)"]);
  assert.deepEqual(m.groups[0]!.items.map((i) => i.absPath), ["/home/dev/proj/src/b.ts", "/home/dev/proj/notes.txt"]);
  assert.deepEqual(m.groups[1]!.items.map((i) => i.absPath), ["/home/dev/proj/src/a.ts", "/home/dev/proj/README.md", "/etc/hosts"]);
  assert.deepEqual([...m.modified].sort(), ["/home/dev/proj/notes.txt", "/home/dev/proj/src/b.ts"]);
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

test("stale files: marked, described, counted, resolved like the lists", () => {
  const m = buildFilesModel(
    {
      readFiles: ["notes.txt", "other.txt", "gone.txt"],
      modifiedFiles: ["src/x.ts"],
      stale: [
        { path: "other.txt", readAt: "2026-11-29T13:01:59.973Z", modifiedAt: "2026-11-29T14:00:00.000Z", reason: "modified" },
        { path: "gone.txt", readAt: "2026-11-29T13:01:59.973Z", modifiedAt: "0001-01-01T00:00:00Z", reason: "deleted" },
        { path: "/home/dev/proj/src/x.ts", readAt: "2026-11-29T13:01:59.973Z", reason: "modified" },
      ],
    },
    "/home/dev/proj",
  );
  assert.deepEqual([...m.stale.keys()].sort(), ["/home/dev/proj/gone.txt", "/home/dev/proj/other.txt", "/home/dev/proj/src/x.ts"]);
  assert.deepEqual(m.groups.map((g) => g.label), ["Modified (1, 1 stale)", "Read (3, 2 stale)"]);
  const read = m.groups[1]!.items;
  assert.equal(read[0]!.stale, undefined);
  assert.equal(read[0]!.description, "");
  assert.equal(read[1]!.stale?.reason, "modified");
  assert.equal(read[1]!.description, "changed since read");
  assert.match(read[1]!.tooltip, /Stale: Changed on disk at .* since the agent read it \(read at /);
  assert.equal(read[2]!.stale?.reason, "deleted");
  assert.equal(read[2]!.description, "deleted since read");
  // Go's zero time ("0001-01-01") for a deleted file's modifiedAt is dropped
  assert.equal(m.stale.get("/home/dev/proj/gone.txt")!.modifiedAt, undefined);
  assert.equal(m.groups[0]!.items[0]!.description, "src · changed since read");
  assert.equal(m.modified.has("/home/dev/proj/src/x.ts"), true);
});

test("a stale file missing from both lists is listed as read; no stale → empty map", () => {
  const m = buildFilesModel({ readFiles: [], modifiedFiles: [], stale: [{ path: "a.txt", readAt: "x", reason: "modified" }] }, "/p");
  assert.deepEqual(m.groups.map((g) => g.label), ["Read (1, 1 stale)"]);
  assert.equal(m.groups[0]!.items[0]!.absPath, "/p/a.txt");
  const n = buildFilesModel({ readFiles: ["a.txt"], modifiedFiles: [], stale: null }, "/p");
  assert.equal(n.stale.size, 0);
  assert.deepEqual(n.groups.map((g) => g.label), ["Read (1)"]);
  assert.equal(staleText({ reason: "deleted" }).short, "deleted since read");
  assert.equal(staleMap([{ path: "" }, { path: 3 }, { path: "~/b", reason: 7 }], "/p", "/home/me").get("/home/me/b")?.reason, "modified");
});
