package rewind

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Pi 1.6.0's edit tool (core/tools/edit.ts, edit-diff.ts) strips a BOM, matches every
// oldText against the same LF-normalized original (exactly, else fuzzily), refuses an
// empty, missing, repeated or overlapping oldText and an edit that changes nothing,
// and splices the replacements back into the original. The exact path is replayed
// here; a fuzzy match or a file with CR line ends rewrote bytes the session does not
// hold, so its result is unknown.

const bom = "\uFEFF"

var (
	errUnknown  = errors.New("the edit matched its text only loosely (Pi's fuzzy match) or in a file with CR line ends: the bytes it replaced are not in the session")
	errRefused  = errors.New("Pi would have refused this edit on this content")
	errNotThere = errors.New("the text the edit left is not where it left it")
)

func normalizeToLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func splitBOM(s string) (string, string) {
	if strings.HasPrefix(s, bom) {
		return bom, s[len(bom):]
	}
	return "", s
}

// applyEdits is what Pi's edit tool writes when it applies edits to a file holding
// raw, when it matches every oldText exactly.
func applyEdits(raw string, edits []Edit) (string, error) {
	b, content := splitBOM(raw)
	if strings.Contains(content, "\r") {
		return "", errUnknown
	}
	type match struct {
		at, n int
		text  string
	}
	ms := make([]match, 0, len(edits))
	for _, e := range edits {
		old, nw := normalizeToLF(e.OldText), normalizeToLF(e.NewText)
		if old == "" {
			return "", errRefused
		}
		at := strings.Index(content, old)
		if at < 0 {
			return "", errUnknown
		}
		ms = append(ms, match{at, len(old), nw})
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].at < ms[j].at })
	for i := 1; i < len(ms); i++ {
		if ms[i-1].at+ms[i-1].n > ms[i].at {
			return "", errRefused
		}
	}
	out := content
	for i := len(ms) - 1; i >= 0; i-- {
		out = out[:ms[i].at] + ms[i].text + out[ms[i].at+ms[i].n:]
	}
	if out == content {
		return "", errRefused
	}
	return b + out, nil
}

// undoEdit is what the file held before ch when it holds after: the edit's patch
// reversed where its hunks say (every line the edit left, context included, must be
// there exactly), checked by applying the edit again to the result.
func undoEdit(after string, ch Change) (string, error) {
	b, content := splitBOM(after)
	if strings.Contains(content, "\r") {
		return "", errUnknown
	}
	var before string
	var err error
	if ch.Patch != "" {
		before, err = reversePatch(content, ch.Patch)
	} else {
		before, err = reverseByText(content, ch.Edits)
	}
	if err != nil {
		return "", err
	}
	before = b + before
	if again, err := applyEdits(before, ch.Edits); err != nil || again != after {
		return "", errNotThere
	}
	// Pi refuses an oldText found more than once: a reconstruction where one is
	// repeated is not the file the edit was made on.
	_, norm := splitBOM(before)
	for _, e := range ch.Edits {
		if strings.Count(norm, normalizeToLF(e.OldText)) != 1 {
			return "", errNotThere
		}
	}
	return before, nil
}

// reverseByText undoes a single edit without a patch: its newText must be in the file
// once.
func reverseByText(content string, edits []Edit) (string, error) {
	if len(edits) != 1 {
		return "", fmt.Errorf("%w (its result carries no patch)", errNotThere)
	}
	nw := normalizeToLF(edits[0].NewText)
	if nw == "" || strings.Count(content, nw) != 1 {
		return "", fmt.Errorf("%w (its result carries no patch)", errNotThere)
	}
	return strings.Replace(content, nw, normalizeToLF(edits[0].OldText), 1), nil
}

type hunk struct {
	newStart, newCount int
	oldLines, newLines []string // with their line ends
}

// reversePatch applies a unified patch (jsdiff's, as Pi's edit result carries it)
// backwards to content.
func reversePatch(content, patch string) (string, error) {
	hunks, err := parsePatch(patch)
	if err != nil {
		return "", err
	}
	lines := splitLines(content)
	for i := len(hunks) - 1; i >= 0; i-- {
		h := hunks[i]
		at := h.newStart - 1
		if h.newCount == 0 {
			at = h.newStart // jsdiff names the line before an empty range
		}
		if at < 0 || at+len(h.newLines) > len(lines) {
			return "", errNotThere
		}
		for j, l := range h.newLines {
			if lines[at+j] != l {
				return "", errNotThere
			}
		}
		rest := append([]string{}, lines[at+len(h.newLines):]...)
		lines = append(append(lines[:at], h.oldLines...), rest...)
	}
	return strings.Join(lines, ""), nil
}

// splitLines splits s after each "\n" (the last line may have none).
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func parsePatch(patch string) ([]hunk, error) {
	var hunks []hunk
	var cur *hunk
	// last is the side list of the line before a "\ No newline" marker.
	var last []*[]string
	bad := fmt.Errorf("%w (its patch cannot be read)", errNotThere)
	for _, l := range strings.Split(patch, "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			f := strings.Fields(l)
			if len(f) < 3 || !strings.HasPrefix(f[2], "+") {
				return nil, bad
			}
			start, count, ok := rangeOf(f[2][1:])
			if !ok {
				return nil, bad
			}
			hunks = append(hunks, hunk{newStart: start, newCount: count})
			cur = &hunks[len(hunks)-1]
			last = nil
		case cur == nil:
			// ===, ---, +++ headers
		case strings.HasPrefix(l, `\`):
			for _, side := range last {
				if n := len(*side); n > 0 {
					(*side)[n-1] = strings.TrimSuffix((*side)[n-1], "\n")
				}
			}
		case strings.HasPrefix(l, " "):
			cur.oldLines = append(cur.oldLines, l[1:]+"\n")
			cur.newLines = append(cur.newLines, l[1:]+"\n")
			last = []*[]string{&cur.oldLines, &cur.newLines}
		case strings.HasPrefix(l, "-"):
			cur.oldLines = append(cur.oldLines, l[1:]+"\n")
			last = []*[]string{&cur.oldLines}
		case strings.HasPrefix(l, "+"):
			cur.newLines = append(cur.newLines, l[1:]+"\n")
			last = []*[]string{&cur.newLines}
		}
	}
	for _, h := range hunks {
		if len(h.newLines) != h.newCount {
			return nil, bad
		}
	}
	if len(hunks) == 0 {
		return nil, bad
	}
	return hunks, nil
}

// rangeOf reads "start,count" (count 1 when absent).
func rangeOf(s string) (int, int, bool) {
	a, b, has := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil {
		return 0, 0, false
	}
	count := 1
	if has {
		if count, err = strconv.Atoi(b); err != nil {
			return 0, 0, false
		}
	}
	return start, count, true
}
