package quality

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Probes of a real session: what a checkpoint of its summarized span must carry, derived
// by code from the span itself (no annotation), so they apply to any session file. The
// derivation is deliberately independent of the extractive summarizer: its own notion
// of harness text, requests, intents, todo lists and ids, stated here once.

// Probe is one check derived from a session's span.
type Probe struct {
	Name string
	// Want are the things a summary must carry, each a set of content words (or one
	// literal entity) and the share of them that must be found.
	Want []want
	// Sections are the summary's sections that count ("" = anywhere in the text, file
	// blocks included).
	Sections []string
}

type want struct {
	label string   // what it is, for the report
	words []string // content words, lower-case
	share float64  // the share of words to find for full credit
	exact string   // a literal entity instead of words
}

// ProbeResult is a probe scored on one summary.
type ProbeResult struct {
	Name   string
	Score  float64
	Missed []string
}

// SpanFacts is what the probes are derived from: the span's messages read once.
type SpanFacts struct {
	Requests   []string // real user requests, harness text left out, in order
	Modified   []string // paths written or edited
	OpenFail   string   // the target of the failure the span ends on ("" when none)
	Intent     string   // the assistant's last stated intent
	OpenTodos  []string // pending and in-progress items of the last todo list
	IDs        []string // ids the agent typed, newest last
	LastAction string   // the target of the last tool call
	Resolved   []string // targets of failures a later call of the same target moved past
	SpanWords  map[string]bool
}

var (
	probeHarnessRe = regexp.MustCompile(`(?s)<(system-reminder|command-name|command-message|command-args|local-command-stdout|local-command-stderr|task-notification|user-prompt-submit-hook)\b[^>]*>.*?</(system-reminder|command-name|command-message|command-args|local-command-stdout|local-command-stderr|task-notification|user-prompt-submit-hook)>`)
	probeCaveatRe  = regexp.MustCompile(`(?m)^(Caveat: The messages below were generated.*|\[Request interrupted by user[^\]]*\]|\[SYSTEM NOTIFICATION[^\n]*)$`)
	probeWordRe    = regexp.MustCompile(`[a-z0-9][a-z0-9_./-]*[a-z0-9]`)
	logLineRe      = regexp.MustCompile(`(?i)^\s*(\d{4}-\d\d-\d\d[ t]\d\d:\d\d|\[?\d\d:\d\d:\d\d|traceback|at [\w.$]+\(|file "|error[:\[]|warn(ing)?[:\[]|info[:\[]|debug[:\[]|\$ |>>> |[│├└]|\s{4}\d+→)`)
	intentRe       = regexp.MustCompile(`(?i)\b(i'll|i will|let me|i'm going to|i am going to|next,? i|now i(?:'ll| will| need to)|i need to|going to)\b`)
	sentenceEndRe  = regexp.MustCompile(`[.!?]\s+|\n+`)
	idPatterns     = []*regexp.Regexp{
		regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`),
		regexp.MustCompile(`\b(?:[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*|[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*)\b`), // hex with a letter and a digit
		regexp.MustCompile(`(?:^|\s)#\d{2,}\b`),
		regexp.MustCompile(`\bv\d+\.\d+(?:\.\d+)?(?:-[\w.]+)?\b`),
		regexp.MustCompile(`\b[a-z][a-z0-9]*(?:-[a-z0-9]+)*-[a-z0-9]{8,10}-[a-z0-9]{5}\b`), // a pod name
	}
)

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for that this with from have has had are was were will would should could can
	not but you your our out all any into onto then than them they their there here what when where which while who why how
	also just only some more most very much such each other about after before again been being both does doing done
	make made like want need needs let lets please okay yes sure now need it's its i'm i'll we'll don't can't use using
	file files code one two get got see look sure thanks thank well still even over under same into through` + " ") {
		stopWords[w] = true
	}
}

// contentWords are the words of s that carry meaning: four letters or more, not a
// function word; each once, in order.
func contentWords(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range probeWordRe.FindAllString(strings.ToLower(s), -1) {
		w = strings.Trim(w, "./-_")
		if len(w) < 4 || stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// userRequest is what a user message asks, or "" when it is no request: harness text
// only, a slash command, an acknowledgement, or mostly pasted output.
func userRequest(text string) string {
	t := probeHarnessRe.ReplaceAllString(text, "\n")
	t = probeCaveatRe.ReplaceAllString(t, "")
	t = strings.TrimSpace(t)
	if t == "" || strings.HasPrefix(t, "/") {
		return ""
	}
	lines := strings.Split(t, "\n")
	if len(lines) >= 5 {
		logs := 0
		for _, l := range lines {
			if logLineRe.MatchString(l) {
				logs++
			}
		}
		if logs*2 > len(lines) {
			return ""
		}
	}
	if len(contentWords(t)) < 3 {
		return ""
	}
	return t
}

// commandTarget is what a shell command acts on, for matching: its first significant
// word and the next word that is not an option (the runner's subcommand or target).
func commandTarget(cmd string) string {
	for _, line := range strings.Split(cmd, "\n") {
		for _, part := range regexp.MustCompile(`&&|\|\||;`).Split(line, -1) {
			f := strings.Fields(part)
			if len(f) == 0 || strings.HasPrefix(f[0], "#") {
				continue
			}
			switch {
			case f[0] == "cd" || f[0] == "export" || f[0] == "source" || f[0] == "sleep" || f[0] == "set" || f[0] == "echo" || f[0] == "." ||
				(f[0] == "mkdir" && len(f) > 1 && f[1] == "-p") || regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(f[0]):
				continue
			}
			head := strings.Trim(f[0], `"'(`)
			if i := strings.LastIndex(head, "/"); i >= 0 && i < len(head)-1 {
				head = head[i+1:]
			}
			for _, w := range f[1:] {
				if !strings.HasPrefix(w, "-") && regexp.MustCompile(`^[\w./:@-]+$`).MatchString(w) {
					return head + " " + w
				}
			}
			return head
		}
	}
	return ""
}

