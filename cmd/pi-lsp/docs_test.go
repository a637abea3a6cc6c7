package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// The documentation a newcomer reads stays true to the tree: docs/ARCHITECTURE.md names
// every package under internal/ and tools/ with its invariant, and every relative link
// of README.md and docs/*.md reaches a file (and, with a #fragment into Markdown, a
// heading of it).

const repoRoot = "../.."

// TestArchitectureNamesEveryPackage: a package directory under internal/ or tools/ that
// no row of docs/ARCHITECTURE.md's tables names (`internal/x`, or `internal/x/*` for the
// packages below internal/x) fails, and so does a row without an invariant.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc := testfile.ReadRepo(t, "docs/ARCHITECTURE.md")
	named := map[string]bool{} // a package, or "dir/*"
	cell := regexp.MustCompile("`([a-z0-9_./*-]+)`")
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		for _, m := range cell.FindAllStringSubmatch(cells[0], -1) {
			if strings.HasPrefix(m[1], "internal/") || strings.HasPrefix(m[1], "tools/") {
				named[m[1]] = true
				if strings.TrimSpace(cells[len(cells)-1]) == "" {
					t.Errorf("docs/ARCHITECTURE.md: the row of %s states no invariant", m[1])
				}
			}
		}
	}
	var pkgs []string
	seen := map[string]bool{}
	for _, top := range []string{"internal", "tools"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			rel, _ := filepath.Rel(repoRoot, filepath.Dir(path))
			rel = filepath.ToSlash(rel)
			if !seen[rel] {
				seen[rel] = true
				pkgs = append(pkgs, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages under internal/ and tools/: %v", len(pkgs), pkgs)
	}
	for _, p := range pkgs {
		ok := named[p]
		for dir := p; !ok && strings.Contains(dir, "/"); {
			dir = dir[:strings.LastIndex(dir, "/")]
			ok = named[dir+"/*"]
		}
		if !ok {
			t.Errorf("docs/ARCHITECTURE.md does not name the package %s: add a row to its Packages table (what it holds, its invariant)", p)
		}
	}
}

// TestDocLinksResolve: every relative link and image of README.md and docs/*.md names a
// file of the repository, and a #fragment names a heading of the Markdown file it points
// to (GitHub's anchors). Links inside code are not links.
func TestDocLinksResolve(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{filepath.Join(repoRoot, "README.md")}, docs...)
	link := regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	checked := 0
	for _, doc := range docs {
		for _, target := range markdownLinks(t, doc, link) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, frag, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), filepath.FromSlash(file))
			}
			name, _ := filepath.Rel(repoRoot, doc)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: %v", name, target, err)
				continue
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !headingAnchors(t, path)[frag] {
				t.Errorf("%s: link %s: no heading with the anchor #%s", name, target, frag)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d relative links checked", checked)
	}
}

// markdownLinks are the link targets of the file at path, outside code blocks and
// code spans.
func markdownLinks(t *testing.T, path string, link *regexp.Regexp) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fence := false
	span := regexp.MustCompile("`[^`]*`")
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(span.ReplaceAllString(line, ""), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown file: lower
// case, punctuation dropped, spaces as hyphens, "-1", "-2"... for repeats.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestReadmeIsAFirstRead: the README stays what a user reads first, under 15 KB, with the
// two commands that set everything up on a fresh machine and the feature list others add
// to; the reference lives in docs/.
func TestReadmeIsAFirstRead(t *testing.T) {
	data := testfile.ReadRepo(t, "README.md")
	if len(data) >= 15*1024 {
		t.Errorf("README.md is %d bytes: keep it under 15 KB and move reference material to a page under docs/", len(data))
	}
	for _, want := range []string{"\n## Features\n", "\n## Install\n", "\nmake demo ", "\nmake test ", "\n## Documentation\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("README.md has no %q", want)
		}
	}
}
