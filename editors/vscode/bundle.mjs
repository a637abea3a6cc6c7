#!/usr/bin/env node
// Bundles the extension into one file with esbuild (vscode stays external: VS Code provides
// it) and writes the notices of the packages bundled into it:
//
//   node bundle.mjs [--outdir DIR]     # DIR/extension.js and DIR/ThirdPartyNotices.txt (default dist/)
//
// npm run bundle runs it; scripts/vsix-lib.sh packages its output.
import * as esbuild from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const i = args.indexOf("--outdir");
const outdir = path.resolve(i >= 0 ? args[i + 1] : path.join(HERE, "dist"));
fs.mkdirSync(outdir, { recursive: true });

const result = await esbuild.build({
  entryPoints: [path.join(HERE, "src", "extension.ts")],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18",
  external: ["vscode"],
  outfile: path.join(outdir, "extension.js"),
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
});

// The npm packages whose files went into the bundle, with their license texts.
const pkgs = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const m = input.split(path.sep).join("/").match(/(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (!m) continue;
  const dir = path.join(HERE, input.slice(0, input.lastIndexOf(`node_modules/${m[1]}/`) + `node_modules/${m[1]}`.length));
  if (pkgs.has(dir)) continue;
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const lic = fs.readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
  pkgs.set(dir, { name: pkg.name, version: pkg.version, license: pkg.license, text: lic ? fs.readFileSync(path.join(dir, lic), "utf8").trim() : "" });
}
const list = [...pkgs.values()].sort((a, b) => a.name.localeCompare(b.name));
let notices = "Third-party software bundled in dist/extension.js\n\n";
for (const p of list) {
  notices += `${"=".repeat(78)}\n${p.name} ${p.version} (${p.license ?? "see below"})\n${"=".repeat(78)}\n\n${p.text || "(no license file in the package)"}\n\n`;
}
fs.writeFileSync(path.join(outdir, "ThirdPartyNotices.txt"), notices);
const kb = (fs.statSync(path.join(outdir, "extension.js")).size / 1024).toFixed(0);
console.error(`bundle: ${path.relative(process.cwd(), path.join(outdir, "extension.js"))} (${kb} KB, ${list.length} packages: ${list.map((p) => p.name).join(", ")})`);
