package compaction

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Tool calls as the extractive summarizer reads them: what a call did (a file changed, a
// check run, a command that changed something, an inspection), its outcome line, and
// whether a failure was resolved later.

type actionKind int

const (
	actRead    actionKind = iota // read a file
	actModify                    // edit or write a file
	actCheck                     // a test, build, lint or type check, a CI wait
	actChange                    // a command that changes something (push, merge, apply, install, migrate)
	actInspect                   // a read-only command (ls, rg, git log, kubectl get)
	actOther                     // another tool
)

type action struct {
	kind      actionKind
	tool      string
	path      string // read, edit, write
	command   string // bash
	args      string // another tool's call as a label: its name and main argument
	delegate  string // a task handed to another agent: what it was asked
	hasResult bool
	ok        bool
	output    string
	purpose   string // the assistant's words in the message that made the call
	turn      int
	seq       int // order in the span
	resolved  bool
	bash      bool      // a user ! command (bashExecution)
	ids       []typedID // ids among another tool's arguments (see callIDs)
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

var (
	checkRe = keyed(`(?i)(\b(?:test|tests|pytest|vitest|jest|playwright|mocha|rspec|phpunit|clippy|lint|eslint|golangci-lint|ruff|flake8|mypy|pyright|tsc|typecheck|type-check|check|vet|build|compile|e2e|integration|bench|benchmark|verify|validate)\b|\bgh (?:pr checks|run watch)\b|\bgo (?:test|build|vet)\b|\bcargo (?:test|build|check|clippy|bench)\b|\bmake\b)`)
	// inspectRe is a command that only reads: the first word of each step of a chain.
	inspectRe  = regexp.MustCompile(`^(?:sudo )?(?:ls|cat|head|tail|less|more|rg|grep|egrep|zgrep|find|fd|wc|jq|yq|stat|file|du|df|lsof|ps|env|printenv|echo|pwd|which|type|tree|diff|cmp|sort|uniq|awk|sed -n|cut|tr|xargs|date|uname|whoami|id|nproc|free|top|curl -s|curl -I|dig|nslookup|host|ping|time|go (?:list|env|version|doc|tool (?:nm|pprof|objdump))|git (?:log|status|diff|show|branch|remote|fetch|blame|rev-parse|describe|ls-files|grep|tag -l|stash list)|kubectl (?:-n \S+ )?(?:get|describe|logs|top|explain|version|config view)|gh (?:run view|run list|pr view|pr list|pr diff|issue view|issue list|api|repo view)|docker (?:ps|logs|images|inspect|version|info)|npm (?:ls|view|outdated)|pnpm (?:ls|why)|pip (?:show|list|freeze)|psql\b.*\bselect\b|sqlite3\b.*\bselect\b|terraform (?:show|output|state list)|airflow (?:dags list|tasks list))\b`)
	exitLineRe = regexp.MustCompile(`(?m)^\s*Command exited with code \d+\s*$`)
)

var changeRe = keyed(`(?i)\b(?:git (?:push|commit|merge|cherry-pick|rebase)|gh pr (?:create|merge)|kubectl (?:-n \S+ )?apply|terraform apply|docker compose up|install|upgrade|migrate)\b`)

// classifyCommand tells what a bash command does.
func classifyCommand(command string) actionKind {
	steps := splitChain(command)
	allInspect := len(steps) > 0
	for _, s := range steps {
		if !inspectRe.MatchString(strings.ToLower(s)) {
			allInspect = false
		}
	}
	if allInspect {
		return actInspect
	}
	if checkRe.MatchString(command) && !changeRe.MatchString(command) {
		return actCheck
	}
	return actChange
}

// splitChain are the commands of a shell chain or pipeline (split at &&, ||, ; and |
// outside quotes), environment assignments and a leading cd dropped.
func splitChain(command string) []string {
	var out []string
	for _, st := range shellSteps(command) {
		if st == "cd" || strings.HasPrefix(st, "cd ") {
			continue
		}
		out = append(out, st)
	}
	return out
}

// family is what makes two runs of a command the same check: the program and its
// subcommand (and a script name after run), without flags and targets.
func family(command string) string {
	steps := splitChain(command)
	var keys []string
	for _, s := range steps {
		f := strings.Fields(s)
		var k []string
		for _, w := range f {
			if strings.HasPrefix(w, "-") || strings.ContainsAny(w, "/.=$\"'") {
				if len(k) >= 1 {
					break
				}
				continue
			}
			k = append(k, w)
			if len(k) == 2 && k[1] != "run" && k[1] != "exec" && k[1] != "x" {
				break
			}
			if len(k) == 3 {
				break
			}
		}
		if len(k) > 0 {
			keys = append(keys, strings.Join(k, " "))
		}
	}
	return strings.Join(keys, " && ")
}

// resultText is a tool result's text without Pi's exit-code trailer.
func resultText(m *session.Message) string {
	t := strings.TrimSpace(m.Text("\n"))
	if !strings.Contains(t, "Command exited with code") {
		return t
	}
	return strings.TrimSpace(exitLineRe.ReplaceAllString(t, ""))
}

var (
	errWordRe       = keyed(`(?i)\b(error|err!|exception|traceback|fatal|panic|panicked|conflict|denied|refused|not found|undefined|cannot|can't|could not|couldn't|unable|no such|timed out|timeout|exceeded|killed|no matching|failed|failure|fail|missing|invalid|unresolved|eresolve|enoent|✘|✗)\b|✘|✗`)
	noiseLnRe       = keyed(`(?i)^(?:hint:|note:|warning:|npm err!\s*$|#\d+ \d+\.\d+ warning|\s*at |\s*\|\s*$|\s*\d+ \|)`)
	bareFailRe      = keyed(`(?i)^(?:fail|failed|error|FAIL\s+\S+\s+[\d.]+s|FAIL\s+\S+|make: \*\*\*.*|error: could not compile.*|npm err! (?:code|errno|syscall) .*|#\d+ ERROR: process .*)$`)
	goFailRe        = regexp.MustCompile(`^--- FAIL: `)
	pyExcRe         = regexp.MustCompile(`^[\w.]+(?:Error|Exception|Exit|Interrupt)\b.*`)
	strongSuccessRe = keyed(`(?i)(\b\d+ passed\b|\bpassed\b|\bsucceeded\b|\bsuccessfully\b|\bcreated\b|\bmerged\b|\brolled out\b|\bapplied\b|\bRunning upgrade\b|\btest result: ok\b|\bPlan: \d+ to add\b|https?://\S+|\bpushed\b|\bdeployed\b|\bBackfill done\b|\bimported\b)`)
	successRe       = keyed(`(?i)(\b\d+ passed\b|\bpassed\b|^ok\b|\bPASS\b|\bsucceeded\b|\bsuccessfully\b|✓|✔|\bcreated\b|\bmerged\b|\bRunning\b|\brolled out\b|\bapplied\b|\bRunning upgrade\b|\bFinished\b|\b0 failed\b|\btest result: ok\b|\bPlan: \d+ to add\b|\bdone\b|\bconfigured\b|\bStarted\b|\bpushed\b|https?://\S+|\bimported\b|\bset up to track\b|\bBackfill done\b)`)
)

// errorLine is the line of a failed result that says what failed: a test's failure with
// its message, an exception, a compiler error, rather than a "FAIL" or a hint.
func errorLine(out string) string {
	l, _ := errorLineScore(out)
	return outputLine(l)
}

// outputLine is a line of a tool's output as a summary quotes it: output, not an entity,
// so its backticks (a shell's `quote', a template literal) become quotes and it is
// bounded.
func outputLine(l string) string {
	return clip(strings.ReplaceAll(l, "`", "'"), maxSpan)
}

// errorLineScore is errorLine and how strongly the line reads as an error (4 and more:
// an exception, a failed test, a line with two error words).
func errorLineScore(out string) (string, int) {
	lines := strings.Split(out, "\n")
	best, bestScore := "", -100
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		if l == "" {
			continue
		}
		score := 0
		switch {
		case goFailRe.MatchString(l):
			score = 5
			if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" && !goFailRe.MatchString(strings.TrimSpace(lines[i+1])) {
				l = l + " " + strings.TrimSpace(lines[i+1])
			}
		case pyExcRe.MatchString(l) && strings.Contains(l, ":"):
			score = 5
		default:
			score = 2 * len(errWordRe.FindAllString(l, 3))
		}
		if bareFailRe.MatchString(l) {
			score -= 3
		}
		if noiseLnRe.MatchString(raw) {
			score -= 4
		}
		if score > bestScore {
			best, bestScore = l, score
		}
	}
	if bestScore <= 0 && len(lines) > 0 {
		// Nothing reads as an error: the last line says how it ended.
		for i := len(lines) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(lines[i]); l != "" {
				return clip(l, 220), bestScore
			}
		}
	}
	return clip(best, 220), bestScore
}