func argsOf(b session.Block) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(b.Arguments, &m)
	return m
}

func toolTarget(b session.Block) string {
	a := argsOf(b)
	s := func(k string) string { v, _ := a[k].(string); return v }
	switch b.Name {
	case "bash":
		return commandTarget(s("command"))
	case "read", "edit", "write":
		return s("path")
	}
	for _, k := range []string{"pattern", "query", "url", "description", "path", "file_path"} {
		if v := s(k); v != "" {
			return v
		}
	}
	return b.Name
}

// todoItems reads a todo tool's call: Claude Code's TodoWrite (a whole list), a Pi todo
// extension with a list of items (todos/items) each with a status. ok is false when the
// call is no todo list.
func todoItems(b session.Block) (items []string, ok bool) {
	a := argsOf(b)
	list, _ := a["todos"].([]any)
	if list == nil {
		list, _ = a["items"].([]any)
	}
	if list == nil || !strings.Contains(strings.ToLower(b.Name), "todo") {
		return nil, false
	}
	for _, e := range list {
		m, _ := e.(map[string]any)
		st, _ := m["status"].(string)
		c, _ := m["content"].(string)
		if c == "" {
			c, _ = m["text"].(string)
		}
		if st == "pending" || st == "in_progress" || st == "todo" || st == "in-progress" {
			items = append(items, c)
		}
	}
	return items, true
}

