package secrets

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// The forms are data, a form a line of formats.tsv and issues.tsv: four fields
// separated by tabs, the kind the secret is redacted as, the text of the line before the
// secret, the secret, the text after it. In a field, \n is a newline, \t a tab and \\ a
// backslash. The secret is written as text with runs {N ALPHABET}: N characters of the
// named alphabet (alnum, upper, hex, b64, b64url, digits, lower-alnum, bech32, letters;
// "+chars" adds characters to it), drawn from the fixed stream seeded by all of the line
// before the run, so that two forms never draw the same token. Lines starting with #
// and blank lines are comments.

//go:embed formats.tsv
var formatsTSV string

//go:embed issues.tsv
var issuesTSV string

// FormatSecrets are one planted token of each format of internal/redact's data table,
// each in a line of a coding session (a shell, a config file, a request).
func FormatSecrets() []Secret { return mustForms("formats.tsv", formatsTSV) }

// IssueForms are the forms of secret named by what holds them (the name of a variable, a
// key of a config file, a flag, a client's password argument), each in the line of a
// session where it is met.
func IssueForms() []Secret { return mustForms("issues.tsv", issuesTSV) }

var alphabets = map[string]string{
	"alnum": alnum, "upper": upper, "hex": hexLow, "b64": b64, "b64url": b64url,
	"digits": "0123456789", "lower-alnum": "abcdefghijklmnopqrstuvwxyz0123456789",
	"bech32": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", "letters": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
}

// mustForms are the forms of a table; a malformed line panics, naming its place (the
// tables are the package's own, fixed when it is built).
func mustForms(name, table string) []Secret {
	out, err := parseForms(table)
	if err != nil {
		panic(name + ":" + err.Error())
	}
	return out
}

func parseForms(table string) ([]Secret, error) {
	var out []Secret
	for n, line := range strings.Split(table, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("%d: %d fields, want kind, before, secret, after", n+1, len(f))
		}
		before, after := unescape(f[1]), unescape(f[3])
		value, err := draw(before, unescape(f[2]))
		if err != nil {
			return nil, fmt.Errorf("%d: %w", n+1, err)
		}
		out = append(out, planted(f[0], before, value, after))
	}
	return out, nil
}

// planted is a Secret whose line is before + value + after, redacted as kind.
func planted(kind, before, value, after string) Secret {
	return Secret{Kind: kind, Value: value, Use: before + value + after, Redacted: before + "[redacted: " + kind + "]" + after}
}

func unescape(field string) string {
	return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t").Replace(field)
}

// draw is the secret written as text with runs {N ALPHABET}, each run drawn from the
// stream seeded by before and what of the secret comes before it.
func draw(before, secret string) (string, error) {
	var b strings.Builder
	for {
		i := strings.IndexByte(secret, '{')
		if i < 0 {
			b.WriteString(secret)
			return b.String(), nil
		}
		b.WriteString(secret[:i])
		j := strings.IndexByte(secret[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("a run without its }: %q", secret[i:])
		}
		count, spec, _ := strings.Cut(secret[i+1:i+j], " ")
		n, err := strconv.Atoi(count)
		name, extra, _ := strings.Cut(spec, "+")
		alphabet, known := alphabets[name]
		if err != nil || n <= 0 || !known {
			return "", fmt.Errorf("a run that is no {N ALPHABET}: %q", secret[i:i+j+1])
		}
		seed := before + b.String()
		b.WriteString(tok(seed, n, alphabet+extra)[len(seed):])
		secret = secret[i+j+1:]
	}
}
