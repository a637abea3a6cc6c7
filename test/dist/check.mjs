#!/usr/bin/env node
// Checks every artifact `make dist` wrote (scripts/dist.sh):
//   - exactly the expected files, and SHA256SUMS lists each of them with its digest;
//   - each archive holds pi-lsp (pi-lsp.exe), LICENSE, README.md and CHANGELOG.md, with the
//     commit's time and fixed modes; its binary is the platform's (file(1)), static on
//     linux, stripped; the linux/amd64 one runs and says the VERSION;
//   - each VS Code package holds exactly its own platform's binary, the bundled
//     dist/extension.js and nothing of node_modules or the sources; its manifest has the
//     version, license, repository, icon, real categories, the target platform, every
//     command in the Pi category with a pi.* id, and no startup activation; its README's
//     relative links and images resolve inside the package and none names the old
//     @mariozechner package;
//   - the Pi package is not private, has the pi-package keyword, license, repository and a
//     pi manifest whose extensions are in the tarball, and the extension's version.
//
//   node test/dist/check.mjs --dist dist [--epoch N]
// Last line: "N passed, M failed"; exit 0 only when nothing failed.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { arg, REPO, tally, VERSION } from "../lib/layer.mjs";

const DIST = path.resolve(arg("--dist", path.join(REPO, "dist")));
const EPOCH = arg("--epoch");
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "pi-lsp-dist-check-"));

const tests = tally({ clip: 500 });
const { check } = tests;
function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 60_000, maxBuffer: 64 << 20, ...opts });
  if (r.error) throw r.error;
  return { code: r.status, out: r.stdout ?? "", err: r.stderr ?? "" };
}
const fileType = (p) => sh("file", ["-b", p]).out.trim();

const PLATFORMS = [
  { goos: "linux", goarch: "amd64", vsc: "linux-x64", file: [/^ELF 64-bit LSB executable, x86-64/, /statically linked/, /, stripped$/] },
  { goos: "linux", goarch: "arm64", vsc: "linux-arm64", file: [/^ELF 64-bit LSB executable, ARM aarch64/, /statically linked/, /, stripped$/] },
  { goos: "darwin", goarch: "amd64", vsc: "darwin-x64", file: [/^Mach-O 64-bit x86_64 executable/] },
  { goos: "darwin", goarch: "arm64", vsc: "darwin-arm64", file: [/^Mach-O 64-bit arm64 executable/] },
  { goos: "windows", goarch: "amd64", vsc: "win32-x64", file: [/^PE32\+ executable \(console\) x86-64/] },
  { goos: "windows", goarch: "arm64", vsc: "win32-arm64", file: [/^PE32\+ executable \(console\) Aarch64/] },
];
const exeOf = (p) => (p.goos === "windows" ? "pi-lsp.exe" : "pi-lsp");
const archiveOf = (p) => `pi-lsp_${VERSION}_${p.goos}_${p.goarch}.${p.goos === "windows" ? "zip" : "tar.gz"}`;
const vsixOf = (p) => `pi-lsp-${p.vsc}-${VERSION}.vsix`;
const PI_TGZ = `pi-lsp-pi-${VERSION}.tgz`;

function checkFileType(what, file, p) {
  const t = fileType(file);
  check(`${what}: ${p.goos}/${p.goarch} binary (${t.split(",").slice(0, 2).join(",")})`, p.file.every((re) => re.test(t)), t);
  // No DWARF: the symbol tables are gone (-s -w); file(1) says "with debug_info" otherwise.
  check(`${what}: no debug info`, !/debug_info/.test(t), t);
}

// ---- the files and their checksums ----------------------------------------------------------
function checkList() {
  const want = [...PLATFORMS.map(archiveOf), ...PLATFORMS.map(vsixOf), PI_TGZ, "SHA256SUMS"].sort();
  const got = fs.readdirSync(DIST).sort();
  check(`dist/ holds exactly the ${want.length} artifacts`, JSON.stringify(got) === JSON.stringify(want), `got ${got.join(" ")}`);
  const sums = fs.readFileSync(path.join(DIST, "SHA256SUMS"), "utf8").trim().split("\n");
  const listed = new Map(sums.map((l) => l.match(/^([0-9a-f]{64})  (.+)$/)).filter(Boolean).map((m) => [m[2], m[1]]));
  const others = got.filter((f) => f !== "SHA256SUMS");
  check("SHA256SUMS lists every other file, one line each", listed.size === sums.length && JSON.stringify([...listed.keys()].sort()) === JSON.stringify(others), sums.join(" | "));
  const bad = others.filter((f) => crypto.createHash("sha256").update(fs.readFileSync(path.join(DIST, f))).digest("hex") !== listed.get(f));
  check("every SHA256SUMS digest is the file's", bad.length === 0, bad.join(" "));
  const c = sh("sha256sum", ["-c", "--strict", "SHA256SUMS"], { cwd: DIST });
  check("sha256sum -c SHA256SUMS", c.code === 0, c.code === 0 ? `${c.out.trim().split("\n").length} files OK` : c.out + c.err);
}