// DeriveFacts reads a span's messages.
func DeriveFacts(span []*session.Message) *SpanFacts {
	f := &SpanFacts{SpanWords: map[string]bool{}}
	type call struct {
		target string
		ok     bool
		done   bool
		look   bool // a read or a search: looking, which leaves a failure open
	}
	calls := map[string]*call{}
	var order []*call
	seenID := map[string]bool{}
	lastText := ""
	for _, m := range span {
		for _, w := range contentWords(m.Text("\n")) {
			f.SpanWords[w] = true
		}
		switch m.Role {
		case session.RoleUser:
			if r := userRequest(m.Text("\n")); r != "" {
				f.Requests = append(f.Requests, r)
			}
		case session.RoleAssistant:
			var text []string
			for _, b := range m.Blocks() {
				switch b.Type {
				case "text":
					text = append(text, b.Text)
				case "toolCall":
					t := toolTarget(b)
					n := strings.ToLower(b.Name)
					c := &call{target: t, look: n == "read" || n == "grep" || n == "glob" || n == "find" || n == "ls"}
					calls[b.ID] = c
					if _, todo := todoItems(b); !todo {
						order = append(order, c) // a todo list's update is no step of the work
					}
					if _, todo := todoItems(b); !todo {
						f.LastAction = t // a todo list's update is bookkeeping, probed as such
					}
					for _, w := range contentWords(t) {
						f.SpanWords[w] = true
					}
					if b.Name == "edit" || b.Name == "write" {
						f.Modified = addOnce(f.Modified, t)
					}
					if items, ok := todoItems(b); ok {
						f.OpenTodos = items
					}
					for _, v := range argStrings(b) {
						for _, re := range idPatterns {
							for _, id := range re.FindAllString(v, -1) {
								id = strings.TrimSpace(id)
								if len(id) >= 7 || strings.HasPrefix(id, "#") || strings.HasPrefix(id, "v") {
									if !seenID[id] && !strings.Contains(id, "/") {
										seenID[id] = true
										f.IDs = append(f.IDs, id)
									}
								}
							}
						}
					}
				}
			}
			if t := strings.TrimSpace(strings.Join(text, "\n")); t != "" {
				lastText = t
			}
		case session.RoleToolResult:
			if c := calls[m.ToolCallID]; c != nil {
				c.ok, c.done = !m.IsError, true
			}
		}
	}
	// The failure the span ends on: the last call with a result, reads and searches
	// after it aside, failed.
	for i := len(order) - 1; i >= 0; i-- {
		if order[i].done && !(order[i].look && order[i].ok) {
			if !order[i].ok {
				f.OpenFail = order[i].target
			}
			break
		}
	}
	// Failures moved past: the target failed once and its last call succeeded.
	failed, lastOK := map[string]bool{}, map[string]bool{}
	for _, c := range order {
		if !c.done || c.target == "" {
			continue
		}
		if !c.ok {
			failed[c.target] = true
		}
		lastOK[c.target] = c.ok
	}
	for _, c := range order {
		if failed[c.target] && lastOK[c.target] {
			f.Resolved = addOnce(f.Resolved, c.target)
		}
	}
	if lastText != "" {
		for _, s := range sentenceEndRe.Split(lastText, -1) {
			if intentRe.MatchString(s) && len(contentWords(s)) >= 2 {
				f.Intent = strings.TrimSpace(s)
			}
		}
	}
	if len(f.IDs) > 6 {
		f.IDs = f.IDs[len(f.IDs)-6:]
	}
	return f
}

func argStrings(b session.Block) []string {
	var out []string
	// content, oldText, newText and edits are file content the agent wrote, not ids it typed.
	wrote := func(k string) bool { return k == "content" || k == "oldText" || k == "newText" || k == "edits" }
	jsonLeaves(argsOf(b), wrote, func(leaf any) {
		if s, ok := leaf.(string); ok {
			out = append(out, s)
		}
	})
	return out
}

func addOnce(list []string, s string) []string {
	for _, e := range list {
		if e == s {
			return list
		}
	}
	return append(list, s)
}

// coverage is the share of words found in text (normalized).
func coverage(text string, words []string) float64 {
	if len(words) == 0 {
		return 1
	}
	have := map[string]bool{}
	for _, w := range contentWords(text) {
		have[w] = true
	}
	n := 0
	for _, w := range words {
		if have[w] || strings.Contains(text, w) {
			n++
		}
	}
	return float64(n) / float64(len(words))
}

func firstN(ws []string, n int) []string {
	if len(ws) > n {
		return ws[:n]
	}
	return ws
}

// credit is full at share, proportional below.
func credit(cov, share float64) float64 {
	if cov >= share {
		return 1
	}
	return cov / share
}

