package redact

import (
	"strconv"
	"strings"
)

// contextual is the table of secrets known by what names them rather than by their own
// shape: a value assigned to a name that says password, secret, token or key (in an
// environment file, a shell, YAML, JSON, a connection string, a framework's settings),
// a CLI flag of that name, and the password arguments of the clients that take one on
// the command line. The name and the operator stay; only the value is redacted. These
// are the rows where ordinary code could be mistaken for a secret, so each is narrowed
// by accept: the value must look like a credential (not an identifier, a variable
// reference, a call, a path, a number or a mask), and the name must not be one that
// holds something else (a key's id, a token's URL, a password's length).
var contextual = []format{
	{id: "password-assignment", description: "a value assigned to a password name: DB_PASSWORD=…, password: …, \"passwd\": \"…\", Pwd=… in a connection string, --password …",
		keywords: passwordNames, pattern: assignment(passwordNames), fold: true, accept: acceptAssignment, quick: assigns, window: 96, value: valueEnd},
	{id: "secret-assignment", description: "a value assigned to a secret, token or key name: export TOKEN=…, GITHUB_AUTH_TOKEN=…, SECRET_KEY = '…', secret_key_base: …, AccountKey=…, \"private_key_id\": \"…\", --api-key …",
		keywords: secretNames, pattern: assignment(secretNames), fold: true, accept: acceptAssignment, quick: assigns, window: 96, value: valueEnd},
	{id: "cli-password", description: "passwords given on a command line: mysql -p…, sshpass -p …, docker login -p …, redis-cli -a …, curl -u user:…",
		keywords: []string{"mysql", "mariadb", "sshpass", "docker", "podman", "nerdctl", "redis-cli", "curl"},
		pattern: `(?:(?:mysql|mariadb)[a-z]*[ \t](?:[^\n|;&<>]{0,200}?[ \t])??-p(?:` + cliValue(1) + `)` +
			`|sshpass[ \t]+(?:-[A-Za-z]+[ \t]+)*?-p[ \t]*(?:` + cliValue(4) + `)` +
			`|(?:docker|podman|nerdctl)[ \t]+login[ \t](?:[^\n|;&<>]{0,200}?[ \t])??(?:-p|--password)(?:[ \t]+|=)(?:` + cliValue(7) + `)` +
			`|redis-cli[ \t](?:[^\n|;&<>]{0,200}?[ \t])??-a[ \t]+(?:` + cliValue(10) + `)` +
			`|curl[ \t](?:[^\n|;&<>]{0,300}?[ \t])??(?:-u|--user)(?:[ \t]+|=)["']?[^\s:"']*:(?P<s13>[^\s"'\\\[][^\s"'\\]{0,255}))`,
		accept: acceptCLI, quick: hasPasswordFlag, window: 600, repeat: true},
}

// cliValue is a password argument: a quoted string (the quotes stay) or a word, in the
// secret groups s<n>, s<n+1>, s<n+2>.
func cliValue(n int) string {
	g := func(i int) string { return "(?P<s" + strconv.Itoa(n+i) + ">" }
	return `'` + g(0) + `[^'\n\[][^'\n]*)'|"` + g(1) + `[^"\n\[][^"\n]*)"|` + g(2) + `[^\s'"\\\[][^\s'"\\]{0,255})`
}

// The names that introduce a secret. A keyword may be part of a longer name
// (PGPASSWORD, GITHUB_AUTH_TOKEN, clientSecret): the match starts at the keyword, and the
// text before it is only looked at by accept.
var (
	passwordNames = []string{"password", "passwd", "passphrase", "pwd"}
	secretNames   = []string{"secret", "token", "apikey", "api_key", "api-key", "accesskey", "access_key", "privatekey", "private_key", "private-key",
		"accountkey", "credentials", "credential", "_key", "_auth"}
)

// assignment is the pattern of a name (a keyword and the rest of its word), optional
// closing quotes, emphasis or bracket (app.config['SECRET_KEY']), an operator (=, :, :=, =>, ?=,
// or white space, which accept allows only after a flag or a bare "password"), an
// optional opening quote (escaped, too, inside a JSON string), and the value: a run of
// characters that cannot end a word of a shell, YAML or JSON line.
func assignment(keywords []string) string {
	alts := make([]string, len(keywords))
	for i, k := range keywords {
		alts[i] = ci(k)
	}
	const quote = `(?:\\?["'` + "`" + `])?`
	// A summary may have set the name in bold (**password**: …).
	const closers = `(?:\\?["'` + "`" + `]|\*{1,2}){0,3}`
	return `(?P<n>(?:` + strings.Join(alts, "|") + `)[A-Za-z0-9_.-]{0,40})` + closers + `\]?` +
		`(?P<op>[ \t]*(?:=>|:=|\?=|:|=)[ \t]*|[ \t]+)` + quote
}

