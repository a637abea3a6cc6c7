package compaction

import (
	"strings"
)

// Environment errors: a tool or module that is not installed, a permission the sandbox
// does not grant, a network that is not there. They say what the machine is like, not
// what the work is stuck on: the next agent needs them once, as context (so it does not
// try the same thing again), and a list of blockers that repeats them hides the real ones.

var envErrorRe = keyed(`(?i)(command not found|: not found$|is not recognized as an internal or external command|executable file not found|no such file or directory: '?[\w./-]*(?:python|node|npm|go|cargo|docker)|permission denied|operation not permitted|eacces\b|eperm\b|network is unreachable|could not resolve host|temporary failure in name resolution|name or service not known|getaddrinfo enotfound|enotfound\b|connection refused|econnrefused\b|no route to host|modulenotfounderror|no module named|cannot find module|importerror: cannot import|is not installed|not installed\b|unknown command|no such command)`)

// envError is the line of a failed action's output that reports an environment error
// (the shortest such line: the error itself rather than a retry warning quoting it) and
// the kind of error it is, "" when the failure is of another kind.
func envError(act *action) (line, kind string) {
	if !act.hasResult || act.ok {
		return "", ""
	}
	for _, l := range strings.Split(act.output, "\n") {
		l = strings.TrimSpace(l)
		if m := envErrorRe.FindString(l); m != "" && (line == "" || len(l) < len(line)) {
			line, kind = l, strings.ToLower(m)
		}
	}
	return clip(outputLine(line), 160), kind
}

// environment are the environment errors of the span, each once (the same kind of
// error from several calls is one fact), newest last.
func (a *analysis) environment() []string {
	var out []string
	seen := map[string]bool{}
	for i, act := range a.eachAction() {
		e, kind := envError(act)
		if e == "" || seen[kind] || a.retriedOK(i) {
			continue
		}
		seen[kind] = true
		what := act.tool
		switch {
		case act.command != "":
			what = cmdSpan(act.command)
		case act.args != "":
			what = act.args
		}
		out = append(out, "Environment: "+what+" fails with \""+strings.Trim(e, "\"")+"\"")
	}
	return newest(out, 3)
}

// retriedOK reports whether the failed action i was run again later and worked: the
// environment was set right (the database started, the tool installed), so its error is
// no fact about the machine any more.
func (a *analysis) retriedOK(i int) bool {
	f := a.actions[i]
	for _, g := range a.actions[i+1:] {
		if a.stop() {
			return false
		}
		if !g.hasResult || !g.ok {
			continue
		}
		if f.command != "" && g.command != "" && (family(f.command) == family(g.command) || commandTarget(f.command) == commandTarget(g.command)) {
			return true
		}
		if f.command == "" && f.tool == g.tool && f.args == g.args {
			return true
		}
	}
	return false
}

func isEnvError(act *action) bool { l, _ := envError(act); return l != "" }