// ScoreProbes scores a summary on the facts of its span. Only the probes that apply
// are returned.
func ScoreProbes(f *SpanFacts, summary string) []ProbeResult {
	d := parseSummary(summary)
	all := strings.ToLower(summary)
	work := strings.ToLower(strings.Join(concat(d.sections["goal"], d.sections["original request"], d.sections["in progress"],
		d.sections["next steps"], d.sections["blocked"], d.sections["progress so far"], d.sections["context needed to continue"],
		d.sections["critical context"]), "\n"))
	var out []ProbeResult
	reqScore := func(r string) float64 { return credit(coverage(all, firstN(contentWords(r), 20)), 0.6) }
	if n := len(f.Requests); n > 0 {
		out = append(out, meanCredit("latest request", f.Requests[n-1:], reqScore))
		out = append(out, meanCredit("every request", f.Requests, reqScore))
	}
	if len(f.Modified) > 0 {
		out = append(out, found("files modified", f.Modified, func(p string) bool { return strings.Contains(summary, p) }))
	}
	if f.OpenFail != "" {
		out = append(out, found("open failure", []string{f.OpenFail}, func(fail string) bool {
			return strings.Contains(work, strings.ToLower(fail)) || coverage(work, contentWords(fail)) >= 0.99
		}))
	}
	if f.Intent != "" {
		out = append(out, meanCredit("last intent", []string{f.Intent}, func(i string) float64 {
			return credit(coverage(work, firstN(contentWords(i), 12)), 0.5)
		}))
	}
	if len(f.OpenTodos) > 0 {
		out = append(out, meanCredit("open todos", f.OpenTodos, func(t string) float64 {
			return credit(coverage(work, firstN(contentWords(t), 10)), 0.6)
		}))
	}
	if len(f.IDs) > 0 {
		out = append(out, found("ids typed", f.IDs, func(id string) bool {
			return strings.Contains(all, strings.ToLower(strings.TrimPrefix(id, " ")))
		}))
	}
	if f.LastAction != "" {
		out = append(out, found("last action", []string{f.LastAction}, func(a string) bool {
			return strings.Contains(all, strings.ToLower(a)) || coverage(all, contentWords(a)) >= 0.99
		}))
	}
	name, score, missed := nextStepProbe(d, f)
	return append(out, ProbeResult{Name: name, Score: score, Missed: missed})
}

// found is the probe of items the summary must have (has tells): the share it has, and
// the items it misses.
func found(name string, items []string, has func(string) bool) ProbeResult {
	n := 0
	var missed []string
	for _, it := range items {
		if has(it) {
			n++
		} else {
			missed = append(missed, it)
		}
	}
	return ProbeResult{Name: name, Score: float64(n) / float64(len(items)), Missed: missed}
}

// meanCredit is the probe of items the summary gets credit for (score tells): the mean
// credit, and the items not fully credited, clipped.
func meanCredit(name string, items []string, score func(string) float64) ProbeResult {
	var sum float64
	var missed []string
	for _, it := range items {
		s := score(it)
		sum += s
		if s < 1 {
			missed = append(missed, clipProbe(it))
		}
	}
	return ProbeResult{Name: name, Score: sum / float64(len(items)), Missed: missed}
}

func clipProbe(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		s = s[:90] + "…"
	}
	return s
}

var itemPrefixRe = regexp.MustCompile(`^\s*(?:[-*]|\d+[.)])\s+(?:\[[ xX]\]\s+)?`)

// nextStepProbe: a Next Step names something of the span and none repeats a Done item.
func nextStepProbe(d *summaryDoc, f *SpanFacts) (string, float64, []string) {
	var done []string
	for _, l := range d.sections["done"] {
		done = append(done, norm(itemPrefixRe.ReplaceAllString(l, "")))
	}
	named, repeats := false, ""
	for _, l := range d.sections["next steps"] {
		item := itemPrefixRe.ReplaceAllString(l, "")
		if isPlaceholder(l) {
			continue
		}
		for _, w := range contentWords(item) {
			if len(w) >= 5 && f.SpanWords[w] {
				named = true
			}
		}
		n := norm(item)
		for _, dn := range done {
			if dn != "" && (dn == n || (len(n) > 20 && strings.Contains(dn, n))) {
				repeats = item
			}
		}
	}
	switch {
	case repeats != "":
		return "next step", 0, []string{"repeats Done: " + clipProbe(repeats)}
	case !named:
		return "next step", 0, []string{"no next step names the work"}
	}
	return "next step", 1, nil
}

