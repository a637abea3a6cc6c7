package compaction

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Every item the extractive summarizer writes passes through tidyItem: one list marker
// (the section's own), no heading, table row, rule or bold lead-in as an item, no harness
// text, and a bounded line (a backtick span longer than maxSpan is shortened where no
// quote or $(…) is open, the line to about maxLine), so a checkpoint stays readable
// whatever the assistant's reports and the tools' output looked like.

const (
	pinnedPrefix = "Pinned: "
	maxSpan      = 200
	maxLine      = 320
)

var (
	// markerRe is a list marker or a checkbox at the start of an item.
	markerRe = regexp.MustCompile(`^(?:[-*+•]\s+|\d{1,3}[.)]\s+|\[[ xX]\]\s*)`)
	// notItemRe: a Markdown heading, a table row, a rule, a bold lead-in that only
	// introduces what follows ("**What's done:**"), a code fence.
	notItemRe = regexp.MustCompile(`^(?:#{1,6}\s|\||-{3,}\s*$|={3,}\s*$|` + "```" + `|\*\*[^*]{1,80}:\*\*\s*$|\*\*[^*]{1,80}\*\*:\s*$)`)
	// harnessTextRe is text a harness adds around the work, wherever it appears: in a user
	// message, an assistant's text or a tool's result.
	harnessTextRe = keyed(`(?i)</?system-reminder>|shell cwd was reset to|\[system notification|command running in background with id|<bash-(?:stdout|stderr|input)>|</?(?:command-name|command-message|command-args|local-command-stdout|local-command-stderr|task-notification)>|^caveat: the messages below were generated|\[request interrupted by user|no response requested\.?$|todos have been modified successfully|ensure that you continue to use the todo list`)
)

// isHarnessText reports whether s holds text a harness added.
func isHarnessText(s string) bool { return harnessTextRe.MatchString(s) }

// tidyItem is an item as it is written, or "" when it is no item.
func tidyItem(s string) string {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, pinnedPrefix) && !strings.Contains(t, "\n") {
		// The user's own text to keep verbatim, its spacing too (the audit looks for it
		// as written): never reflowed nor shortened.
		return t
	}
	s = strings.TrimSpace(oneLine(s))
	for i := 0; i < 3; i++ {
		t := markerRe.ReplaceAllString(s, "")
		if t == s {
			break
		}
		s = strings.TrimSpace(t)
	}
	if s == "" || notItemRe.MatchString(s) || isHarnessText(s) {
		return ""
	}
	if strings.HasPrefix(s, pinnedPrefix) {
		return s // the user's own text to keep verbatim: never shortened
	}
	return boundLine(s)
}

// boundLine shortens the backtick spans of s longer than maxSpan and then s itself.
func boundLine(s string) string {
	if strings.Count(s, "`")%2 == 1 {
		s = strings.ReplaceAll(s, "`", "'") // an unbalanced span: no span at all
	}
	if !strings.Contains(s, "`") || len(s) <= maxSpan {
		return clip(s, maxLine)
	}
	var b strings.Builder
	for i, part := range strings.Split(s, "`") {
		if i%2 == 1 {
			if len(part) > maxSpan {
				cut := safeCut(part, maxSpan*3/4)
				if cut == "" {
					if f := strings.Fields(part); len(f) > 0 && len(f[0]) <= maxSpan {
						cut = f[0]
					} else {
						cut = truncRunes(part, 40)
					}
				}
				b.WriteString("`" + cut + "` (…)")
				continue
			}
			b.WriteString("`" + part + "`")
			continue
		}
		b.WriteString(part)
	}
	return clip(b.String(), maxLine)
}

func truncRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// tidyList tidies every item of a list, dropping what is no item and what repeats.
func (a *analysis) tidyList(list []string) []string {
	var out uniqueList
	for _, it := range list {
		if a.stop() {
			break
		}
		out.add(tidyItem(it))
	}
	return out.items
}

// withoutDone is next without the steps that repeat a Done item.
func withoutDone(next, done []string) []string {
	doneKeys := map[string]bool{}
	for _, d := range done {
		doneKeys[itemKey(d)] = true
	}
	return withoutKeys(next, doneKeys)
}

// withoutKeys is list without the items whose itemKey is one of keys.
func withoutKeys(list []string, keys map[string]bool) []string {
	var out []string
	for _, e := range list {
		if !keys[itemKey(e)] {
			out = append(out, e)
		}
	}
	return out
}