// ---- the archives ---------------------------------------------------------------------------
function checkArchive(p) {
  const name = archiveOf(p);
  const file = path.join(DIST, name);
  const dir = path.join(TMP, name);
  fs.mkdirSync(dir, { recursive: true });
  const want = [exeOf(p), "LICENSE", "README.md", "CHANGELOG.md"];
  let entries;
  if (name.endsWith(".zip")) {
    const l = sh("unzip", ["-Z", "-T", file]); // zipinfo with sortable times
    entries = l.out.split("\n").filter((x) => /^[-d]/.test(x)).map((x) => {
      const f = x.trim().split(/\s+/);
      return { mode: f[0], time: f[6], name: f.slice(7).join(" ") };
    });
    sh("unzip", ["-q", "-o", file, "-d", dir]);
  } else {
    const l = sh("tar", ["--utc", "--full-time", "-tvzf", file]);
    entries = l.out.split("\n").filter(Boolean).map((x) => {
      const f = x.trim().split(/\s+/);
      return { mode: f[0], owner: f[1], time: `${f[3]} ${f[4]}`, name: f.slice(5).join(" ") };
    });
    sh("tar", ["-xzf", file, "-C", dir]);
  }
  check(`${name}: holds ${want.join(", ")}`, JSON.stringify(entries.map((e) => e.name)) === JSON.stringify(want), JSON.stringify(entries.map((e) => e.name)));
  check(`${name}: the binary is executable, the rest 0644`, entries.every((e) => e.mode === (e.name === exeOf(p) ? "-rwxr-xr-x" : "-rw-r--r--")), JSON.stringify(entries.map((e) => e.mode)));
  if (!name.endsWith(".zip")) check(`${name}: entries owned by 0/0`, entries.every((e) => e.owner === "0/0"), JSON.stringify(entries.map((e) => e.owner)));
  if (EPOCH !== undefined) {
    const d = new Date(Number(EPOCH) * 1000).toISOString();
    const want = name.endsWith(".zip") ? d.slice(0, 19).replace(/[-:T]/g, "").replace(/^(\d{8})(\d{6})$/, "$1.$2") : d.slice(0, 19).replace("T", " ");
    check(`${name}: every entry has the commit's time (${d.slice(0, 19)})`, entries.every((e) => e.time === want), JSON.stringify(entries.map((e) => e.time)));
  }
  for (const f of ["LICENSE", "README.md", "CHANGELOG.md"]) {
    check(`${name}: ${f} is the repository's`, fs.readFileSync(path.join(dir, f), "utf8") === fs.readFileSync(path.join(REPO, f), "utf8"));
  }
  const bin = path.join(dir, exeOf(p));
  checkFileType(name, bin, p);
  if (p.goos === "linux" && p.goarch === "amd64" && process.platform === "linux" && process.arch === "x64") {
    const v = sh(bin, ["version"]);
    check(`${name}: pi-lsp version says ${VERSION}`, v.code === 0 && v.out.trim() === `pi-lsp ${VERSION}`, v.out + v.err);
    const m = sh("go", ["version", "-m", bin]);
    check(`${name}: built with CGO_ENABLED=0 and -trimpath`, /CGO_ENABLED=0/.test(m.out) && /-trimpath=true/.test(m.out), m.out.split("\n").filter((l) => /CGO|trimpath|ldflags/.test(l)).join(" | "));
  }
}

// ---- the VS Code packages -------------------------------------------------------------------
function zipList(file) {
  return sh("unzip", ["-Z1", file]).out.split("\n").filter(Boolean);
}
const zipText = (file, entry) => sh("unzip", ["-p", file, entry]).out;

