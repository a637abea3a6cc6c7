package rewind

import (
	"fmt"
	"strings"
)

// UnifiedDiff is a unified diff (3 lines of context) from old to new of a file named
// name; "" when they are equal. A side that does not exist is /dev/null.
func UnifiedDiff(name string, oldExists bool, old []byte, newExists bool, nw []byte) string {
	if oldExists == newExists && string(old) == string(nw) {
		return ""
	}
	a, b := splitLines(string(old)), splitLines(string(nw))
	from, to := "a/"+name, "b/"+name
	if !oldExists {
		from = "/dev/null"
	}
	if !newExists {
		to = "/dev/null"
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	ops := diffLines(a, b)
	const ctx = 3
	// Group the edit script into hunks with ctx lines around each change.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(run, end+ctx)
				break
			}
			end = run
		}
		oldStart, newStart := ops[start].a, ops[start].b
		oldN, newN := 0, 0
		var body strings.Builder
		for _, o := range ops[start:end] {
			line := o.text
			switch o.kind {
			case ' ':
				oldN++
				newN++
			case '-':
				oldN++
			case '+':
				newN++
			}
			body.WriteByte(o.kind)
			body.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				body.WriteString("\n\\ No newline at end of file\n")
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n%s", hunkRange(oldStart, oldN), hunkRange(newStart, newN), body.String())
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

type lineOp struct {
	kind byte // ' ', '-', '+'
	text string
	a, b int // lines of old and new before this one
}

// diffLines is a shortest edit script by the longest common subsequence; past a size
// where that costs too much, the whole old text is replaced by the new.
func diffLines(a, b []string) []lineOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var ops []lineOp
	ai, bi := 0, 0
	emit := func(k byte, t string) {
		ops = append(ops, lineOp{k, t, ai, bi})
		switch k {
		case ' ':
			ai++
			bi++
		case '-':
			ai++
		case '+':
			bi++
		}
	}
	for _, l := range a[:pre] {
		emit(' ', l)
	}
	if len(ma)*len(mb) > 4_000_000 {
		for _, l := range ma {
			emit('-', l)
		}
		for _, l := range mb {
			emit('+', l)
		}
	} else {
		n, m := len(ma), len(mb)
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				emit(' ', ma[i])
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				emit('-', ma[i])
				i++
			default:
				emit('+', mb[j])
				j++
			}
		}
	}
	for _, l := range a[len(a)-suf:] {
		emit(' ', l)
	}
	return ops
}