func hasPrefixIn(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// statedRe marks a sentence in which the assistant says what it does next.
var statedRe = keyed(`(?i)^(?:now,? |next,? |first,? |then,? )?(?:let me|let's|i'll|i will|i'm going to|i am going to|i need to|we need to|going to)\b`)

// statedIntent is the assistant's last stated intent in its last text ("Let me check the
// connection settings"), without its lead-in and trailing colon.
func (a *analysis) statedIntent() string {
	text := a.lastText()
	if text == "" {
		return ""
	}
	pick := ""
	for _, s := range sentences(strings.ReplaceAll(text, "\n", " ")) {
		s = strings.TrimSpace(listItemRe.ReplaceAllString(s, ""))
		if statedRe.MatchString(s) && !strings.HasSuffix(s, "?") && len(significant(s)) >= 2 {
			pick = s
		}
	}
	if pick == "" {
		return ""
	}
	pick = strings.TrimRight(pick, ":. ")
	return clip(pick, 200)
}

// inferredGoal is a goal for a span with no request: the open item of the agent's todo
// list, else its latest stated intent; marked as inferred.
func (a *analysis) inferredGoal() string {
	if t := a.todosWith("in_progress"); len(t) > 0 {
		return "(inferred from the todo list, no request in this part) " + tidyItem(t[0])
	}
	if t := a.todosWith("pending"); len(t) > 0 {
		return "(inferred from the todo list, no request in this part) " + tidyItem(t[0])
	}
	for i := len(a.turns) - 1; i >= 0; i-- {
		for j := len(a.turns[i].texts) - 1; j >= 0; j-- {
			for _, s := range sentences(strings.ReplaceAll(a.turns[i].texts[j], "\n", " ")) {
				s = strings.TrimSpace(s)
				if statedRe.MatchString(s) && len(significant(s)) >= 3 {
					return "(inferred from the assistant's words, no request in this part) " + tidyItem(strings.TrimRight(s, ":. "))
				}
			}
		}
	}
	return ""
}

// willRe marks a sentence about what is still to happen.
var willRe = keyed(`(?i)\b(will|needs? to|has to|have to|must|should|is to be|are to be)\b`)

// mentioned reports whether a step (its first backtick span, else its text) is already
// in one of the items.
func mentioned(items []string, step string) bool {
	key := step
	if sp := spans(step); len(sp) > 0 {
		key = step[sp[0][0]:sp[0][1]]
	}
	for _, it := range items {
		if strings.Contains(it, key) {
			return true
		}
	}
	return false
}

// settleWith marks what the messages after the span (a split turn's prefix) settle: a
// failure whose target works there is resolved, and when the user speaks there the
// span's last question is answered.
func (a *analysis) settleWith(later *analysis) {
	for _, f := range a.actions {
		if !f.hasResult || f.ok || f.resolved {
			continue
		}
		for _, g := range later.actions {
			if !g.hasResult || !g.ok {
				continue
			}
			if (f.path != "" && g.path == f.path && g.kind == actModify) ||
				(f.command != "" && g.command != "" && (family(f.command) == family(g.command) || commandTarget(f.command) == commandTarget(g.command))) {
				f.resolved = true
				break
			}
		}
	}
	for _, t := range later.turns {
		if t.request != "" {
			a.answeredLater = true
			break
		}
	}
}

// reportText is an assistant's report without its structure: headings, table rows,
// rules and bold lead-ins left out, each list item a line of its own without its marker,
// so the statements read from it are the report's content.
func reportText(text string) string {
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		for i := 0; i < 3; i++ {
			u := strings.TrimSpace(markerRe.ReplaceAllString(t, ""))
			if u == t {
				break
			}
			t = u
		}
		if t == "" || notItemRe.MatchString(t) || isHarnessText(t) {
			keep = append(keep, "")
			continue
		}
		if !strings.HasSuffix(t, ".") && !strings.HasSuffix(t, ":") && !strings.HasSuffix(t, "?") && !strings.HasSuffix(t, "!") {
			t += "."
		}
		keep = append(keep, t)
	}
	return strings.Join(keep, "\n")
}

var itemNoiseRe = regexp.MustCompile("[`*_]|[.:;!]+$")

// itemKey is what makes two items say the same: the item in lower case, on one line,
// without emphasis and end punctuation.
func itemKey(s string) string {
	l := strings.ToLower(oneLine(s))
	if strings.ContainsAny(l, "`*_") || (l != "" && strings.IndexByte(".:;!", l[len(l)-1]) >= 0) {
		l = itemNoiseRe.ReplaceAllString(l, "") // only then can it match
	}
	return strings.TrimSpace(l)
}