// Guards of a summary: clean output and no stale blocker. Each returns what it found.

var (
	harnessMarks = []string{"<system-reminder", "system-reminder>", "shell cwd was reset", "[system notification", "<command-name>",
		"<command-message>", "<local-command-stdout>", "caveat: the messages below", "command running in background with id", "<task-notification",
		"[request interrupted by user"}
	doubleBulletRe = regexp.MustCompile(`^(?:[-*]\s|\d+[.)]\s|\[[ xX]\]\s)`) // after an item's own marker
	boldLeadRe     = regexp.MustCompile(`^\*\*[^*]+\*\*:$|^\*\*[^*]+:\*\*$`)
	headingItemRe  = regexp.MustCompile(`^#{1,6}\s|^\|`)
	goalLogRe      = regexp.MustCompile(`(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|(?i:traceback \(most recent call last\))|(?m:^\s*at [\w.$]+\()|\b(?:INFO|WARN|ERROR|DEBUG)\b.*\b(?:INFO|WARN|ERROR|DEBUG)\b)`)
)

// CleanIssues lists what makes a summary's output unclean.
func CleanIssues(summary string) []string {
	d := parseSummary(summary)
	var out []string
	low := strings.ToLower(d.text)
	for _, h := range harnessMarks {
		if strings.Contains(low, h) {
			out = append(out, "harness text: "+h)
		}
	}
	for _, line := range strings.Split(d.text, "\n") {
		if n := len([]rune(line)); n > 400 {
			out = append(out, fmt.Sprintf("line of %d characters", n))
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			continue
		}
		if strings.Count(t, "`")%2 == 1 {
			out = append(out, "unbalanced backticks: "+clipProbe(t))
		}
		for _, sp := range spans(t) {
			if strings.Count(sp, "$(") > strings.Count(sp, ")") || strings.Count(sp, `"`)%2 == 1 || strings.Count(sp, "<<") > 0 && !strings.Contains(sp, "\n") && strings.HasSuffix(sp, "EOF") {
				out = append(out, "cut command: "+clipProbe(sp))
			}
		}
		if itemPrefixRe.MatchString(line) {
			item := strings.TrimSpace(itemPrefixRe.ReplaceAllString(line, ""))
			if doubleBulletRe.MatchString(item) {
				out = append(out, "double bullet: "+clipProbe(t))
			}
			if headingItemRe.MatchString(item) || boldLeadRe.MatchString(item) {
				out = append(out, "heading or table row as an item: "+clipProbe(item))
			}
		}
	}
	goal := strings.Join(concat(d.sections["goal"], d.sections["original request"]), "\n")
	if goalLogRe.MatchString(goal) {
		out = append(out, "pasted log as the goal")
	}
	return out
}

// spans are the contents of the backtick spans of one line.
func spans(line string) []string {
	var out []string
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts)-1; i += 2 {
		out = append(out, parts[i])
	}
	return out
}

// StaleIssues lists the Blocked items that name a failure the span moved past.
func StaleIssues(f *SpanFacts, summary string) []string {
	d := parseSummary(summary)
	var out []string
	for _, l := range d.sections["blocked"] {
		if isPlaceholder(l) {
			continue
		}
		low := strings.ToLower(l)
		for _, r := range f.Resolved {
			if r == f.OpenFail {
				continue // failed again at the end: open
			}
			if strings.Contains(low, strings.ToLower(r)) {
				out = append(out, fmt.Sprintf("%s (moved past) under Blocked", r))
			}
		}
	}
	return out
}