// valueEnd is the end of the value that starts at s[i:] (a run of characters that cannot
// end a word of a shell, YAML or JSON line, not starting with =, of at least minValue
// characters), or -1. The run is read up to maxValue bytes, so that a rejected value
// costs a bounded time; an accepted one is taken whole (valueRunEnd).
func valueEnd(s string, i int) int {
	if i >= len(s) || s[i] == '=' || !valueByte(s[i]) {
		return -1
	}
	j, end := i, min(len(s), i+maxValue)
	for j < end && valueByte(s[j]) {
		j++
	}
	if j-i < minValue {
		return -1
	}
	return j
}

const (
	maxValue = 512
	// minValue: shorter values are placeholders, flags and progress tokens ("k-1",
	// "stall-2") far more often than passwords.
	minValue = 8
)

// valueRunEnd is the end of the value's run of characters from i.
func valueRunEnd(s string, i int) int {
	for i < len(s) && valueByte(s[i]) {
		i++
	}
	return i
}

func valueByte(c byte) bool {
	return c > ' ' && c != 0x7f && strings.IndexByte("\"'`\\,;<>[]{}()|&", c) < 0
}

// acceptAssignment keeps a match whose name holds a secret and whose value looks like one.
func acceptAssignment(s string, at int, value string, g func(string) string) bool {
	name, op := g("n"), g("op")
	end := at + len(g("")) + len(value)
	if end < len(s) && s[end] == '(' {
		return false // a call: token = sha256(…)
	}
	if !secretName(name) || excludedBefore(s, at) {
		return false
	}
	if strings.TrimSpace(op) == "" {
		// A name and a value separated by white space only: a flag (--password x,
		// -password x) or a .netrc-style "password x"; in prose, no.
		lower := strings.ToLower(name)
		if !isFlagAt(s, at) && lower != "password" && lower != "passwd" {
			return false
		}
	}
	return plausibleSecret(value)
}

// secretName: the name's keyword ends its word or a camelCase part of it (secretKey,
// TOKEN_V2, api_key), and its last word is not one that names something else than the
// secret itself.
func secretName(name string) bool {
	lower := strings.ToLower(name)
	kw := ""
	for _, k := range append(append([]string(nil), passwordNames...), secretNames...) {
		if strings.HasPrefix(lower, k) && len(k) > len(kw) {
			kw = k
		}
	}
	tail := name[len(kw):]
	if tail != "" {
		c, last := tail[0], name[len(kw)-1]
		switch {
		case c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z' && 'a' <= last && last <= 'z': // camelCase
		default:
			return false // tokens, tokenizer, secretary, credentialsId
		}
	}
	words := splitWords(name)
	lastWord := words[len(words)-1]
	if lastWord == "id" && strings.Contains(lower, "private") {
		return true // a service account's private_key_id
	}
	return !notSecretWords[lastWord]
}

// notSecretWords end names that hold something about a secret, not the secret.
var notSecretWords = wordSet(`
	id ids name names length len size file files path dir url uri endpoint type types count
	limit max min env var field header prefix suffix format pattern regex policy ttl expiry
	expires expiration timeout mode host port user username hint prompt label placeholder help
	description message msg error text title version index usage budget ref store manager
	provider helper source location scope scopes storetype alias vault arn kind class method
	enabled required rotation tokens secrets keys`)

// splitWords splits a name at _, -, . and camelCase boundaries, lowercased.
func splitWords(name string) []string {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, strings.ToLower(cur.String()))
			cur.Reset()
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.':
			flush()
			continue
		case 'A' <= c && c <= 'Z' && i > 0 && 'a' <= name[i-1] && name[i-1] <= 'z':
			flush()
		}
		cur.WriteByte(c)
	}
	flush()
	if len(words) == 0 {
		words = []string{""}
	}
	return words
}

