package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Extractive is the embedded summarizer: offline, deterministic and fast. It fills every
// section of the checkpoint format from the conversation itself: the goal and
// constraints from what the user wrote, done work from tool calls and their results,
// errors seen, the last open request as the next step, and the file lists.
type Extractive struct{}

// Name implements Summarizer.
func (Extractive) Name() string { return "extractive" }

const (
	maxItemChars = 240
	maxDone      = 20
	maxListItems = 8
)

var (
	constraintRe = regexp.MustCompile(`(?i)\b(must|should|never|always|don't|do not|avoid|prefer|only|without|keep|make sure|need to|required?)\b`)
	decisionRe   = regexp.MustCompile(`(?i)\b(decided|decide|instead|because|chose|choose|will use|i'll use|we'll use|going with|switch(ed)? to|rather than|the fix is|the cause is)\b`)
	// A sentence ends at . ! or ? followed by a space or the end, or at a newline, so
	// identifiers such as middleware.Chain stay whole.
	sentenceEndRe = regexp.MustCompile(`[.!?]+(\s+|$)|\n+`)
	nextStepRe    = regexp.MustCompile(`(?i)\b(next|then|remaining|todo|still need|i can|we can|will)\b`)
)

// Summarize implements Summarizer.
func (Extractive) Summarize(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	f := extractFacts(req.Messages)
	var text string
	switch req.Kind {
	case KindTurnPrefix:
		text = f.turnPrefix()
	case KindBranch:
		text = f.checkpoint(req, false)
	default:
		text = f.checkpoint(req, true)
	}
	if req.Progress != nil {
		req.Progress(Progress{Tokens: (jsjson.Len16(text) + 3) / 4})
	}
	return Result{Text: text, Model: "extractive"}, nil
}

type facts struct {
	userTexts   []string
	done        []string
	inProgress  []string
	blocked     []string
	decisions   []string
	errors      []string
	lastUser    string
	lastAnswer  string
	answered    bool // the last user message got a complete assistant reply
	notes       []string
	constraints []string
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if jsjson.Len16(s) > maxItemChars {
		s = strings.TrimSpace(jsjson.Slice16(s, maxItemChars-1)) + "…"
	}
	return s
}

func addUnique(list []string, item string) []string {
	if item == "" {
		return list
	}
	for _, x := range list {
		if x == item {
			return list
		}
	}
	return append(list, item)
}

func argString(b session.Block, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(b.Arguments, &m) != nil {
		return ""
	}
	var s string
	_ = json.Unmarshal(m[key], &s)
	return s
}

func describeCall(b session.Block) string {
	switch b.Name {
	case "read":
		return "Read `" + argString(b, "path") + "`"
	case "write":
		return "Wrote `" + argString(b, "path") + "`"
	case "edit":
		return "Edited `" + argString(b, "path") + "`"
	case "bash":
		return "Ran `" + oneLine(argString(b, "command")) + "`"
	}
	args := formatArgs(b)
	return "Called " + b.Name + "(" + oneLine(args) + ")"
}

func extractFacts(messages []*session.Message) *facts {
	f := &facts{}
	pending := map[string]string{} // toolCallId → description
	var order []string
	for _, m := range messages {
		switch m.Role {
		case session.RoleCustom:
			// An extension's message: context for the model, not a request of the user.
			if text := strings.TrimSpace(m.Text("\n")); text != "" {
				f.notes = addUnique(f.notes, oneLine(text))
			}
		case session.RoleUser:
			text := strings.TrimSpace(m.Text("\n"))
			if text == "" {
				continue
			}
			f.userTexts = append(f.userTexts, text)
			f.lastUser, f.answered = text, false
			for _, s := range sentences(text) {
				if constraintRe.MatchString(s) {
					f.constraints = addUnique(f.constraints, oneLine(s))
				}
			}
		case session.RoleBashExecution:
			item := "Ran `" + oneLine(m.Bash().Command) + "`"
			if x := m.Bash().ExitCode; x != nil && *x != 0 {
				f.blocked = addUnique(f.blocked, item+fmt.Sprintf(" (exit code %s)", jsjson.FormatNumber(*x)))
			} else {
				f.done = addUnique(f.done, item)
			}
		case session.RoleAssistant:
			// An errored or aborted reply leaves the request open.
			if m.StopReason != "error" && m.StopReason != "aborted" {
				f.answered = true
			}
			if m.StopReason == "error" && m.ErrorMessage() != "" {
				f.errors = addUnique(f.errors, oneLine(m.ErrorMessage()))
			}
			for _, b := range m.Blocks() {
				switch b.Type {
				case "text":
					if t := strings.TrimSpace(b.Text); t != "" {
						f.lastAnswer = t
						for _, s := range sentences(t) {
							if decisionRe.MatchString(s) {
								f.decisions = addUnique(f.decisions, oneLine(s))
							}
						}
					}
				case "toolCall":
					pending[b.ID] = describeCall(b)
					order = append(order, b.ID)
				}
			}
		case session.RoleToolResult:
			desc, ok := pending[m.ToolCallID]
			if !ok {
				desc = "Called " + m.ToolName
			}
			delete(pending, m.ToolCallID)
			if m.IsError {
				first := oneLine(strings.SplitN(strings.TrimSpace(m.Text("")), "\n", 2)[0])
				f.blocked = addUnique(f.blocked, desc+" failed: "+first)
				f.errors = addUnique(f.errors, first)
			} else {
				f.done = addUnique(f.done, desc)
				// A later success of the same action resolves an earlier failure.
				f.blocked = removePrefix(f.blocked, desc+" failed: ")
			}
		case session.RoleBranchSummary, session.RoleCompactionSummary:
			f.userTexts = append(f.userTexts, "")
		}
	}
	for _, id := range order {
		if d, ok := pending[id]; ok {
			f.inProgress = addUnique(f.inProgress, d+" (no result yet)")
		}
	}
	return f
}

