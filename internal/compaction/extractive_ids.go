package compaction

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Ids the agent typed: a pod, a CI run, a pull request, a release tag, a commit, a
// record it fetched by hash. They are what the next agent cannot guess and has to name
// again, so the checkpoint keeps the few of them the work used last, each with its role
// (the tool or command that took it, the argument it was). Numbers that are no id (a
// count, a port, a line number) are not ids: an id has a shape (hex with letters and
// digits, a #number, a vN.N tag, a pod name, a UUID) or is the number a `gh` command
// names.

var (
	idShapeRe = regexp.MustCompile(`^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{7,64}|#\d{2,}|v\d+\.\d+(?:\.\d+)?(?:-[\w.]+)?|[a-z][a-z0-9]*(?:-[a-z0-9]+)*-[a-z0-9]{8,10}-[a-z0-9]{5})$`)
	idTokenRe = regexp.MustCompile(`[#\w.-]+`)
	ghNumRe   = regexp.MustCompile(`\bgh (pr|run|issue|release) (view|checkout|merge|close|comment|watch|rerun|diff|review|edit|ready|download|cancel) (\d+|v[\w.-]+)\b`)
	pullURLRe = regexp.MustCompile(`https://github\.com/[\w.-]+/[\w.-]+/pull/(\d+)`)
)

// typedID is an id, its role and what it names (a title the same call gave, "" when none).
type typedID struct{ id, role, what string }

// isID reports whether a token has the shape of an id; hex needs a letter and a digit
// (so a word or a plain number is not one).
func isID(tok string) bool {
	if !idShapeRe.MatchString(tok) {
		return false
	}
	if strings.HasPrefix(tok, "#") || strings.HasPrefix(tok, "v") || strings.Contains(tok, "-") {
		return true
	}
	return strings.ContainsAny(tok, "abcdef") && strings.ContainsAny(tok, "0123456789")
}

// callIDs are the ids among a tool call's arguments (what it wrote into files aside),
// each with the argument's name; a short title or name argument of the same call goes
// with them, so "hash 3f9c…" says what it was the hash of.
func callIDs(b session.Block) []typedID {
	var m map[string]any
	if json.Unmarshal(b.Arguments, &m) != nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	what := ""
	for _, k := range []string{"title", "name", "description"} {
		if s, ok := m[k].(string); ok && len(s) <= 80 && !isID(s) {
			what = oneLine(s)
			break
		}
	}
	label := "`" + strings.ReplaceAll(b.Name, "`", "") + "`"
	var out []typedID
	for _, k := range keys {
		s, ok := m[k].(string)
		if !ok || len(s) > 120 || strings.Contains(s, "/") {
			continue
		}
		if s = strings.TrimSpace(s); isID(s) {
			out = append(out, typedID{s, k + " for " + label, clip(strings.ReplaceAll(what, "`", "'"), 48)})
		}
	}
	return out
}

// commandIDs are the ids a shell command names, with the command as their role, and the
// pull request a command opened (its URL in the output).
func commandIDs(act *action) []typedID {
	var out []typedID
	role := cmdSpan(act.command)
	for _, line := range strings.Split(act.command, "\n") {
		if m := ghNumRe.FindStringSubmatch(line); m != nil {
			id := m[3]
			if m[1] == "pr" || m[1] == "issue" {
				id = "#" + id
			}
			out = append(out, typedID{id, "`gh " + m[1] + " " + m[2] + "`", ""})
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue // a comment
		}
		for _, tok := range idTokenRe.FindAllString(line, -1) {
			tok = strings.Trim(tok, ".-")
			if isID(tok) {
				out = append(out, typedID{tok, role, ""})
			}
		}
	}
	if act.hasResult && act.ok && strings.Contains(act.command, "pr create") {
		if m := pullURLRe.FindStringSubmatch(act.output); m != nil {
			out = append(out, typedID{"#" + m[1], "pull request opened by " + role, ""})
		}
	}
	return out
}

// typedIDs are the ids of the span's calls, each once (its first role), the newest six.
func (a *analysis) typedIDs() []typedID {
	var out []typedID
	seen := map[string]bool{}
	for _, act := range a.eachAction() {
		ids := act.ids
		if act.command != "" {
			ids = commandIDs(act)
		}
		for _, id := range ids {
			if !seen[id.id] {
				seen[id.id] = true
				out = append(out, id)
			}
		}
	}
	return newest(out, 6)
}

// idsLines are the Critical Context lines of the ids not already in the summary's text:
// one line per role, at most three ids a line (so no line outgrows the bound), the
// newest three lines.
func (a *analysis) idsLines(written string) []string {
	var roles []string
	byRole := map[string][]string{}
	for _, id := range a.typedIDs() {
		if strings.Contains(written, id.id) {
			continue // already said with its role (a Done command, a failure)
		}
		part := "`" + id.id + "`"
		if id.what != "" {
			part += " (" + id.what + ")"
		}
		if byRole[id.role] == nil {
			roles = append(roles, id.role)
		}
		byRole[id.role] = append(byRole[id.role], part)
	}
	var out []string
	for _, r := range roles {
		parts := byRole[r]
		for len(parts) > 0 {
			n := min(3, len(parts))
			out = append(out, "Ids used, "+r+": "+strings.Join(parts[:n], "; "))
			parts = parts[n:]
		}
	}
	return newest(out, 3) // ids are context, not the whole of it
}