function checkVsix(p) {
  const name = vsixOf(p);
  const file = path.join(DIST, name);
  const entries = zipList(file);
  const files = entries.filter((e) => !e.endsWith("/"));
  const bins = files.filter((e) => e.startsWith("extension/bin/"));
  check(`${name}: bin/ holds only ${exeOf(p)}`, JSON.stringify(bins) === JSON.stringify([`extension/bin/${exeOf(p)}`]), JSON.stringify(bins));
  const want = ["[Content_Types].xml", "extension.vsixmanifest", "extension/LICENSE.txt", "extension/ThirdPartyNotices.txt", "extension/changelog.md", "extension/readme.md", "extension/package.json", "extension/dist/extension.js", `extension/bin/${exeOf(p)}`, "extension/media/contextPanel.css", "extension/media/contextPanel.js", "extension/media/icon.png", "extension/media/pi.svg", "extension/media/vscode-views.png"].sort();
  check(`${name}: exactly the package's ${want.length} files (bundled JS, no node_modules, no sources)`, JSON.stringify([...files].sort()) === JSON.stringify(want), JSON.stringify(files));
  const dir = path.join(TMP, name);
  fs.mkdirSync(dir, { recursive: true });
  sh("unzip", ["-q", "-o", file, "-d", dir]);
  checkFileType(name, path.join(dir, "extension", "bin", exeOf(p)), p);
  if (p.goos !== "windows") {
    const mode = fs.statSync(path.join(dir, "extension", "bin", exeOf(p))).mode & 0o777;
    check(`${name}: the binary is executable once unpacked`, (mode & 0o111) !== 0, mode.toString(8));
  }
  // The same binary as the platform's archive.
  const arcBin = path.join(TMP, archiveOf(p), exeOf(p));
  if (fs.existsSync(arcBin)) {
    check(`${name}: its binary is the archive's`, Buffer.compare(fs.readFileSync(arcBin), fs.readFileSync(path.join(dir, "extension", "bin", exeOf(p)))) === 0);
  }
  const manifest = zipText(file, "extension.vsixmanifest");
  check(`${name}: the manifest's target platform is ${p.vsc}`, manifest.includes(`TargetPlatform="${p.vsc}"`), manifest.match(/<Identity[^>]*>/)?.[0]);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "extension", "package.json"), "utf8"));
  check(`${name}: version ${VERSION}, MIT, repository, icon in the package`, pkg.version === VERSION && pkg.license === "MIT" && /^https:\/\/github\.com\//.test(pkg.repository?.url ?? "") && fs.existsSync(path.join(dir, "extension", pkg.icon ?? "-")), JSON.stringify({ version: pkg.version, license: pkg.license, repository: pkg.repository, icon: pkg.icon }));
  check(`${name}: icon is a PNG`, /^PNG image data, (12[89]|2[0-9][0-9]|5[0-9][0-9]) x /.test(fileType(path.join(dir, "extension", pkg.icon))), fileType(path.join(dir, "extension", pkg.icon)));
  check(`${name}: real categories`, Array.isArray(pkg.categories) && pkg.categories.length > 0 && !pkg.categories.includes("Other"), JSON.stringify(pkg.categories));
  check(`${name}: main is the bundle, no npm dependencies`, pkg.main === "./dist/extension.js" && !pkg.dependencies && !pkg.scripts, JSON.stringify({ main: pkg.main, dependencies: pkg.dependencies, scripts: pkg.scripts }));
  const cmds = pkg.contributes.commands;
  const off = cmds.filter((c) => !c.command.startsWith("pi.") || c.category !== "Pi" || /^Pi:/.test(c.title));
  check(`${name}: every command has a pi.* id, category Pi and a title without "Pi:"`, off.length === 0, JSON.stringify(off));
  const ae = pkg.activationEvents ?? [];
  check(`${name}: no activation at every startup`, !ae.includes("*") && !ae.includes("onStartupFinished"), JSON.stringify(ae));
  const js = fs.readFileSync(path.join(dir, "extension", "dist", "extension.js"), "utf8");
  check(`${name}: the bundle has the language client and requires only node built-ins and vscode`, js.includes("LanguageClient") && [...js.matchAll(/require\("([^"]+)"\)/g)].every((m) => m[1] === "vscode" || m[1].startsWith("node:") || !m[1].includes("/") && !m[1].startsWith(".") && [
    "assert", "buffer", "child_process", "crypto", "events", "fs", "net", "os", "path", "stream", "url", "util", "tty",
  ].includes(m[1])), [...new Set([...js.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]))].join(" "));
  const readme = fs.readFileSync(path.join(dir, "extension", "readme.md"), "utf8");
  check(`${name}: the README does not name the old @mariozechner package`, !readme.includes("@mariozechner"));
  const links = [...readme.matchAll(/(!?)\[[^\]]*\]\(([^)\s]+)/g)].map((m) => ({ image: m[1] === "!", target: m[2] }));
  const broken = links.filter((l) => {
    if (/^https:\/\//.test(l.target) || l.target.startsWith("#")) return false;
    if (/^[a-z]+:/i.test(l.target)) return !/^(mailto|command):/.test(l.target);
    return !fs.existsSync(path.join(dir, "extension", l.target.split("#")[0]));
  });
  check(`${name}: the README's ${links.length} links and images resolve inside the package or are https`, links.length > 0 && broken.length === 0, JSON.stringify(broken));
  check(`${name}: the README shows the screenshot from the package`, links.some((l) => l.image && fs.existsSync(path.join(dir, "extension", l.target))), JSON.stringify(links.filter((l) => l.image)));
  check(`${name}: license and changelog are the repository's`, fs.readFileSync(path.join(dir, "extension", "LICENSE.txt"), "utf8") === fs.readFileSync(path.join(REPO, "LICENSE"), "utf8") && fs.readFileSync(path.join(dir, "extension", "changelog.md"), "utf8") === fs.readFileSync(path.join(REPO, "CHANGELOG.md"), "utf8"));
  check(`${name}: third-party notices name the bundled language client`, /vscode-languageclient/.test(fs.readFileSync(path.join(dir, "extension", "ThirdPartyNotices.txt"), "utf8")));
}

