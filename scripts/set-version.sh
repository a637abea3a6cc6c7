#!/usr/bin/env bash
# Sets the one version of pi-lsp everywhere it is written down:
#   VERSION                                  (make build and make dist stamp it into the binary)
#   editors/vscode/package.json, package-lock.json
#   editors/pi/package.json, editors/pi/extension.ts (the VERSION the bridge registers)
#   editors/neovim/lua/pi_lsp/version.lua
#   CHANGELOG.md                             (a "## [X.Y.Z] - unreleased" section when it has none)
# cmd/pi-lsp's TestOneVersionEverywhere fails while they disagree.
#
#   bash scripts/set-version.sh 0.3.0
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
v="${1:-}"
[[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "usage: scripts/set-version.sh X.Y.Z" >&2; exit 2; }
printf '%s\n' "$v" >VERSION
node - "$v" <<'JS'
const fs = require("fs");
const v = process.argv[2];
const json = (p, f) => {
  const data = JSON.parse(fs.readFileSync(p, "utf8"));
  f(data);
  fs.writeFileSync(p, JSON.stringify(data, null, 2) + "\n");
};
json("editors/vscode/package.json", (p) => (p.version = v));
json("editors/vscode/package-lock.json", (p) => {
  p.version = v;
  if (p.packages && p.packages[""]) p.packages[""].version = v;
});
json("editors/pi/package.json", (p) => (p.version = v));
const sub = (p, re, to) => {
  const s = fs.readFileSync(p, "utf8");
  if (!re.test(s)) throw new Error(`${p}: no ${re}`);
  fs.writeFileSync(p, s.replace(re, to));
};
sub("editors/pi/extension.ts", /^const VERSION = "[^"]*";/m, `const VERSION = "${v}";`);
sub("editors/neovim/lua/pi_lsp/version.lua", /^return '[^']*'/m, `return '${v}'`);
const cl = fs.readFileSync("CHANGELOG.md", "utf8");
if (!cl.includes(`## [${v}]`)) {
  const i = cl.indexOf("\n## [");
  const entry = `\n## [${v}] - unreleased\n\n- \n`;
  fs.writeFileSync("CHANGELOG.md", i < 0 ? cl + entry : cl.slice(0, i) + "\n" + entry.trimStart() + cl.slice(i));
}
JS
echo "version $v: VERSION, editors/vscode, editors/pi, editors/neovim, CHANGELOG.md" >&2
