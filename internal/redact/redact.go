// Package redact replaces credentials in text that pi-lsp writes or shows with a marker
// naming their kind, "[redacted: github-pat]".
//
// Invariant: the output of String never contains a match of any rule, and text in which
// no rule matches is returned unchanged, byte for byte; JSON does the same for the
// strings of a JSON text (decoded, so an escape hides nothing) and keeps it valid. Only
// the secret part of a match is replaced: "Authorization: Bearer " and "DB_PASSWORD="
// stay before the marker, and a URL keeps its scheme, user and host.
//
// String (or JSON) is the one function every output of session text goes through, at
// the place that output is made: the summary of every compaction (compaction.Generate
// and Run, whatever supplied it: a summarizer, a hook, a --summary-file, an edited
// preview, a draft; the drafts cache), every branch summary (branch), the coverage list
// (compaction.CheckCoverage, each entity before it is cut), the placeholders of
// clear-tool-output (contextedit, the call's arguments before they are cut), every LSP
// notification and error answer (internal/rpc's conn, on the JSON it writes), and the
// CLI's error lines (cmd/pi-lsp). The CLI's summaries are the entries written, already
// redacted. A key command is described by its program only (catalog.DescribeValue), so
// its NAME=value words reach no output at all. The request to a model is left as Pi's.
//
// The rules are three tables in the order they run (rules.go): hand-written rules for
// the formats whose matching needs code (private keys) or that pi-lsp's users meet most
// (model providers, forges, cloud keys, JWTs), each citing the format's documentation;
// formats.go, a table of prefixed token formats as data (id, description, keywords,
// pattern) following gitleaks' default rule set, restricted to formats whose prefix alone
// tells them apart; and assign.go, the secrets known by their name (NAME_PASSWORD=…,
// export TOKEN=…, YAML password:, AccountKey=…, SECRET_KEY = '…', --api-key …, mysql -p…,
// sshpass -p …), each narrowed by a check that the value looks like a credential and the
// name does not hold something else (a key's id, a token's URL), with gitleaks' examples
// of its generic rule and ordinary code as the near misses they are tested on. gitleaks'
// code and TOML are not used: its config loader brings 45 packages (viper and its
// formats) and 1.7 MB into the binary, and 130 of its 222 rules need an entropy
// threshold and a word nearby, which the assignment rules replace.
//
// Matching is cheap on large text: every match of a rule starts with one of its literal
// keywords (the prefilter, prefilter.go); one pass over the text, a table look-up per
// byte, finds which rules have a keyword in it, and only their patterns run, each from
// an occurrence of a keyword and over a bounded window where the pattern is bounded. The
// patterns are RE2, so any input is matched in time linear in its length.
package redact

import (
	"regexp"
	"slices"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/asciifold"
)

// Kind names what a redacted secret was.
type Kind string

// The kinds of secret a rule recognises.
const (
	PrivateKey          Kind = "private-key"
	AnthropicAPIKey     Kind = "anthropic-api-key"
	OpenAIAPIKey        Kind = "openai-api-key"
	OpenRouterAPIKey    Kind = "openrouter-api-key"
	APIKey              Kind = "api-key"
	GitHubPAT           Kind = "github-pat"
	GitHubToken         Kind = "github-token"
	GitLabPAT           Kind = "gitlab-pat"
	GitLabToken         Kind = "gitlab-token"
	SlackToken          Kind = "slack-token"
	SlackWebhook        Kind = "slack-webhook"
	AWSAccessKeyID      Kind = "aws-access-key-id"
	AWSSecretAccessKey  Kind = "aws-secret-access-key"
	GoogleAPIKey        Kind = "google-api-key"
	StripeKey           Kind = "stripe-key"
	NPMToken            Kind = "npm-token"
	PyPIToken           Kind = "pypi-token"
	HuggingFaceToken    Kind = "huggingface-token"
	SendGridAPIKey      Kind = "sendgrid-api-key"
	DigitalOceanToken   Kind = "digitalocean-token"
	ShopifyToken        Kind = "shopify-token"
	JWT                 Kind = "jwt"
	AuthorizationHeader Kind = "authorization-header"
	APIKeyHeader        Kind = "api-key-header"
	URLPassword         Kind = "url-password"
)