var matchLineRe = regexp.MustCompile(`^((?:[\w.\-]+/)*[\w.\-]+\.\w+):\d+[:-]`)

// searchSummary is a search's output (path:line:text lines) as the files it matched,
// "" for other output.
func searchSummary(lines []string) string {
	var files []string
	n := 0
	for _, l := range lines {
		m := matchLineRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n++
		files = addUnique(files, m[1])
	}
	if n < 2 || n*2 < len(lines) {
		return ""
	}
	more := ""
	if len(files) > 6 {
		more = fmt.Sprintf(" (+%d more)", len(files)-6)
		files = files[:6]
	}
	return fmt.Sprintf("%d matches in %s%s", n, strings.Join(files, ", "), more)
}

// successLine is the line of a result that says how it went: a count of tests passed,
// the URL created, the status reached, the files a search matched; "" when nothing says
// so.
func successLineRaw(out string) string {
	lines := nonEmpty(strings.Split(out, "\n"))
	if len(lines) == 0 || out == "(no output)" {
		return ""
	}
	if s := searchSummary(lines); s != "" {
		return s
	}
	// Go's test output: one ok line per package.
	oks := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "ok\t") {
			oks++
		}
	}
	if oks > 1 && oks == len(lines) {
		return fmt.Sprintf("%d packages ok", oks)
	}
	// The line that says most: a strong outcome (merged, passed, created, a URL) before
	// a mere tick or "done", the last one of its rank.
	best, rank := "", 0
	for _, l := range lines {
		if !successRe.MatchString(l) || errWordRe.MatchString(strings.ReplaceAll(l, "0 failed", "")) {
			continue
		}
		r := 1
		if strongSuccessRe.MatchString(l) {
			r = 2
		}
		if r >= rank {
			best, rank = l, r
		}
	}
	if best == "" {
		// A short answer is its own outcome; a longer one ends with it.
		if len(lines) <= 3 && len(strings.Join(lines, "; ")) <= 160 {
			best = strings.Join(lines, "; ")
		} else if l := lines[len(lines)-1]; len(l) <= 160 && !errWordRe.MatchString(l) {
			best = l
		}
	}
	return clip(strings.Join(strings.Fields(best), " "), 200)
}