// ---- the Pi package -------------------------------------------------------------------------
function checkPiPackage() {
  const file = path.join(DIST, PI_TGZ);
  const list = sh("tar", ["-tzf", file]).out.split("\n").filter(Boolean).sort();
  const want = ["package/CHANGELOG.md", "package/LICENSE", "package/README.md", "package/extension.ts", "package/package.json"];
  check(`${PI_TGZ}: npm's package/ layout with the extension, README, LICENSE, CHANGELOG`, JSON.stringify(list) === JSON.stringify(want), JSON.stringify(list));
  const pkg = JSON.parse(sh("tar", ["-xzOf", file, "package/package.json"]).out);
  check(`${PI_TGZ}: publishable: not private, version ${VERSION}, MIT, repository`, pkg.private === undefined && pkg.version === VERSION && pkg.license === "MIT" && /github\.com/.test(pkg.repository?.url ?? ""), JSON.stringify({ private: pkg.private, version: pkg.version, license: pkg.license, repository: pkg.repository }));
  check(`${PI_TGZ}: keywords ["pi-package"] (the gallery's)`, Array.isArray(pkg.keywords) && pkg.keywords.includes("pi-package"), JSON.stringify(pkg.keywords));
  const exts = pkg.pi?.extensions ?? [];
  check(`${PI_TGZ}: a pi manifest whose extensions are in the tarball`, exts.length > 0 && exts.every((e) => list.includes(path.posix.join("package", e))), JSON.stringify(pkg.pi));
  check(`${PI_TGZ}: Pi's packages are peers ("*"), not dependencies`, pkg.peerDependencies?.["@earendil-works/pi-coding-agent"] === "*" && !pkg.dependencies, JSON.stringify({ peer: pkg.peerDependencies, deps: pkg.dependencies }));
  const ts = sh("tar", ["-xzOf", file, "package/extension.ts"]).out;
  check(`${PI_TGZ}: the extension registers version ${VERSION}`, ts.includes(`const VERSION = "${VERSION}";`));
  const cl = sh("tar", ["-xzOf", file, "package/CHANGELOG.md"]).out;
  check(`${PI_TGZ}: CHANGELOG.md has a "## [${VERSION}]" heading (Pi shows it after an update)`, cl.includes(`## [${VERSION}]`));
}

try {
  if (check("dist/ exists", fs.existsSync(DIST), DIST)) {
    checkList();
    for (const p of PLATFORMS) if (fs.existsSync(path.join(DIST, archiveOf(p)))) checkArchive(p);
    for (const p of PLATFORMS) if (fs.existsSync(path.join(DIST, vsixOf(p)))) checkVsix(p);
    if (fs.existsSync(path.join(DIST, PI_TGZ))) checkPiPackage();
  }
} catch (e) {
  check("no exception", false, e.stack);
} finally {
  fs.rmSync(TMP, { recursive: true, force: true });
}
console.log(tests.summary());
process.exit(tests.failed ? 1 : 0);
