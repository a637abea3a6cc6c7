package compaction

import (
	"context"
	"fmt"
	"iter"
	"regexp"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Extractive is the embedded summarizer: offline, deterministic and fast. It reads the
// conversation as turns (a user request and the work that answered it) and fills Pi's
// checkpoint from what happened: the goal and the latest request, constraints wherever
// the user stated them, work done with its outcome (a check that passed, the URL a
// command printed, a file changed and why), work still in progress, failures still open
// (a failure fixed later is not one), the assistant's own stated plan as the next steps,
// and the file lists. Harness text around what the user wrote is left out, and entities
// (paths, commands, backtick spans) are never cut.
type Extractive struct{}

// Name implements Summarizer.
func (Extractive) Name() string { return "extractive" }

const (
	maxDone      = 16
	maxListItems = 8
	maxNext      = 6
)

// Summarize implements Summarizer.
func (Extractive) Summarize(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	a := analyze(ctx, req.Messages, req.Kind == KindBranch)
	if len(req.Later) > 0 && !a.stopped {
		a.settleWith(analyze(ctx, req.Later, false))
	}
	var text string
	switch {
	case a.stopped:
	case req.Kind == KindTurnPrefix:
		text = a.turnPrefix(req)
	case req.Kind == KindBranch:
		text = a.checkpoint(req, false)
	default:
		text = a.checkpoint(req, true)
	}
	if a.stopped {
		// Cancelled while at work: what was built so far is cut short, and a cancelled
		// job writes nothing.
		return Result{}, ctx.Err()
	}
	if req.Progress != nil {
		req.Progress(Progress{Tokens: (jsjson.Len16(text) + 3) / 4})
	}
	return Result{Text: text, Model: "extractive"}, nil
}

// turn is a user message and what followed it until the next one.
type turn struct {
	request string // what the user wrote, harness text left out
	ack     bool   // an acknowledgement ("ok", "go ahead"): the request goes on
	// answer is the user's reply to a question the assistant asked ("Shall I deploy?"):
	// a decision and instructions, not a new request.
	answer   string
	question string // the question answered
	actions  []*action
	texts    []string // the assistant's texts, in order
	final    string   // the assistant's text after the turn's last tool call ("" if none)
	errored  string   // the error of a reply that failed and was not followed by another
	aborted  bool     // the user interrupted the last reply
	userOnly bool     // no assistant message followed (the span ends on it)
}

// analysis is the conversation read as turns.
type analysis struct {
	branch  bool
	turns   []*turn
	actions []*action
	notes   []string
	// earlier are the sections of summaries among the messages that are earlier parts of
	// the same work: the summaries a branch holds.
	earlier []map[string][]string
	// sideBranches are, in a compacted span, the branch summaries it holds: explorations
	// left before coming back, context rather than the work's own state.
	sideBranches []map[string][]string
	todos        []todoItem // the agent's todo list as its todo tools left it
	continued    bool       // the span holds another harness's summary of earlier work
	// answeredLater: the user spoke again after the span, in the turn prefix of a split
	// turn: the span's last question is answered and its last reply's words are not
	// the open state any more.
	answeredLater bool

	// firstTouch is, for each path, the index of the first action on it (see
	// touchedBefore).
	firstTouch map[string]int

	// ctx is the summary's context, polled by stop; stopped says it was found done.
	ctx     context.Context
	polls   int
	stopped bool
}

// stopEvery is how many items (a message, a turn, an action, a list item: microseconds
// of work each) the long loops go through between two looks at the context.
const stopEvery = 16

// stop reports whether the summary's context is done, looking at it every stopEvery
// calls, so that a cancelled compaction gives the CPU back within a few milliseconds
// rather than after seconds of regexps on a big session. Every long loop ends at its
// next item once it is; what was built then is cut short and Summarize discards it.
func (a *analysis) stop() bool {
	if a.stopped || a.ctx == nil {
		return a.stopped
	}
	a.polls++
	if a.polls%stopEvery == 0 && a.ctx.Err() != nil {
		a.stopped = true
	}
	return a.stopped
}

// eachAction yields the span's actions with their index, in order, until the summary's
// context is done (stop looked at before each one).
func (a *analysis) eachAction() iter.Seq2[int, *action] {
	return func(yield func(int, *action) bool) {
		for i, act := range a.actions {
			if a.stop() || !yield(i, act) {
				return
			}
		}
	}
}

// newest is the last n items of list (all of it when it has no more).
func newest[T any](list []T, n int) []T {
	if len(list) > n {
		return list[len(list)-n:]
	}
	return list
}

// analyze reads messages as turns; it ends early, a.stopped set, when ctx is done.
func analyze(ctx context.Context, messages []*session.Message, branch bool) *analysis {
	a := &analysis{branch: branch, ctx: ctx}
	byID := map[string]*action{}
	cur := func() *turn {
		if len(a.turns) == 0 {
			a.turns = append(a.turns, &turn{ack: true})
		}
		return a.turns[len(a.turns)-1]
	}
	for _, m := range messages {
		if a.stop() {
			return a
		}
		switch m.Role {
		case session.RoleUser:
			raw := strings.TrimSpace(m.Text("\n"))
			if interruptRe.MatchString(raw) {
				// The harness's note that the user stopped the reply: an interruption,
				// not a request.
				if t := a.lastTurn(); t != nil && !t.userOnly {
					t.aborted = true
				}
				continue
			}
			if continuedRe.MatchString(raw) {
				a.continued = true
				continue
			}
			clean, _ := cleanUserText(raw)
			if clean == "" || strings.HasPrefix(clean, "/") {
				continue
			}
			t := &turn{request: clean, ack: ackRe.MatchString(clean), userOnly: true}
			if prev := a.lastTurn(); prev != nil && !t.ack {
				if q := openQuestion(prev.final); q != "" && len(clean) <= 400 {
					t.answer, t.question = clean, q
				}
			}
			a.turns = append(a.turns, t)
		case session.RoleCustom:
			if t := strings.TrimSpace(m.Text("\n")); t != "" {
				a.notes = addUnique(a.notes, clip(t, 240))
			}
		case session.RoleBranchSummary, session.RoleCompactionSummary:
			if branch || m.Role == session.RoleCompactionSummary {
				a.earlier = append(a.earlier, previousSections(m.SummaryText()))
			} else {
				a.sideBranches = append(a.sideBranches, previousSections(m.SummaryText()))
			}
		case session.RoleBashExecution:
			b := m.Bash()
			if b.ExcludeFromContext {
				continue
			}
			t := cur()
			act := &action{kind: classifyCommand(b.Command), tool: "bash", command: b.Command, hasResult: true, bash: true,
				output: strings.TrimSpace(m.OutputText()), turn: len(a.turns) - 1, seq: len(a.actions)}
			act.ok = !b.Cancelled && (b.ExitCode == nil || *b.ExitCode == 0)
			t.actions = append(t.actions, act)
			a.actions = append(a.actions, act)
		case session.RoleAssistant:
			t := cur()
			t.userOnly = false
			var text []string
			for _, b := range m.Blocks() {
				if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
					text = append(text, strings.TrimSpace(b.Text))
				}
			}
			joined := strings.Join(text, "\n")
			if joined != "" {
				t.texts = append(t.texts, joined)
			}
			calls := 0
			var ss []string // the text's sentences, split once for every call's purpose
			for _, b := range m.Blocks() {
				if b.Type != "toolCall" {
					continue
				}
				calls++
				if a.readTodo(b) {
					continue
				}
				act := &action{tool: b.Name, turn: len(a.turns) - 1, seq: len(a.actions)}
				switch b.Name {
				case "read":
					act.kind, act.path = actRead, argString(b, "path")
				case "edit", "write":
					act.kind, act.path = actModify, argString(b, "path")
					if ss == nil {
						ss = sentences(joined)
					}
					act.purpose = purposeOf(ss, act.path)
				case "bash":
					act.command = argString(b, "command")
					act.kind = classifyCommand(act.command)
				default:
					act.kind, act.args = actOther, otherLabel(b)
					act.ids = callIDs(b)
					act.delegate = delegatedTask(b)
				}
				byID[b.ID] = act
				t.actions = append(t.actions, act)
				a.actions = append(a.actions, act)
			}
			switch {
			case m.StopReason == "error" || m.StopReason == "aborted":
				t.errored, t.aborted = oneLine(m.ErrorMessage()), m.StopReason == "aborted"
				if t.errored == "" && !t.aborted {
					t.errored = "the reply failed"
				}
				t.final = ""
			case calls == 0 && joined != "":
				t.final, t.errored, t.aborted = joined, "", false
			default:
				t.final, t.errored, t.aborted = "", "", false
			}
		case session.RoleToolResult:
			act := byID[m.ToolCallID]
			if act == nil {
				continue
			}
			act.hasResult, act.ok = true, !m.IsError
			act.output = resultText(m)
			if !act.ok && act.tool == "bash" && grepNoMatch(act.command, act.output) {
				act.ok = true // nothing matched: an answer, not a failure
			}
		}
	}
	a.resolve()
	return a
}