// Marker is the text that replaces a secret of kind k.
func Marker(k Kind) string { return markerOpen + string(k) + "]" }

const markerOpen = "[redacted: "

// String returns s with every secret replaced by its kind's marker.
func String(s string) string {
	out, _ := Redact(s)
	return out
}

// Redact returns s with every secret replaced by its kind's marker, and the kinds found,
// each once, in the order of the rule table.
func Redact(s string) (string, []Kind) {
	var kinds []Kind
	// No secret can take in a marker (its "[" and its space end every rule's secret),
	// so one pass finds every match but those that the removal of a secret creates: a
	// marker next to a letter or digit makes a word boundary that was not there
	// ("AKIA…" run into "ghp_…"). Then the text is searched again; each replacement
	// removes at least one byte of the input, so this ends.
	for {
		again := false
		has := present(s)
		for i := range rules {
			if !has[i] {
				continue
			}
			r := &rules[i]
			spans := r.find(s, false)
			if len(spans) == 0 {
				continue
			}
			var adjacent bool
			s, adjacent = replace(s, spans, Marker(r.kind))
			again = again || adjacent
			if !slices.Contains(kinds, r.kind) {
				kinds = append(kinds, r.kind)
			}
		}
		if !again {
			break
		}
	}
	slices.SortStableFunc(kinds, func(a, b Kind) int { return kindOrder(a) - kindOrder(b) })
	return s, kinds
}

// Has reports whether any rule matches s.
func Has(s string) bool {
	has := present(s)
	for i := range rules {
		if has[i] && len(rules[i].find(s, true)) > 0 {
			return true
		}
	}
	return false
}

// Kinds lists every kind a rule recognises, in table order.
func Kinds() []Kind {
	var out []Kind
	for _, r := range rules {
		if !slices.Contains(out, r.kind) {
			out = append(out, r.kind)
		}
	}
	return out
}

func kindOrder(k Kind) int {
	for i, r := range rules {
		if r.kind == k {
			return i
		}
	}
	return len(rules)
}

// span is the secret part of a match: s[start:end].
type span struct{ start, end int }