// excludedBefore reports whether the word before the keyword at s[at:] makes the name
// one of a non-secret: csrf_token, nextPageToken, public_key, primaryKey, max_tokens.
func excludedBefore(s string, at int) bool {
	i := at
	if i > 0 && (s[i-1] == '_' || s[i-1] == '-' || s[i-1] == '.') && s[at] != '_' {
		i--
	}
	j := i
	for j > 0 && (isLetter(s[j-1]) || '0' <= s[j-1] && s[j-1] <= '9') {
		j--
	}
	w := s[j:i]
	// The last camelCase part of the word.
	for k := len(w) - 1; k > 0; k-- {
		if 'A' <= w[k] && w[k] <= 'Z' && 'a' <= w[k-1] && w[k-1] <= 'z' {
			w = w[k:]
			break
		}
	}
	return notSecretBefore[strings.ToLower(w)]
}

var notSecretBefore = wordSet(`
	csrf xsrf public pub next page continuation pagination cancel cancellation sync max num
	total primary foreign sort partition cache idempotency row hash range dict map lookup unique
	composite natural bucket schema sequence object ssh gpg input output prompt completion
	reasoning cached context design lexer parser cancellationtoken dummy fake example sample
	done progress work`)

// wordSet is the set of the space-separated words of list.
func wordSet(list string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(list) {
		set[w] = true
	}
	return set
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isFlagAt reports whether the name at s[at:] is a command-line flag: "-" or "--" right
// before it, or before the word it ends (--db-password).
func isFlagAt(s string, at int) bool {
	i := at
	for i > 0 && (isLetter(s[i-1]) || '0' <= s[i-1] && s[i-1] <= '9' || s[i-1] == '-' || s[i-1] == '_') {
		i--
	}
	return i < at && s[i] == '-' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\n' || s[i-1] == '"' || s[i-1] == '\'')
}

// plausibleSecret reports whether an assigned value may be a credential: not an
// identifier or a dotted name (os.environ, process.env.TOKEN, true, None), not a
// reference ($TOKEN, %(secret)s, ${{ secrets.X }}), not a path, a URL, a number, a
// version or a mask (****, ...), and either holding a digit or long and mixed.
func plausibleSecret(v string) bool {
	switch v[0] {
	case '$', '%', '*', '#', '~', '.', '@', '!', '?', ':', '+', '-':
		return false
	}
	if v[0] == '/' && strings.Count(v, "/") > 1 || strings.Contains(v, "://") {
		return false
	}
	var lower, upper, digit, other int
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z':
			lower++
		case 'A' <= c && c <= 'Z':
			upper++
		case '0' <= c && c <= '9':
			digit++
		case c == '_' || c == '.' || c == '-' || c == ':':
			// separators of names, versions and times
		default:
			other++
		}
	}
	if lower+upper == 0 {
		return false // 12345678, 1.2.3, 2024-01-01, ****
	}
	if digit == 0 && other == 0 {
		return false // an identifier, a word, a dotted or dashed name
	}
	if digit == 0 {
		// Letters and symbols, no digit: a password only when long and mixed.
		classes := 0
		for _, n := range []int{lower, upper, other} {
			if n > 0 {
				classes++
			}
		}
		if len(v) < 12 || classes < 2 {
			return false
		}
	}
	l := strings.ToLower(v)
	for _, p := range []string{"example", "xxxxx", "changeme", "your_", "your-", "placeholder", "redacted"} {
		if strings.Contains(l, p) {
			return false
		}
	}
	return true
}

// assigns is a cheap test that the name at s[i:] is followed by an operator or a
// blank and then a character a value may start with.
func assigns(s string, i int) bool {
	j, end := i, min(len(s), i+48)
	for j < end && (isWord(s[j]) || s[j] == '.' || s[j] == '-') {
		j++
	}
	for j < len(s) && j < end+8 && strings.IndexByte("\\\"'`]* \t:=>?", s[j]) >= 0 {
		j++
	}
	return j < len(s) && j > i && strings.IndexByte("\\\"'`]* \t:=>?", s[j-1]) >= 0 && s[j] != '\n' && s[j] != '\r'
}

// hasPasswordFlag is a cheap test that the command at s[i:] has a password flag on its
// line within the rule's reach.
func hasPasswordFlag(s string, i int) bool {
	end := min(len(s), i+400)
	if j := strings.IndexByte(s[i:end], '\n'); j >= 0 {
		end = i + j
	}
	line := s[i:end]
	return strings.Contains(line, " -p") || strings.Contains(line, " -a") || strings.Contains(line, " -u") ||
		strings.Contains(line, " --user") || strings.Contains(line, " --password")
}

// acceptCLI keeps a password argument unless it is a reference ($MYSQL_PWD) or empty.
func acceptCLI(s string, at int, secret string, g func(string) string) bool {
	return secret != "" && secret[0] != '$'
}