// sentences splits text into trimmed sentences (keeping their final punctuation).
func sentences(text string) []string {
	var out []string
	last := 0
	for _, loc := range sentenceEndRe.FindAllStringIndex(text, -1) {
		if s := strings.TrimSpace(text[last:loc[1]]); s != "" {
			out = append(out, s)
		}
		last = loc[1]
	}
	if s := strings.TrimSpace(text[last:]); s != "" {
		out = append(out, s)
	}
	return out
}

func removePrefix(list []string, prefix string) []string {
	out := list[:0:0]
	for _, x := range list {
		if !strings.HasPrefix(x, prefix) {
			out = append(out, x)
		}
	}
	return out
}

func (f *facts) goal() string {
	var goals []string
	for _, t := range f.userTexts {
		if t == "" || strings.HasPrefix(t, "/") {
			continue
		}
		goals = addUnique(goals, oneLine(t))
		if len(goals) == 3 {
			break
		}
	}
	switch len(goals) {
	case 0:
		return "(no user request in this part of the conversation)"
	case 1:
		return goals[0]
	}
	return "- " + strings.Join(goals, "\n- ")
}

// previousSections splits an earlier checkpoint into its "## " sections.
func previousSections(summary string) map[string][]string {
	out := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(summary, "\n") {
		if strings.HasPrefix(line, "## ") {
			cur = strings.TrimSpace(line[3:])
			continue
		}
		if strings.HasPrefix(line, "### ") {
			cur = strings.TrimSpace(line[4:])
			continue
		}
		if strings.HasPrefix(line, "<read-files>") || strings.HasPrefix(line, "<modified-files>") || line == "---" {
			cur = ""
			continue
		}
		if cur != "" && strings.TrimSpace(line) != "" && strings.TrimSpace(line) != "(none)" {
			out[cur] = append(out[cur], line)
		}
	}
	return out
}

func bullets(items []string, prefix string, limit int) string {
	if len(items) == 0 {
		return "(none)"
	}
	if limit > 0 && len(items) > limit {
		items = items[len(items)-limit:]
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(prefix + it)
	}
	return b.String()
}

func merge(prev []string, prefix string, items []string) []string {
	var out []string
	for _, p := range prev {
		out = addUnique(out, strings.TrimPrefix(strings.TrimSpace(p), prefix))
	}
	for _, it := range items {
		out = addUnique(out, it)
	}
	return out
}

func focusFirst(items []string, focus string) []string {
	words := strings.Fields(strings.ToLower(focus))
	if len(words) == 0 {
		return items
	}
	var hit, rest []string
	for _, it := range items {
		l := strings.ToLower(it)
		matched := false
		for _, w := range words {
			if len(w) > 3 && strings.Contains(l, w) {
				matched = true
				break
			}
		}
		if matched {
			hit = append(hit, it)
		} else {
			rest = append(rest, it)
		}
	}
	return append(rest, hit...) // bullets keeps the tail, so focused items survive a cut
}