var (
	fillerRe   = keyed(`(?i)^(?:reading|let me|let's|i'll (?:look|read|check|find|start|first)|looking|checking|ok|okay|starting|running|searching|listing)\b`)
	nowRe      = keyed(`(?i)^(?:now|then|first|next),?\s+`)
	listItemRe = regexp.MustCompile(`^\s*(?:\d+[.)]|[-*])\s+`)
	fixRe      = keyed(`(?i)^the (?:fix|change|solution) (?:is|was)\b`)
	// changeWordRe marks a sentence that says what a change does.
	changeWordRe = keyed(`(?i)\b(the fix|fix(?:es|ing)?|add(?:s|ing)?|chang(?:e|es|ing)|mov(?:e|es|ing)|replac(?:e|es|ing)|renam(?:e|es|ing)|remov(?:e|es|ing)|drop(?:s|ping)?|switch(?:es|ing)?|so that|instead|rewrit(?:e|es|ing)|updat(?:e|es|ing)|wir(?:e|es|ing)|set(?:s|ting)?|appl(?:y|ies|ying)|us(?:e|es|ing)|keep(?:s|ing)?|introduc(?:e|es|ing)|implement(?:s|ing)?|extend(?:s|ing)?|wrap(?:s|ping)?|goes into|becomes?)\b`)
	problemRe    = keyed(`(?i)\b(fails?|failed|failing|error|errors|cannot|can't|could not|unable|missing|broken|blocked|conflict|mismatch|does not (?:work|match|have)|doesn't (?:work|match)|not found|is gone|removed|wrong|crash(?:es|ed)?|panics?)\b`)
)

// purposeOf is what an assistant message says about the change of path it makes: the
// sentence naming the file, else its last sentence that is not a filler ("Reading the
// file") nor a plan for later; "Now the schema." becomes "the schema".
func purposeOf(ss []string, path string) string {
	name := strings.ToLower(path[strings.LastIndex(path, "/")+1:])
	pick, rank := "", 0
	for _, s := range ss {
		item := listItemRe.MatchString(s)
		s = listItemRe.ReplaceAllString(s, "")
		if fillerRe.MatchString(s) || strings.HasSuffix(s, "?") || strings.HasSuffix(s, ":") || len(s) < 10 || planRe.MatchString(s) {
			continue
		}
		names := strings.Contains(strings.ToLower(s), name)
		acts := changeWordRe.MatchString(s)
		r := 1 // the last sentence, failing better
		switch {
		case names && acts:
			r = 5
		case fixRe.MatchString(s):
			r = 4
		case acts && !item:
			r = 3
		case names:
			r = 2
		case item:
			continue // a step of a list about another file
		}
		if r > rank || (r == 1 && rank == 1) {
			pick, rank = s, r
		}
	}
	pick = nowRe.ReplaceAllString(pick, "")
	if pick == "" {
		return ""
	}
	return clip(pick, 200)
}

// resolve marks failures that later actions resolved: a file edited or read later, the
// same check or command succeeding later, a check of any kind passing in a later turn
// (the work moved on), an exploratory failure followed by more work.
func (a *analysis) resolve() {
	for i, f := range a.actions {
		if !f.hasResult || f.ok {
			continue
		}
		for _, g := range a.actions[i+1:] {
			if a.stop() {
				return
			}
			if !g.hasResult || !g.ok {
				continue
			}
			switch {
			case f.path != "" && g.path == f.path && (f.kind == actRead || g.kind == actModify):
				f.resolved = true
			case f.command != "" && g.command != "" && (family(f.command) == family(g.command) || commandTarget(f.command) == commandTarget(g.command)):
				// The same check, or the same target (its program and what it runs)
				// working later: the failure is not the last thing that happened to it.
				f.resolved = true
			case f.kind == actCheck && g.kind == actCheck && g.turn > f.turn:
				f.resolved = true
			}
			if f.resolved {
				break
			}
		}
		if !f.resolved && f.exploratory() && i < len(a.actions)-1 {
			f.resolved = true
		}
	}
}

// live are the failures still open at the end of the span.
func (a *analysis) live() []*action {
	var out []*action
	for _, f := range a.actions {
		if f.hasResult && !f.ok && !f.resolved {
			out = append(out, f)
		}
	}
	return out
}

func (a *analysis) lastTurn() *turn {
	if len(a.turns) == 0 {
		return nil
	}
	return a.turns[len(a.turns)-1]
}

// requests are the turns that ask for something (not acknowledgements).
func (a *analysis) requests() []*turn {
	var out []*turn
	for _, t := range a.turns {
		if !t.ack && t.answer == "" && t.request != "" {
			out = append(out, t)
		}
	}
	return out
}

