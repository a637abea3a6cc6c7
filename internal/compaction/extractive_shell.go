package compaction

import (
	"regexp"
	"strings"
)

// Shell commands read as the shell reads them, for labels: steps split at newlines, ";",
// "&&", "||" and "|" but never inside quotes, $(…), backticks or a here-document; comments
// and here-document bodies left out; the steps that only set up (cd, export, source,
// sleep, mkdir -p, set, a bare assignment) passed over, so a command is labelled by its
// first significant step.

var (
	heredocRe    = regexp.MustCompile(`<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)(['"]?)`)
	assignRe     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	setupCommand = map[string]bool{"cd": true, "pushd": true, "popd": true, "export": true, "source": true, ".": true, "sleep": true, "set": true, "unset": true, "true": true, ":": true}
)

// shellSteps are the steps of a command, each with leading assignments removed
// ("FOO=1 make" is make), here-document bodies and comments left out.
func shellSteps(command string) []string {
	var steps []string
	var cur strings.Builder
	quote := byte(0)
	depth := 0        // $( … ) and ( … ) nesting
	tick := false     // inside `…`
	var docs []string // here-document delimiters waiting for the end of the line
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			steps = append(steps, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case quote == '"':
			if c == '\\' && i+1 < len(command) {
				cur.WriteByte(c)
				i++
				c = command[i]
			} else if c == '"' {
				quote = 0
			}
		case c == '\\' && i+1 < len(command):
			if command[i+1] == '\n' { // a continued line
				i++
				cur.WriteByte(' ')
				continue
			}
			cur.WriteByte(c)
			i++
			c = command[i]
		case c == '\'' || c == '"':
			quote = c
		case c == '`':
			tick = !tick
		case tick:
		case c == '(':
			depth++
		case c == ')':
			if depth > 0 {
				depth--
			}
		case depth > 0:
		case c == '#' && (cur.Len() == 0 || strings.HasSuffix(cur.String(), " ") || strings.HasSuffix(cur.String(), "\t")):
			for i < len(command) && command[i] != '\n' {
				i++
			}
			i--
			continue
		case c == '<' && strings.HasPrefix(command[i:], "<<") && !strings.HasPrefix(command[i:], "<<<"):
			if m := heredocRe.FindStringSubmatchIndex(command[i:]); m != nil && m[0] == 0 {
				docs = append(docs, command[i+m[4]:i+m[5]])
				i += m[1] - 1
				continue // the operator is not part of the label
			}
		case c == '\n':
			flush()
			for _, d := range docs { // skip each here-document's body
				for i+1 < len(command) {
					end := strings.IndexByte(command[i+1:], '\n')
					line := command[i+1:]
					if end >= 0 {
						line = command[i+1 : i+1+end]
					}
					if end < 0 {
						i = len(command)
					} else {
						i += end + 1
					}
					if strings.TrimSpace(line) == d {
						break
					}
				}
			}
			docs = nil
			continue
		case c == ';' || c == '|' || (c == '&' && i+1 < len(command) && command[i+1] == '&'):
			flush()
			if i+1 < len(command) && (command[i+1] == '|' || command[i+1] == '&') {
				i++
			}
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	out := steps[:0]
	for _, s := range steps {
		for {
			f := strings.Fields(s)
			if len(f) > 1 && assignRe.MatchString(f[0]) && !strings.Contains(f[0], "$(") {
				s = strings.TrimSpace(strings.TrimPrefix(s, f[0]))
				continue
			}
			break
		}
		out = append(out, s)
	}
	return out
}

// setupStep reports whether a step only prepares the ones after it.
func setupStep(s string) bool {
	f := strings.Fields(s)
	if len(f) == 0 {
		return true
	}
	if setupCommand[f[0]] || (f[0] == "mkdir" && len(f) > 1 && f[1] == "-p") {
		return true
	}
	return assignRe.MatchString(f[0]) && len(f) == 1 || assignRe.MatchString(s) && !strings.Contains(s[strings.Index(s, "=")+1:], " ") ||
		assignRe.MatchString(f[0]) && balancedAssignment(s)
}

// balancedAssignment: the whole step is one assignment (its value quoted or a $(…)).
func balancedAssignment(s string) bool {
	v := s[strings.Index(s, "=")+1:]
	return strings.HasPrefix(v, "$(") && strings.HasSuffix(v, ")") || strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`) || strings.HasPrefix(v, "'") && strings.HasSuffix(v, "'")
}

// significantSteps are the steps that do the work; all steps when every one is set-up.
func significantSteps(command string) []string {
	steps := shellSteps(command)
	var out []string
	for _, s := range steps {
		if !setupStep(s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return steps
	}
	return out
}

// safeCut shortens a step to about max bytes at a space where no quote, $(…) or backtick
// is open, so the label is still a command someone could read; "" when there is none.
func safeCut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	quote := byte(0)
	depth := 0
	tick := false
	last := -1
	for i := 0; i < len(s) && i <= max; i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '`':
			tick = !tick
		case c == '(':
			depth++
		case c == ')':
			if depth > 0 {
				depth--
			}
		case c == ' ' && depth == 0 && !tick:
			last = i
		}
	}
	if last <= 0 {
		return ""
	}
	return strings.TrimSpace(s[:last])
}

// commandTarget is what a command acts on: the program of its first significant step
// and the word after it ("python -c", "npm test", "for file"); "" for none.
func commandTarget(command string) string {
	steps := significantSteps(command)
	if len(steps) == 0 {
		return ""
	}
	f := strings.Fields(steps[0])
	if len(f) == 0 {
		return ""
	}
	if len(f) == 1 {
		return f[0]
	}
	return f[0] + " " + f[1]
}