func (f *facts) checkpoint(req Request, critical bool) string {
	prev := previousSections(req.PreviousSummary)
	goal := f.goal()
	if g := prev["Goal"]; len(g) > 0 {
		goal = strings.Join(g, "\n")
	}
	constraints := merge(prev["Constraints & Preferences"], "- ", f.constraints)
	for _, p := range req.Pinned {
		constraints = addUnique(constraints, "Pinned: \""+strings.ReplaceAll(p, "\n", " ")+"\"")
	}
	done := focusFirst(merge(prev["Done"], "- [x] ", f.done), req.CustomInstructions)
	var inProgress []string
	for _, p := range prev["In Progress"] {
		item := strings.TrimPrefix(strings.TrimSpace(p), "- [ ] ")
		if !contains(done, item) {
			inProgress = addUnique(inProgress, item)
		}
	}
	for _, it := range f.inProgress {
		inProgress = addUnique(inProgress, it)
	}
	if f.lastUser != "" && !f.answered {
		inProgress = addUnique(inProgress, oneLine(f.lastUser))
	}
	blocked := merge(prev["Blocked"], "- ", f.blocked)
	decisions := merge(prev["Key Decisions"], "- ", f.decisions)

	var next []string
	switch {
	case f.lastUser != "" && !f.answered:
		next = append(next, oneLine(f.lastUser))
	case f.lastAnswer != "":
		for _, s := range sentences(f.lastAnswer) {
			if nextStepRe.MatchString(s) {
				next = addUnique(next, oneLine(s))
			}
		}
	}
	for _, it := range inProgress {
		if !contains(next, it) {
			next = addUnique(next, "Finish: "+it)
		}
	}
	if len(next) == 0 {
		for _, p := range prev["Next Steps"] {
			next = addUnique(next, strings.TrimSpace(p[strings.IndexAny(p, ".")+1:]))
		}
	}
	if len(next) == 0 {
		if f.lastUser != "" {
			next = []string{"Continue from the kept messages (last request: " + oneLine(f.lastUser) + ")"}
		} else {
			next = []string{"Continue from the kept messages"}
		}
	}

	var b strings.Builder
	b.WriteString("## Goal\n" + goal + "\n\n")
	b.WriteString("## Constraints & Preferences\n" + bullets(constraints, "- ", maxListItems) + "\n\n")
	b.WriteString("## Progress\n### Done\n" + bullets(done, "- [x] ", maxDone) + "\n\n")
	b.WriteString("### In Progress\n" + bullets(inProgress, "- [ ] ", maxListItems) + "\n\n")
	b.WriteString("### Blocked\n" + bullets(blocked, "- ", maxListItems) + "\n\n")
	b.WriteString("## Key Decisions\n" + bullets(decisions, "- ", maxListItems) + "\n\n")
	b.WriteString("## Next Steps\n")
	for i, n := range next {
		if i == maxListItems {
			break
		}
		fmt.Fprintf(&b, "%d. %s\n", i+1, n)
	}
	if critical {
		crit := merge(prev["Critical Context"], "- ", nil)
		for _, n := range f.notes {
			crit = addUnique(crit, "Context note: "+n)
		}
		for _, e := range f.errors {
			crit = addUnique(crit, "Error seen: "+e)
		}
		if n := len(req.ModifiedFiles); n > 0 {
			crit = addUnique(crit, fmt.Sprintf("Files modified so far: %s", strings.Join(limitList(req.ModifiedFiles, 10), ", ")))
		}
		// Last, so the list's bound (it keeps the newest items) never drops it.
		if req.CustomInstructions != "" {
			crit = addUnique(crit, "Requested focus: "+oneLine(req.CustomInstructions))
		}
		b.WriteString("\n## Critical Context\n" + bullets(crit, "- ", maxListItems+2))
	}
	return strings.TrimRight(b.String(), "\n")
}

func limitList(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	out := append([]string(nil), l[:n]...)
	return append(out, fmt.Sprintf("(+%d more)", len(l)-n))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (f *facts) turnPrefix() string {
	req := "(not visible in the kept part)"
	for _, t := range f.userTexts {
		if t != "" {
			req = oneLine(t)
			break
		}
	}
	var b strings.Builder
	b.WriteString("## Original Request\n" + req + "\n\n")
	b.WriteString("## Progress So Far\n" + bullets(f.done, "- ", maxDone) + "\n\n")
	ctxItems := append([]string(nil), f.decisions...)
	for _, e := range f.errors {
		ctxItems = addUnique(ctxItems, "Error seen: "+e)
	}
	if f.lastAnswer != "" {
		ctxItems = addUnique(ctxItems, "Last assistant note: "+oneLine(f.lastAnswer))
	}
	b.WriteString("## Context Needed to Continue\n" + bullets(ctxItems, "- ", maxListItems))
	return b.String()
}