// requestLine is a request as a goal line; a short one that names nothing and leans on
// what came before ("Try it.") gets the turn's first step as context.
func requestLine(t *turn, max int) string {
	line := summaryOf(t.request, max)
	if len(strings.Fields(t.request)) >= 10 || len(entitiesOf(t.request)) > 0 {
		return line
	}
	for _, act := range t.actions {
		switch {
		case act.kind == actModify && act.path != "":
			return line + " (first step: `" + act.path + "`)"
		case act.kind == actChange || act.kind == actCheck:
			return line + " (first step: " + cmdSpan(act.command) + ")"
		}
	}
	return line
}

// verdict is, in a branch summary, the user's last message when nothing answered it:
// why the branch was left ("too big, abandon it"), not a request to carry out.
func (a *analysis) verdict() string {
	t := a.lastTurn()
	if !a.branch || t == nil || !t.userOnly || t.request == "" {
		return ""
	}
	return clip(t.request, 240)
}

// summaryOf is a request as a goal line: whole sentences up to about max characters.
func summaryOf(text string, max int) string {
	var b strings.Builder
	for _, s := range sentences(strings.ReplaceAll(text, "\n", " ")) {
		if b.Len() > 0 && b.Len()+len(s) > max {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return clip(b.String(), max+max/2)
}

// unfinished reports whether the span ends with its work still going: the last turn
// ends on tool calls, its reply failed, it reports remaining work, or a failure of it
// is still open.
func (a *analysis) unfinished() bool {
	t := a.lastTurn()
	if t != nil && t.userOnly && a.branch && len(a.turns) > 1 {
		t = a.turns[len(a.turns)-2] // the verdict on leaving is no request
	}
	if t == nil || (t.userOnly && a.branch) {
		return false
	}
	if t.userOnly {
		return !t.ack || len(a.turns) > 1
	}
	if t.errored != "" || t.aborted {
		return true
	}
	if t.final == "" && len(t.actions) > 0 && !a.branch {
		return true
	}
	last := t.final
	if last == "" && len(t.texts) > 0 {
		last = t.texts[len(t.texts)-1]
	}
	for _, s := range clauses(last) {
		if planRe.MatchString(s) && !offerRe.MatchString(s) {
			return true
		}
	}
	for _, f := range a.live() {
		if f.turn == len(a.turns)-1 && !f.exploratory() {
			return true
		}
	}
	return false
}

// lastReply is the last turn the assistant answered (in a branch, the user's verdict on
// leaving is passed over).
func (a *analysis) lastReply() *turn {
	for i := len(a.turns) - 1; i >= 0; i-- {
		if !a.turns[i].userOnly {
			return a.turns[i]
		}
	}
	return nil
}

// lastText is the assistant's last text of the span.
func (a *analysis) lastText() string {
	for i := len(a.turns) - 1; i >= 0; i-- {
		if n := len(a.turns[i].texts); n > 0 {
			return a.turns[i].texts[n-1]
		}
		if !a.turns[i].userOnly {
			return ""
		}
	}
	return ""
}

// done are the outcomes of the span, turn by turn: files changed and why, commands that
// changed something with what they printed, checks with their final status, and the
// statements of the assistant's report.
func (a *analysis) done(from int) []string {
	var out uniqueList
	lastOfFamily := map[string]*action{}
	for _, act := range a.actions {
		if act.command != "" && act.hasResult {
			lastOfFamily[family(act.command)] = act
		}
	}
	for ti := from; ti < len(a.turns) && !a.stop(); ti++ {
		t := a.turns[ti]
		// Files changed, one line per file.
		var files []string
		edits := map[string]int{}
		purpose := map[string]string{}
		created := map[string]bool{}
		for _, act := range t.actions {
			if act.kind != actModify || act.path == "" || (act.hasResult && !act.ok) || (!act.hasResult && !a.branch) {
				continue
			}
			if edits[act.path] == 0 {
				files = append(files, act.path)
				created[act.path] = act.tool == "write" && !a.touchedBefore(act)
			}
			edits[act.path]++
			switch p := purpose[act.path]; {
			case p == "":
				purpose[act.path] = act.purpose
			case act.purpose != "" && !strings.Contains(p, act.purpose) && !strings.Contains(p, "; then: "):
				purpose[act.path] = strings.TrimRight(p, ".") + "; then: " + act.purpose
			}
		}
		report := t.final
		if report == "" && a.branch && len(t.texts) > 0 {
			report = t.texts[len(t.texts)-1]
		}
		for _, f := range files {
			if strings.Contains(report, f) {
				continue // the report says what became of it
			}
			item := "`" + f + "`"
			switch {
			case created[f]:
				item = "Created " + item
			case edits[f] > 1:
				item = fmt.Sprintf("Edited %s (%d edits)", item, edits[f])
			default:
				item = "Edited " + item
			}
			if p := purpose[f]; p != "" {
				item += ": " + p
			}
			out.add(item)
		}
		// Commands: the last run of each check, and commands that changed something.
		for _, act := range t.actions {
			if a.stop() {
				break
			}
			if a.branch && act.kind == actChange && !act.hasResult {
				// A branch summary shows no results: the command was run, its outcome is
				// in the assistant's words.
				out.add("Ran " + cmdSpan(act.command))
				continue
			}
			if act.command == "" || !act.hasResult || !act.ok {
				continue
			}
			switch act.kind {
			case actInspect:
				// An inspection that turned up an error (a log's exception, a failed CI
				// job): what was found.
				if l, score := errorLineScore(act.output); score >= 4 {
					out.add("Found with " + cmdSpan(act.command) + ": " + l)
				}
			case actCheck:
				if lastOfFamily[family(act.command)] != act {
					continue
				}
				item := cmdSpan(act.command) + " passes"
				if s := successLine(act.output); s != "" && !strings.Contains(act.command, s) {
					item += " (" + s + ")"
				}
				if e := a.fixedBefore(act); e != "" {
					item += "; it had failed with: " + e
				}
				out.add(item)
			case actChange:
				if !act.hasResult {
					continue
				}
				item := cmdSpan(act.command)
				if s := successLine(act.output); s != "" {
					item += ": " + s
				} else {
					item += " done"
				}
				out.add(item)
			}
		}
		// The report: what the assistant says it did.
		for _, s := range reportStatements(report) {
			out.add(s)
		}
	}
	return out.items
}

// touchedBefore reports whether the file of act was read or changed earlier in the span.
func (a *analysis) touchedBefore(act *action) bool {
	if a.firstTouch == nil {
		a.firstTouch = map[string]int{}
		for i, b := range a.actions {
			if _, ok := a.firstTouch[b.path]; !ok {
				a.firstTouch[b.path] = i
			}
		}
	}
	first, ok := a.firstTouch[act.path]
	return ok && first < act.seq
}

// fixedBefore is the error of an earlier failure of act's check that act resolved.
func (a *analysis) fixedBefore(act *action) string {
	fam := family(act.command)
	for _, b := range a.actions[:act.seq] {
		if a.stop() {
			return ""
		}
		if b.command != "" && !b.ok && b.hasResult && family(b.command) == fam {
			return clip(errorLine(b.output), 140)
		}
	}
	return ""
}

var doneSaidRe = keyed(`(?i)\b(?:is done|are done|is in|are in|passes|fixed|is finished|are finished)\b`)

// problems are the sentences of the span's last reply that report a problem found
// (something missing, failing or wrong) and not fixed.
func (a *analysis) problems() []string {
	var out []string
	text := ""
	if t := a.lastReply(); t != nil {
		text = t.final
		if text == "" && a.branch && len(t.texts) > 0 {
			text = t.texts[len(t.texts)-1]
		}
	}
	for _, s := range sentences(text) {
		if problemRe.MatchString(s) && !resolvedWordsRe.MatchString(s) && !strings.HasSuffix(s, "?") && !offerRe.MatchString(s) {
			out = append(out, clip(s, 300))
		}
	}
	return out
}

// reportStatements are the sentences of a final reply that state what was done: not
// questions, offers, plans or politeness.
func reportStatements(text string) []string {
	var out []string
	for _, s := range sentences(reportText(text)) {
		if len(out) == 4 {
			break
		}
		if strings.HasSuffix(s, "?") || strings.HasSuffix(s, ":") || offerRe.MatchString(s) || politeRe.MatchString(s) || len(s) < 16 {
			continue
		}
		if planRe.MatchString(s) && !doneSaidRe.MatchString(s) {
			continue
		}
		if problemRe.MatchString(s) && !resolvedWordsRe.MatchString(s) {
			continue // a problem found is not work done (see problems)
		}
		out = append(out, clip(s, 300))
	}
	return out
}

// blocked are the failures and blockers still open: failed commands and edits no later
// action resolved, a failed reply, a question the user has not answered, and what the
// assistant's last words say is still failing.
func (a *analysis) blocked(from int) []string {
	var out []string
	for _, f := range a.live() {
		if a.stop() {
			break
		}
		if f.turn < from || isEnvError(f) {
			continue // an environment error is context, said once (see environment)
		}
		switch {
		case f.command != "":
			out = addUnique(out, cmdSpan(f.command)+" fails: "+errorLine(f.output))
		case f.kind == actModify:
			out = addUnique(out, "Editing `"+f.path+"` failed: "+clip(firstLine(f.output), 200))
		case f.kind == actRead:
			out = addUnique(out, "Reading `"+f.path+"` failed: "+clip(firstLine(f.output), 200))
		default:
			out = addUnique(out, f.tool+" failed: "+clip(firstLine(f.output), 200))
		}
	}
	if t := a.lastTurn(); t != nil && len(a.turns)-1 >= from && !a.answeredLater {
		if t.errored != "" && !t.aborted {
			out = addUnique(out, "The last reply failed: "+clip(t.errored, 200))
		}
		for _, s := range sentences(a.lastText()) {
			if stillFailingRe.MatchString(s) && !resolvedWordsRe.MatchString(s) && !strings.HasSuffix(s, "?") {
				out = addUnique(out, clip(s, 300))
			}
		}
		if !t.userOnly {
			if q := openQuestion(t.final); q != "" {
				out = addUnique(out, "Waiting for the user's answer: "+q)
			}
		}
	}
	return out
}

var (
	stillFailingRe  = keyed(`(?i)\b(blocked|still fails?|still failing|still broken|broken build|is broken|cannot|can't|unable to|fails? (?:with|on|because)|stops? on|conflict|not reachable|permission denied|waiting (?:for|on))\b`)
	resolvedWordsRe = keyed(`(?i)\b(no longer|fixed|resolved|now|works|was|were|earlier|previously)\b`)
)

// openQuestion is the question a reply ends with when it asks the user to decide or to
// act ("Shall I apply it?"), "" otherwise.
func openQuestion(text string) string {
	ss := sentences(text)
	if len(ss) == 0 {
		return ""
	}
	last := ss[len(ss)-1]
	if !strings.HasSuffix(last, "?") {
		return ""
	}
	return clip(last, 240)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

var (
	planListRe = regexp.MustCompile(`(?m)^\s*(\d+)[.)]\s+(.+)$`)
	stepRefRe  = keyed(`(?i)\bsteps? (\d+)((?:(?:,\s*| and | to |-|–)\d+)*)`)
	digitsRe   = regexp.MustCompile(`\d+`)
	doneRefRe  = keyed(`(?i)\b(?:done|in|complete|completed|finished|implemented|passes|pass)\b`)
)

// plan is the latest numbered plan the assistant wrote in the span, and the steps of it
// that are still to do: those after the last step with evidence of being done (a step
// the assistant called done, a file it names changed after the plan).
func (a *analysis) plan() []string {
	planTurn, planAt := -1, -1
	var steps []string
	for ti, t := range a.turns {
		if a.stop() {
			return nil
		}
		for xi, text := range t.texts {
			m := planListRe.FindAllStringSubmatch(text, -1)
			if len(m) < 2 {
				continue
			}
			steps = steps[:0]
			for _, x := range m {
				steps = append(steps, strings.TrimSpace(x[2]))
			}
			planTurn, planAt = ti, xi
		}
	}
	if planTurn < 0 {
		return nil
	}
	doneUpTo := -1
	// The assistant's own account: "Steps 1 and 2 are in", "Remaining: step 3 ...".
	remaining := map[int]bool{}
	for ti := planTurn; ti < len(a.turns) && !a.stop(); ti++ {
		for xi, text := range a.turns[ti].texts {
			if ti == planTurn && xi <= planAt {
				continue
			}
			for _, s := range sentences(text) {
				for _, m := range stepRefRe.FindAllStringSubmatch(s, -1) {
					nums := append([]string{m[1]}, digitsRe.FindAllString(m[2], -1)...)
					for _, n := range nums {
						var k int
						fmt.Sscanf(n, "%d", &k)
						if k < 1 || k > len(steps) {
							continue
						}
						if planRe.MatchString(s) && !doneRefRe.MatchString(strings.SplitN(s, ":", 2)[0]) {
							remaining[k-1] = true
						} else if doneRefRe.MatchString(s) && k-1 > doneUpTo {
							doneUpTo = k - 1
						}
					}
				}
			}
		}
	}
	// Evidence from the work: a step whose file was changed after the plan.
	for i, st := range steps {
		for _, e := range entitiesOf(st) {
			for _, act := range a.actions {
				if a.stop() {
					return nil
				}
				if act.turn >= planTurn && act.kind == actModify && (!act.hasResult || act.ok) && strings.Contains(act.path, e) && i > doneUpTo {
					doneUpTo = i
				}
			}
		}
	}
	var out []string
	for i, st := range steps {
		if i > doneUpTo || remaining[i] {
			out = append(out, clip(st, 240))
		}
	}
	return out
}

// next are the next steps: what the assistant said it would do next, the remaining steps
// of its plan, fixes for open failures, the open request, a re-run of the checks after
// later changes, an offer the user may take up.
func (a *analysis) next(unfinished bool, blocked []string) []string {
	var out []string
	last := a.lastText()
	endsOnCalls := false
	if t := a.lastReply(); t != nil && t.final == "" && len(t.actions) > 0 {
		endsOnCalls = true
	}
	var offers []string
	weak := true // no stated step names what it works on
	for _, sentence := range sentences(last) {
		for _, s := range clauses(sentence) {
			switch {
			case offerRe.MatchString(s) && !strings.HasSuffix(s, "?") && !planRe.MatchString(s):
				offers = addUnique(offers, clip(s, 240))
			case (planRe.MatchString(s) || followUpRe.MatchString(s)) && !strings.HasSuffix(s, "?") && (!endsOnCalls || futureRe.MatchString(s)):
				// The whole sentence: a clause alone may lean on the one before it.
				out = addUnique(out, clip(sentence, 260))
				if len(entitiesOf(sentence)) > 0 || len(sentence) > 80 {
					weak = false
				}
			}
		}
	}
	for _, st := range a.plan() {
		dup := false
		for _, o := range out {
			if related(o, st) && strings.Contains(strings.ToLower(o), strings.ToLower(firstEntity(st))) {
				dup = true
			}
		}
		if !dup {
			out = addUnique(out, st)
		}
	}
	for _, f := range a.live() {
		if a.stop() {
			break
		}
		if f.command != "" && !f.exploratory() && !isEnvError(f) {
			step := "Fix the failure of " + cmdSpan(f.command) + ", then run it again"
			if h := hintOf(f.output); h != "" {
				step += " (" + h + ")"
			}
			out = addUnique(out, step)
		}
	}
	for _, b := range blocked {
		if strings.HasPrefix(b, "Waiting for the user's answer: ") {
			out = addUnique(out, "Get the user's answer: "+strings.TrimPrefix(b, "Waiting for the user's answer: "))
		}
	}
	if t := a.lastTurn(); t != nil && t.answer != "" && t.userOnly {
		out = addUnique(out, "Go on as the user answered: \""+clip(t.answer, 240)+"\"")
	}
	if len(out) == 0 {
		for _, p := range a.problems() {
			out = addUnique(out, "Look into what the last reply found: "+p)
		}
	}
	if unfinished && (len(out) == 0 || weak) {
		if r := a.requests(); len(r) > 0 {
			out = append(out, "Finish the current request: "+summaryOf(r[len(r)-1].request, 200))
		}
	}
	for _, o := range offers {
		out = addUnique(out, "If the user wants it (offered): "+o)
	}
	if len(out) == 0 {
		if s := a.takeUp(); s != "" {
			out = append(out, "Take up from the last reply: "+s)
		}
	}

	if c := a.recheck(); c != "" {
		out = addUnique(out, "Run "+c+" again: files changed after its last run")
	}
	return out
}

// clauses are the sentences of text, split again at semicolons.
func clauses(text string) []string {
	var out []string
	for _, s := range sentences(text) {
		sp := spans(s)
		last := 0
		for i := 0; i < len(s); i++ {
			if s[i] == ';' && !inSpan(sp, i) {
				if c := strings.TrimSpace(s[last:i]); c != "" {
					out = append(out, c)
				}
				last = i + 1
			}
		}
		if c := strings.TrimSpace(s[last:]); c != "" {
			out = append(out, c)
		}
	}
	return out
}

var (
	hintRe  = keyed(`(?im)^\s*(?:hint|help|note|suggestion|try):\s*(.+)$`)
	maybeRe = keyed(`(?i)\b(would|could|should|might|will|can|recommend|suggest|option)\b`)
)

// hintOf is what a failed command suggests doing (git's "hint:", cargo's "help:").
func hintOf(out string) string {
	var hs []string
	for _, m := range hintRe.FindAllStringSubmatch(out, 3) {
		hs = append(hs, strings.TrimSpace(m[1]))
	}
	if len(hs) == 0 {
		return ""
	}
	return clip("hint: "+strings.Join(hs, " "), 220)
}

// takeUp is where to pick up when the last reply answered and planned nothing: its last
// sentence that suggests something, else its last statement.
func (a *analysis) takeUp() string {
	t := a.lastReply()
	if t == nil {
		return ""
	}
	ss := reportStatements(t.final)
	if len(ss) == 0 {
		return ""
	}
	for i := len(ss) - 1; i >= 0; i-- {
		if maybeRe.MatchString(ss[i]) {
			return ss[i]
		}
	}
	if a.branch {
		return ss[len(ss)-1] // nothing follows a branch summary: its last word is where to pick up
	}
	return ""
}

func firstEntity(s string) string {
	if e := entitiesOf(s); len(e) > 0 {
		return e[0]
	}
	return s
}

// recheck is the last successful check of the span when files changed after it.
func (a *analysis) recheck() string {
	var lastCheck *action
	for _, act := range a.actions {
		if act.kind == actCheck && act.hasResult && act.ok {
			lastCheck = act
		}
	}
	if lastCheck == nil {
		return ""
	}
	for _, act := range a.actions[lastCheck.seq+1:] {
		if act.kind == actModify && (act.ok || !act.hasResult) {
			return cmdSpan(lastCheck.command)
		}
	}
	return ""
}

// constraints are the user's sentences that constrain the work, from every message: the
// first sentence of a request counts when it states a strong constraint itself.
func (a *analysis) constraints(from int) []string {
	var out []string
	for ti := from; ti < len(a.turns) && !a.stop(); ti++ {
		t := a.turns[ti]
		if t.request == "" {
			continue
		}
		for i, s := range sentences(strings.ReplaceAll(t.request, "\n", " ")) {
			if t.answer != "" {
				// An answer to the assistant's question says how to go on: each of its
				// statements is an instruction.
				if !strings.HasSuffix(s, "?") && len(s) >= 12 {
					out = addUnique(out, clip(s, 300))
				}
				continue
			}
			if !isConstraint(s) {
				continue
			}
			if i == 0 && !t.ack && !strongConstraintRe.MatchString(s) {
				continue
			}
			out = addUnique(out, clip(s, 300))
		}
	}
	return out
}

var strongConstraintRe = keyed(`(?i)\b(must|never|always|don'?t|do not|avoid|stop \w+ing|no (?:new |more )?\w+|without|only|not allowed|instead of|rather than|keep .{0,40}unchanged|leave .{1,60} alone)\b`)

// decisions are the assistant's sentences that decide or explain: a choice and its
// reason, the cause found, the fix chosen.
func (a *analysis) decisions(from int) []string {
	var out []string
	for ti := from; ti < len(a.turns) && !a.stop(); ti++ {
		for _, text := range a.turns[ti].texts {
			for _, s := range sentences(text) {
				if decisionRe.MatchString(s) && !strings.HasSuffix(s, "?") && !offerRe.MatchString(s) {
					out = addUnique(out, decisionLine(clip(s, 280)))
				}
			}
		}
	}
	return out
}

var becauseRe = keyed(`(?i)^(.{12,160}?)(?:,? because |,? since |: )(.{12,})$`)

// decisionLine writes a decision as Pi's format has it, **decision**: rationale, when
// the sentence has a reason to split off.
func decisionLine(s string) string {
	if m := becauseRe.FindStringSubmatch(s); m != nil && strings.Count(m[1], "`")%2 == 0 {
		return "**" + strings.TrimSpace(m[1]) + "**: " + strings.TrimSpace(m[2])
	}
	return s
}

// userFacts are sentences of the user's that give facts to keep (where logs are, what
// calls what): they name an entity and are neither the request nor a constraint.
func (a *analysis) userFacts(from int) []string {
	var out []string
	for ti := from; ti < len(a.turns) && !a.stop(); ti++ {
		t := a.turns[ti]
		for i, s := range sentences(strings.ReplaceAll(t.request, "\n", " ")) {
			if i == 0 || isConstraint(s) || strings.HasSuffix(s, "?") || len(entitiesOf(s)) == 0 {
				continue
			}
			out = addUnique(out, "User: "+clip(s, 240))
		}
	}
	return out
}

// statusLines are the last results of inspections that report a state (a pod running,
// a check passing), one per command.
func (a *analysis) statusLines(from int) []string {
	last := map[string]*action{}
	var order []string
	for _, act := range a.eachAction() {
		if act.turn < from || act.kind != actInspect || !act.hasResult || !act.ok {
			continue
		}
		f := family(act.command)
		if _, ok := last[f]; !ok {
			order = append(order, f)
		}
		last[f] = act
	}
	var out []string
	for _, f := range order {
		if a.stop() {
			break
		}
		act := last[f]
		if s := successLine(act.output); s != "" && statusWordRe.MatchString(s) {
			out = append(out, cmdSpan(act.command)+": "+s)
		}
	}
	return out
}

var statusWordRe = keyed(`(?i)\b(running|ready|healthy|passed|merged|succeeded|deployed|active|listening|up)\b`)

// previousSections splits an earlier checkpoint into its "## " and "### " sections.
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
		if cur != "" && strings.TrimSpace(line) != "" && !placeholderLine(line) {
			out[cur] = append(out[cur], line)
		}
	}
	return out
}

var placeholderLineRe = keyed(`(?i)^\s*(?:[-*]\s*)?(?:\[[ x]\]\s*)?(?:\(none[^)]*\)|none\.?|\(no [^)]*\))\s*$`)

func placeholderLine(l string) bool { return placeholderLineRe.MatchString(l) }

var itemPrefixRe = regexp.MustCompile(`^\s*(?:[-*]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)`)

// items are an earlier section's lines without their list markers.
func items(lines []string) []string {
	var out []string
	for _, l := range lines {
		if s := strings.TrimSpace(itemPrefixRe.ReplaceAllString(l, "")); s != "" {
			out = addUnique(out, s)
		}
	}
	return out
}

// earlierSections are the sections of the previous summary and of the summaries among
// the messages, merged in order.
func (a *analysis) earlierSections(previous string) map[string][]string {
	all := append([]map[string][]string{previousSections(previous)}, a.earlier...)
	out := map[string][]string{}
	for _, p := range all {
		for k, v := range p {
			out[k] = append(out[k], v...)
		}
	}
	return out
}

func (a *analysis) bullets(list []string, prefix string, limit int) string {
	list = a.tidyList(list)
	if len(list) == 0 {
		return "(none)"
	}
	if limit > 0 {
		list = newest(list, limit)
	}
	var b strings.Builder
	for i, it := range list {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(prefix + it)
	}
	return b.String()
}

// settledBy reports whether an earlier open item (in progress, blocked, a next step) is
// settled by the new outcomes.
func settledBy(item string, outcomes []string) bool {
	for _, o := range outcomes {
		if related(item, o) {
			return true
		}
	}
	return false
}

func (a *analysis) checkpoint(req Request, critical bool) string {
	prev := a.earlierSections(req.PreviousSummary)
	reqs := a.requests()
	verdict := a.verdict()
	if verdict != "" && len(reqs) > 0 && reqs[len(reqs)-1] == a.lastTurn() {
		reqs = reqs[:len(reqs)-1]
	}

	// Goal: the earlier goal, the first request, the requests since, the latest marked.
	var goalList uniqueList
	for _, g := range items(prev["Goal"]) {
		goalList.add(strings.TrimPrefix(g, "Latest request: "))
	}
	for i, r := range reqs {
		if a.stop() {
			break
		}
		max := 220
		if i == 0 || i == len(reqs)-1 {
			max = 320
		}
		goalList.add(requestLine(r, max))
	}
	goals := goalList.items
	if len(goals) > 5 {
		goals = append(goals[:2], goals[len(goals)-3:]...)
	}
	goals = a.tidyList(goals)
	var goal string
	switch len(goals) {
	case 0:
		goal = "(no user request in this part of the conversation)"
		if g := a.inferredGoal(); g != "" {
			goal = g
		}
	case 1:
		goal = goals[0]
	default:
		if len(reqs) > 0 && goals[len(goals)-1] == requestLine(reqs[len(reqs)-1], 320) {
			goals[len(goals)-1] = "Latest request: " + goals[len(goals)-1]
		}
		goal = "- " + strings.Join(goals, "\n- ")
	}

	constraints := items(prev["Constraints & Preferences"])
	for _, c := range a.constraints(0) {
		constraints = addUnique(constraints, c)
	}
	for _, p := range req.Pinned {
		constraints = addUnique(constraints, "Pinned: \""+strings.ReplaceAll(p, "\n", " ")+"\"")
	}

	newDone := a.done(0)
	doneList := newUniqueList(items(prev["Done"]))
	for _, d := range newDone {
		doneList.add(d)
	}
	for _, d := range a.todosWith("completed") {
		doneList.add(d)
	}
	for _, act := range a.actions {
		if act.delegate != "" && act.hasResult && act.ok {
			doneList.add("Delegated: " + act.delegate)
		}
	}
	done := focusFirst(doneList.items, req.CustomInstructions)

	unfinished := a.unfinished()
	blockedNew := a.blocked(0)
	outcomes := append(append([]string(nil), newDone...), a.successCommands()...)
	var inProgress []string
	for _, p := range items(prev["In Progress"]) {
		if !settledBy(p, outcomes) {
			inProgress = addUnique(inProgress, p)
		}
	}
	if unfinished {
		if r := a.requests(); len(r) > 0 {
			inProgress = addUnique(inProgress, summaryOf(r[len(r)-1].request, 240))
		}
		for _, p := range clauses(a.lastText()) {
			if planRe.MatchString(p) && !offerRe.MatchString(p) && !strings.HasSuffix(p, "?") {
				inProgress = addUnique(inProgress, "Still to do: "+clip(p, 260))
				break
			}
		}
		if !hasPrefixIn(inProgress, "Still to do: ") {
			if i := a.statedIntent(); i != "" {
				inProgress = addUnique(inProgress, "Stated next: "+i)
			}
		}
		if s := a.lastStep(); s != "" {
			inProgress = addUnique(inProgress, "Last step: "+s)
		}
	}
	for _, t := range a.todosWith("in_progress") {
		inProgress = addUnique(inProgress, t)
	}
	for _, act := range a.actions {
		if act.delegate != "" && !act.hasResult {
			inProgress = addUnique(inProgress, "Delegated, no answer yet: "+act.delegate)
		}
	}
	if !a.branch {
		for _, p := range a.pending() {
			inProgress = addUnique(inProgress, p)
		}
	}
	var blocked []string
	for _, b := range items(prev["Blocked"]) {
		if !settledBy(b, outcomes) {
			blocked = addUnique(blocked, b)
		}
	}
	for _, b := range blockedNew {
		blocked = addUnique(blocked, b)
	}

	decisions := items(prev["Key Decisions"])
	for _, d := range a.decisions(0) {
		decisions = addUnique(decisions, d)
	}
	for _, t := range a.turns {
		if t.answer != "" {
			decisions = addUnique(decisions, "**The user's answer to \""+t.question+"\"**: "+clip(t.answer, 240))
		}
	}
	if verdict != "" {
		decisions = addUnique(decisions, "**The user, on leaving this branch**: \""+verdict+"\"")
	}

	next := a.next(unfinished, blockedNew)
	if todo := a.todosWith("pending"); len(todo) > 0 {
		next = append(append([]string(nil), todo...), next...)
	}
	if verdict != "" {
		next = append([]string{"Follow the user's call on leaving this branch: \"" + verdict + "\""}, next...)
	}
	var asked []string
	for _, r := range reqs {
		asked = append(asked, r.request)
	}
	for _, n := range items(prev["Next Steps"]) {
		if !settledBy(n, outcomes) && !settledBy(n, asked) {
			next = addUnique(next, n)
		}
	}
	if len(next) == 0 {
		switch {
		case unfinished && a.statedIntent() != "":
			next = []string{a.statedIntent()}
		case unfinished:
			next = []string{"Continue from the kept messages"}
		case a.branch:
			next = []string{"Nothing was left open in this branch"}
		default:
			next = []string{"Continue with the kept messages: the requests above are answered"}
		}
	}
	// A sentence both reported and planned is a plan when it speaks of the future ("will
	// need", "still"): it leaves Done; otherwise it is done and leaves the Next Steps.
	next = a.tidyList(next)
	done = a.tidyList(done)
	planned := map[string]bool{}
	for _, n := range next {
		if a.stop() {
			break
		}
		if futureRe.MatchString(n) || willRe.MatchString(n) || planRe.MatchString(n) {
			planned[itemKey(n)] = true
		}
	}
	done = withoutKeys(done, planned)
	next = withoutDone(next, done)
	if len(next) == 0 {
		next = []string{"Continue from the kept messages"}
		if i := a.statedIntent(); i != "" && unfinished {
			next = []string{i}
		}
	}
	if len(next) > maxNext {
		next = next[:maxNext]
	}

	var b strings.Builder
	b.WriteString("## Goal\n" + goal + "\n\n")
	b.WriteString("## Constraints & Preferences\n" + a.bullets(constraints, "- ", maxListItems) + "\n\n")
	b.WriteString("## Progress\n### Done\n" + a.bullets(done, "- [x] ", maxDone) + "\n\n")
	b.WriteString("### In Progress\n" + a.bullets(inProgress, "- [ ] ", maxListItems) + "\n\n")
	b.WriteString("### Blocked\n" + a.bullets(blocked, "- ", maxListItems) + "\n\n")
	b.WriteString("## Key Decisions\n" + a.bullets(decisions, "- ", 6) + "\n\n")
	b.WriteString("## Next Steps\n")
	for i, n := range next {
		fmt.Fprintf(&b, "%d. %s\n", i+1, n)
	}
	if critical {
		var crit []string
		for _, c := range items(prev["Critical Context"]) {
			if !strings.HasPrefix(c, "Files modified so far: ") && !strings.HasPrefix(c, "Requested focus: ") {
				crit = addUnique(crit, c)
			}
		}
		for _, n := range a.notes {
			crit = addUnique(crit, "Context note: "+n)
		}
		for _, sb := range a.sideBranches {
			line := "A branch explored and left"
			if g := items(sb["Goal"]); len(g) > 0 {
				line += ": " + clip(strings.Join(g, "; "), 200)
			}
			if d := items(sb["Done"]); len(d) > 0 {
				line += " (done there: " + clip(strings.Join(d, "; "), 200) + ")"
			}
			crit = addUnique(crit, line)
		}
		for _, f := range a.userFacts(0) {
			crit = addUnique(crit, f)
		}
		for _, s := range a.statusLines(0) {
			crit = addUnique(crit, "Last seen: "+s)
		}
		for _, p := range a.problems() {
			if !contains(blocked, p) {
				crit = addUnique(crit, "Found: "+p)
			}
		}
		for _, f := range a.findings() {
			if !mentioned(done, f) && !contains(blocked, f) {
				crit = addUnique(crit, "Found: "+f)
			}
		}
		for _, i := range a.interrupted() {
			crit = addUnique(crit, i)
		}
		for _, e := range a.environment() {
			crit = addUnique(crit, e)
		}
		if !unfinished {
			if s := a.lastStep(); s != "" && !contains(crit, "Last seen: "+s) && !mentioned(done, s) {
				crit = addUnique(crit, "Last step before the kept messages: "+s)
			}
		}
		for _, l := range a.idsLines(b.String() + strings.Join(crit, "\n")) {
			crit = addUnique(crit, l)
		}
		if n := len(req.ModifiedFiles); n > 0 {
			crit = addUnique(crit, fmt.Sprintf("Files modified so far: %s", strings.Join(limitList(req.ModifiedFiles, 10), ", ")))
		}
		// Last, so the list's bound (it keeps the newest items) never drops it.
		if req.CustomInstructions != "" {
			crit = addUnique(crit, "Requested focus: "+clip(req.CustomInstructions, 240))
		}
		b.WriteString("\n## Critical Context\n" + a.bullets(crit, "- ", maxListItems+2))
	}
	return strings.TrimRight(b.String(), "\n")
}

// successCommands are the commands that succeeded in the span, as outcomes that settle
// earlier open items.
func (a *analysis) successCommands() []string {
	var out []string
	for _, act := range a.actions {
		if act.command != "" && act.hasResult && act.ok && act.kind != actInspect {
			out = append(out, "`"+act.command+"` passes")
		}
	}
	return out
}

// lastStep is the latest action of the span with its outcome.
func (a *analysis) lastStep() string {
	for i := len(a.actions) - 1; i >= 0; i-- {
		act := a.actions[i]
		switch {
		case act.kind == actRead:
			continue
		case act.kind == actOther && act.delegate != "":
			return "delegated: " + act.delegate
		case act.kind == actOther && act.hasResult && !act.ok:
			return act.args + " fails: " + errorLine(act.output)
		case act.kind == actOther:
			return act.args
		case act.kind == actModify && (act.ok || !act.hasResult):
			return "edited `" + act.path + "`"
		case act.command != "" && act.hasResult && act.ok:
			s := cmdSpan(act.command)
			if act.kind == actCheck {
				return s + " passes"
			}
			if o := successLine(act.output); o != "" {
				return s + ": " + o
			}
			return s
		case act.command != "" && act.hasResult:
			return cmdSpan(act.command) + " fails: " + errorLine(act.output)
		}
	}
	return ""
}

// pending are the tool calls of the span's last message that have no result: a history
// span that ends while a tool runs (the kept part holds the rest). An interrupted reply's
// calls are not pending.
func (a *analysis) pending() []string {
	t := a.lastTurn()
	if t == nil || t.aborted {
		return nil
	}
	var out []string
	for _, act := range t.actions {
		if act.hasResult {
			continue
		}
		switch {
		case act.command != "":
			out = append(out, cmdSpan(act.command)+" was running when this part ends")
		case act.path != "":
			out = append(out, act.tool+" of `"+act.path+"` had no result yet when this part ends")
		}
	}
	return out
}

// interrupted are the calls of replies the user interrupted.
func (a *analysis) interrupted() []string {
	var out []string
	for _, t := range a.turns {
		if !t.aborted {
			continue
		}
		for _, act := range t.actions {
			if !act.hasResult && act.command != "" {
				out = append(out, "Interrupted by the user: "+cmdSpan(act.command))
			}
		}
	}
	return out
}

func focusFirst(list []string, focus string) []string {
	words := significant(focus)
	if len(words) == 0 {
		return list
	}
	var hit, rest []string
	for _, it := range list {
		l := strings.ToLower(it)
		matched := false
		for _, w := range words {
			if strings.Contains(l, w) {
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

func limitList(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	out := append([]string(nil), l[:n]...)
	return append(out, fmt.Sprintf("(+%d more)", len(l)-n))
}

// approach is how the assistant said it would go about the request: the first sentence
// of its first reply that says what a change does.
func (a *analysis) approach() string {
	for _, t := range a.turns {
		if a.stop() {
			return ""
		}
		for _, text := range t.texts {
			for _, s := range sentences(text) {
				if listItemRe.MatchString(s) || fillerRe.MatchString(s) || strings.HasSuffix(s, "?") || strings.HasSuffix(s, ":") || len(s) < 20 {
					continue
				}
				if changeWordRe.MatchString(s) || intentRe.MatchString(s) {
					return clip(s, 280)
				}
			}
		}
	}
	return ""
}

var (
	intentRe = keyed(`(?i)(?:^|: )(?:i'll|i will|we'll|the plan is|the idea is)\b`)
	// futureRe marks a step for later in a message that also makes calls ("next I'll",
	// "then"), as opposed to what the message's own calls do ("Now the middleware").
	futureRe = keyed(`(?i)\b(next|then|after that|afterwards|remaining|still|later|once)\b`)
)

// turnPrefix is the summary of the start of a turn too large to keep whole: the request,
// what was done so far, and what the kept part needs to make sense.
func (a *analysis) turnPrefix(req Request) string {
	request := "(not visible in the kept part)"
	if r := a.requests(); len(r) > 0 {
		request = requestLine(r[0], 600)
	} else if len(a.turns) > 0 && a.turns[0].request != "" {
		request = summaryOf(a.turns[0].request, 600)
	}
	progress := a.done(0)
	if len(progress) == 0 {
		// Nothing changed yet: what was read shows how far it got.
		var read []string
		for _, act := range a.actions {
			if act.kind == actRead && act.ok && act.path != "" {
				read = addUnique(read, "`"+act.path+"`")
			}
		}
		if len(read) > 0 {
			progress = append(progress, "Read "+strings.Join(read, ", "))
		}
	}
	var ctxItems []string
	if s := a.lastStep(); s != "" && !strings.Contains(s, " fails: ") {
		ctxItems = append(ctxItems, "Where it stopped: "+s) // a failure is listed as open below
	}
	if ap := a.approach(); ap != "" {
		ctxItems = append(ctxItems, "Approach: "+ap)
	}
	for _, b := range a.blocked(0) {
		ctxItems = addUnique(ctxItems, "Open: "+b)
	}
	for _, e := range a.environment() {
		ctxItems = addUnique(ctxItems, e)
	}
	for _, f := range a.findings() {
		ctxItems = addUnique(ctxItems, "Found: "+f)
	}
	progressText := request + "\n" + strings.Join(progress, "\n") + "\n" + strings.Join(ctxItems, "\n")
	for _, l := range a.idsLines(progressText) {
		ctxItems = addUnique(ctxItems, l)
	}
	for _, d := range a.decisions(0) {
		ctxItems = addUnique(ctxItems, d)
	}
	for _, n := range a.next(false, nil) {
		ctxItems = addUnique(ctxItems, "Next: "+n)
	}
	for _, s := range a.statusLines(0) {
		ctxItems = addUnique(ctxItems, "Last seen: "+s)
	}
	for _, n := range a.notes {
		ctxItems = addUnique(ctxItems, "Context note: "+n)
	}
	if t := a.lastText(); t != "" {
		note := clip(t, 320)
		dup := false
		for _, c := range ctxItems {
			if strings.Contains(c, note) {
				dup = true
			}
		}
		if !dup {
			ctxItems = addUnique(ctxItems, "Last assistant note: "+note)
		}
	}
	if req.CustomInstructions != "" {
		ctxItems = addUnique(ctxItems, "Requested focus: "+clip(req.CustomInstructions, 240))
	}
	var b strings.Builder
	if t := tidyItem(request); t != "" {
		request = t
	}
	b.WriteString("## Original Request\n" + request + "\n\n")
	b.WriteString("## Progress So Far\n" + a.bullets(progress, "- ", maxDone) + "\n\n")
	b.WriteString("## Context Needed to Continue\n" + a.bullets(ctxItems, "- ", maxListItems+2))
	return b.String()
}
