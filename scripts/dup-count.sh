#!/usr/bin/env bash
# Counts the real duplication in the tree: the pairs `duplicates` lists once the lines that
# are alike by nature are blanked out of a copy of the tree (line numbers kept):
#   - preambles: Go package clauses and import blocks; JS/TS import statements, a
#     multi-line `import { a, b } from "…"` included;
#   - generated code: a file whose first lines say "Code generated" or "do not edit", and
#     the BEGIN GENERATED … END GENERATED part of a file.
# Every row that remains counts as real, boilerplate and shape rows included. A middle
# count blanks only the lines inside Go `import (…)` blocks: `duplicates` passes over
# import statements (its README says so) but reads the lines of a Go import block as code,
# so two files importing the same six packages in a row make a row.
#
#   scripts/dup-count.sh            # the counts, then the real rows
#   DUP_SECONDS=120 DUP_MOST=200    # passed to duplicates (defaults shown)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
command -v duplicates >/dev/null || { echo "dup-count: no duplicates command on PATH" >&2; exit 2; }
SECONDS_="${DUP_SECONDS:-120}"
MOST="${DUP_MOST:-200}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

raw="$(duplicates --seconds "$SECONDS_" --most "$MOST" | head -1)"
BLANK='
import os, re, sys

dest, only_go_imports = sys.argv[1], sys.argv[2] == "go-imports"

def blank(path, lines):
    """Lines of path with its preamble and generated lines made empty (with
    only_go_imports, the lines of its Go import blocks only)."""
    drop = set()
    if only_go_imports:
        if not path.endswith(".go"):
            return lines
        block = False
        for i, l in enumerate(lines):
            t = l.strip()
            if block:
                drop.add(i)
                block = not t.startswith(")")
            elif re.match(r"import\s*\($", t):
                drop.add(i)
                block = True
        return ["" if i in drop else l for i, l in enumerate(lines)]
    if re.search(r"Code generated|do not edit", "\n".join(lines[:5]), re.I):
        return [""] * len(lines)
    inside = False
    for i, l in enumerate(lines):
        if "BEGIN GENERATED" in l:
            inside = True
        if inside:
            drop.add(i)
        if "END GENERATED" in l:
            inside = False
    s = [l.strip() for l in lines]
    block = False
    if path.endswith(".go"):
        for i, l in enumerate(s):
            if block:
                drop.add(i)
                block = not l.startswith(")")
            elif l.startswith("package ") or re.match(r"import\s+(\w+\s+|[._]\s+)?\"", l):
                drop.add(i)
            elif re.match(r"import\s*\($", l):
                drop.add(i)
                block = True
    elif re.search(r"\.(m?js|cjs|ts|tsx)$", path):
        for i, l in enumerate(s):
            if block:
                drop.add(i)
                block = not re.search(r"\bfrom\s+[\"\x27]", l)
            elif re.match(r"(import|export)\b.*\bfrom\s+[\"\x27]", l) or re.match(r"import\s+[\"\x27]", l):
                drop.add(i)
            elif re.match(r"(import|export)(\s+type)?\s*\{[^}]*$", l):
                drop.add(i)
                block = True
    return ["" if i in drop else l for i, l in enumerate(lines)]

for path in sys.stdin.buffer.read().decode().split("\0"):
    if not path or not os.path.isfile(path) or os.path.islink(path):
        continue
    with open(path, "rb") as f:
        data = f.read()
    out = os.path.join(dest, path)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if b"\0" in data:
        continue
    text = data.decode("utf-8", "replace")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(blank(path, text.split("\n"))))
'
files() { git ls-files -z --cached --others --exclude-standard; }
files | python3 -c "$BLANK" "$TMP/tree" all
files | python3 -c "$BLANK" "$TMP/imports" go-imports
imports="$(duplicates --repo "$TMP/imports" --seconds "$SECONDS_" --most "$MOST" | head -1)"
blanked="$(duplicates --repo "$TMP/tree" --seconds "$SECONDS_" --most "$MOST")"
echo "all:      $raw"
echo "imports:  $imports (Go import blocks passed over)"
echo "blanked:  $(head -1 <<<"$blanked")"
real="$(tail -n +2 <<<"$blanked" | grep -c '^D[0-9]' || true)"
echo "real:     $real pairs"
tail -n +2 <<<"$blanked"