// replace puts marker in place of each span, and reports whether a marker is next to a
// letter, digit or underscore.
func replace(s string, spans []span, marker string) (string, bool) {
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	adjacent := false
	for _, sp := range spans {
		if sp.start > 0 && isWord(s[sp.start-1]) || sp.end < len(s) && isWord(s[sp.end]) {
			adjacent = true
		}
		b.WriteString(s[last:sp.start])
		b.WriteString(marker)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String(), adjacent
}

func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// rule is one format: what re matches at an occurrence of one of its anchors (or, for a
// rule with match, what match returns there). Every match starts with an anchor.
type rule struct {
	kind Kind
	// description says what the rule finds (for a rule of the data tables).
	description string
	// anchors are the literals a match starts with.
	anchors []string
	// fold marks a rule whose anchors are lowercase and match in any ASCII case; its re
	// spells letters as [Aa] classes (see ci) so that it agrees with the anchors.
	fold bool
	// wordStart requires that the byte before a match is not a letter, digit or _ (the
	// escape \n, \r or \t of a JSON or shell string before it counts as a separator).
	wordStart bool
	// re is anchored (it starts with ^) and runs on the text from the anchor; its group
	// named "s", when present, is the secret (otherwise the whole match is).
	re *regexp.Regexp
	// match, when set instead of re, returns the end of the secret that starts at
	// s[i:], or -1.
	match func(s string, i int) int
	// quick, when set, is a cheap test that an occurrence at i may match, run before re.
	quick func(s string, i int) bool
	// skip, when set, is where to look next after no match at i: an occurrence before it
	// cannot match either. Without it the search goes on from i+1.
	skip func(s string, i int) int
	// window, when set, bounds a match's length: re runs on that many bytes from the
	// anchor (which lets Go's regexp use its faster backtracker on a bounded pattern).
	window int
	// value, when set, finds the secret after re's match: its end, from the match's end
	// (or an end not after it: no secret there).
	value func(s string, i int) int
	// accept, when set, decides on a match of re at i whose secret is secret: g returns
	// the text of a named group ("" for the whole match of re).
	accept func(s string, i int, secret string, g func(name string) string) bool
	// repeat: after a match, re runs again from the same anchor for further secrets of
	// the same match (a command that gives its password flag twice, redis-cli -a x -a y),
	// each secret found masked so that re, which refuses a value that starts with '[' (a
	// marker), moves on to the next one. Needs re, without value.
	repeat bool
}

// secretGroups are the indexes of re's groups that hold the secret: "s", or "s1", "s2",
// ... in the alternatives of a rule that has several.
func secretGroups(re *regexp.Regexp) []int {
	var out []int
	for i, n := range re.SubexpNames() {
		if n == "s" || len(n) > 1 && n[0] == 's' && strings.Trim(n[1:], "0123456789") == "" {
			out = append(out, i)
		}
	}
	return out
}

// find returns the secrets of r's matches in s, in order and not overlapping (only the
// first when first is set). Each occurrence of an anchor is tried in turn; an attempt
// that fails stops within a bounded distance, or at the next occurrence, or (with
// skip) lets the search jump past what it read, so the whole search is linear in s.
func (r *rule) find(s string, first bool) []span {
	next := make([]int, len(r.anchors)) // next occurrence of each anchor at or after pos; -1: none left
	for i := range next {
		next[i] = -2
	}
	var groups []int
	if r.re != nil {
		groups = secretGroups(r.re)
	}
	var spans []span
	for pos := 0; pos < len(s); {
		at := -1
		for i, a := range r.anchors {
			if next[i] == -1 {
				continue
			}
			if next[i] < pos {
				j := index(s[pos:], a, r.fold)
				if j < 0 {
					next[i] = -1
					continue
				}
				next[i] = pos + j
			}
			if at < 0 || next[i] < at {
				at = next[i]
			}
		}
		if at < 0 {
			break
		}
		if r.wordStart && at > 0 && isWord(s[at-1]) && !(at > 1 && isEscape(s, at-2)) {
			pos = at + 1
			continue
		}
		start, end, matchEnd := -1, -1, -1
		tried := span{-1, -1} // the secret re found, before accept decided on it
		switch {
		case r.quick != nil && !r.quick(s, at):
		case r.match != nil:
			if e := r.match(s, at); e > at {
				start, end, matchEnd = at, e, e
			}
		default:
			in := s[at:]
			if r.window > 0 && len(in) > r.window {
				in = in[:r.window]
			}
			if m := r.re.FindStringSubmatchIndex(in); m != nil {
				start, end, matchEnd = at+m[0], at+m[1], at+m[1]
				for _, g := range groups {
					if m[2*g] >= 0 {
						start, end = at+m[2*g], at+m[2*g+1]
						break
					}
				}
				if r.value != nil {
					start, end = matchEnd, r.value(s, matchEnd)
					matchEnd = end
				}
				if !inMarker(s, at) {
					tried = span{start, end}
				}
				if end > start && r.accept != nil && (inMarker(s, at) || !r.accept(s, at, s[start:end], groupText(r.re, in, m))) {
					start, end = -1, -1
				}
				if end > start && r.value != nil {
					end = valueRunEnd(s, end) // the rest of a long value, once accepted
					matchEnd = end
				}
				if end > start && strings.HasPrefix(s[start:], markerOpen) {
					start, end = -1, -1 // a marker is never a secret
				}
			}
		}
		// A repeat rule's match may hold further secrets, also after a refused one (a $VAR).
		var more []span
		if r.repeat && tried.end > tried.start && (end <= start || !first) {
			var moreEnd int
			more, moreEnd = r.again(s, at, groups, tried)
			matchEnd = max(matchEnd, moreEnd)
		}
		if end <= start && len(more) == 0 {
			pos = at + 1
			if r.skip != nil {
				pos = max(pos, r.skip(s, at))
			}
			continue
		}
		if end > start {
			spans = append(spans, span{start, end})
		}
		spans = append(spans, more...)
		if first {
			break
		}
		pos = max(matchEnd, at+1)
	}
	return spans
}

// again finds the further secrets of a repeat rule's match at at past last, the secret
// re found first: re runs on a copy of its window in which every secret tried is masked
// ('[' and then 'x', same length, so positions hold), until it finds none past the last
// one. A value accept refuses is masked and passed over. It returns the secrets found and
// the end of the last match that held one (-1 for none).
func (r *rule) again(s string, at int, groups []int, last span) (spans []span, matchEnd int) {
	matchEnd = -1
	in := s[at:]
	if r.window > 0 && len(in) > r.window {
		in = in[:r.window]
	}
	buf := []byte(in)
	mask := func(sp span) {
		for i := sp.start - at; i < sp.end-at && i < len(buf); i++ {
			buf[i] = 'x'
		}
		if i := sp.start - at; i < len(buf) {
			buf[i] = '['
		}
	}
	for {
		mask(last)
		m := r.re.FindSubmatchIndex(buf)
		if m == nil {
			return spans, matchEnd
		}
		next := span{-1, -1}
		for _, g := range groups {
			if m[2*g] >= 0 {
				next = span{at + m[2*g], at + m[2*g+1]}
				break
			}
		}
		if next.start <= last.start || next.end <= next.start {
			return spans, matchEnd // no secret past the last one
		}
		last = next
		if r.accept != nil && !r.accept(s, at, s[next.start:next.end], groupText(r.re, string(buf), m)) ||
			strings.HasPrefix(s[next.start:], markerOpen) {
			continue
		}
		spans = append(spans, next)
		matchEnd = max(matchEnd, at+m[1])
	}
}

// inMarker reports whether s[i] is inside a marker's kind ("[redacted: secret-assignment]"
// holds the keyword "secret"), which no rule may match again.
func inMarker(s string, i int) bool {
	from := max(0, i-len(markerOpen)-maxKindLen)
	j := strings.LastIndex(s[from:i], markerOpen)
	return j >= 0 && !strings.ContainsAny(s[from+j+len(markerOpen):i], "] \n")
}

// maxKindLen bounds the length of a kind's name.
const maxKindLen = 48

// groupText is the text of a match's named groups.
func groupText(re *regexp.Regexp, s string, m []int) func(string) string {
	return func(name string) string {
		i := 0
		if name != "" {
			i = re.SubexpIndex(name)
		}
		if i < 0 || m[2*i] < 0 {
			return ""
		}
		return s[m[2*i]:m[2*i+1]]
	}
}

// index is strings.Index, or with fold its ASCII-case-insensitive form (lower is
// lowercase).
func index(s, lower string, fold bool) int {
	if !fold {
		return strings.Index(s, lower)
	}
	return asciifold.Index(s, lower)
}

// ci spells word so that a regexp matches it in any ASCII case: "Bearer" → "[Bb][Ee]...".
// (?i) would also fold a few non-ASCII letters, such as the long s, onto ASCII ones,
// which the anchor search would not find.
func ci(word string) string {
	var b strings.Builder
	for i := 0; i < len(word); i++ {
		c := word[i]
		switch {
		case 'a' <= c && c <= 'z':
			b.WriteString("[" + string(c-'a'+'A') + string(c) + "]")
		case 'A' <= c && c <= 'Z':
			b.WriteString("[" + string(c) + string(c-'A'+'a') + "]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// RuleCount is the number of rules in the table.
func RuleCount() int { return len(rules) }