func nonEmpty(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// cmdSpan is a command as written in a summary: whole in backticks when it is short
// enough, else its first step (still whole), else the program's name.
func cmdSpan(command string) string {
	c := oneLine(command)
	if !strings.Contains(strings.TrimSpace(command), "\n") && len(c) <= 120 && !strings.Contains(c, "`") && !strings.HasPrefix(c, "#") {
		return "`" + c + "`"
	}
	steps := significantSteps(command)
	if len(steps) == 0 {
		return "a command"
	}
	s := oneLine(steps[0])
	more := len(steps) > 1 || s != c
	if strings.Contains(s, "`") {
		s, more = strings.Fields(strings.ReplaceAll(s, "`", " "))[0], true
	}
	if len(s) > 120 {
		if cut := safeCut(s, 120); cut != "" {
			s = cut
		} else {
			s = strings.Fields(s)[0]
		}
		more = true
	}
	if more {
		return "`" + s + "` (…)"
	}
	return "`" + s + "`"
}

// exploratory reports whether a failed action is part of looking around (a missing file
// read, a search without matches) rather than a failure of the work.
func (a *action) exploratory() bool {
	switch a.kind {
	case actRead, actInspect:
		return true
	case actOther:
		return true
	}
	return false
}

// grepNoMatch: grep and rg exit 1 with no output when nothing matches.
func grepNoMatch(command, out string) bool {
	steps := splitChain(command)
	if len(steps) == 0 {
		return false
	}
	f := strings.Fields(steps[len(steps)-1])
	return len(f) > 0 && (f[0] == "grep" || f[0] == "rg" || f[0] == "zgrep") && strings.TrimSpace(out) == ""
}

// otherLabel names a call of another tool by its name and its main argument (what it
// searched, fetched or looked at), bounded.
func otherLabel(b session.Block) string {
	label := "`" + strings.ReplaceAll(b.Name, "`", "") + "`"
	for _, k := range []string{"pattern", "query", "url", "path", "file_path", "description", "name", "prompt", "command", "sql", "id", "bash_id", "shell_id"} {
		if v := oneLine(argString(b, k)); v != "" {
			return label + " " + strings.ReplaceAll(clip("\""+strings.ReplaceAll(v, "`", "'")+"\"", 100), "`", "'")
		}
	}
	return label
}

// delegatedTask is what a call hands to another agent (Claude Code's Task tool, a Pi
// subagent extension): its short description, else the start of its prompt.
func delegatedTask(b session.Block) string {
	n := strings.ToLower(b.Name)
	if n != "task" && n != "agent" && !strings.Contains(n, "subagent") && !strings.Contains(n, "delegate") {
		return ""
	}
	d := oneLine(argString(b, "description"))
	if d == "" {
		d = oneLine(argString(b, "task"))
	}
	if d == "" {
		d = oneLine(argString(b, "prompt"))
	}
	if d == "" {
		return ""
	}
	if who := argString(b, "subagent_type"); who != "" {
		d += " (" + who + ")"
	}
	return clip(d, 160)
}

// successLine is the line of a successful result that says what it did.
func successLine(out string) string { return outputLine(successLineRaw(out)) }
