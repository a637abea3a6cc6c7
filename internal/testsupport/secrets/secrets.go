// Package secrets builds credentials of every kind internal/redact recognises, for tests
// that plant them in sessions and check that no written text keeps them. The values are
// made when the tests run, from a fixed pseudo-random stream (the same every run), so
// that no literal token in this tree trips a secret scanner; none is a live credential.
package secrets

import (
	"encoding/base64"
	"strings"
	"testing"
)

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	hexLow = "0123456789abcdef"
	b64    = alnum + "+/"
	b64url = alnum + "-_"
)

// Alphabets for Tok.
const (
	Alnum  = alnum
	Upper  = upper
	Hex    = hexLow
	Base64 = b64
)

// Tok is prefix and n characters of alphabet, the same for the same arguments.
func Tok(prefix string, n int, alphabet string) string { return tok(prefix, n, alphabet) }

func tok(prefix string, n int, alphabet string) string {
	x := uint64(len(prefix))*0x9e3779b97f4a7c15 + uint64(n)
	for _, c := range prefix {
		x = x*31 + uint64(c)
	}
	var b strings.Builder
	b.WriteString(prefix)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b.WriteByte(alphabet[x%uint64(len(alphabet))])
	}
	return b.String()
}

func b64u(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// Secret is one planted value, the kind it is redacted as, and a line that uses it.
type Secret struct {
	Kind     string
	Value    string // the secret text that must not survive
	Use      string // a realistic line holding it
	Redacted string // what Use becomes
}

// jwt is a signed-looking JSON Web Token.
func jwt() string {
	return b64u(`{"alg":"HS256","typ":"JWT"}`) + "." + b64u(`{"sub":"1234567890","name":"Jo","iat":1516239022}`) + "." + tok("", 43, b64url)
}

func pemKey(kind string, lines int) string {
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "PRIVATE KEY-----\n")
	for i := range lines {
		b.WriteString(tok(strings.Repeat("M", i%3+1), 63, b64) + "\n")
	}
	b.WriteString(tok("", 20, b64) + "==\n")
	b.WriteString("-----END " + kind + "PRIVATE KEY-----")
	return b.String()
}

// All returns planted secrets, at least one of every kind, each with a realistic line
// that uses it and what that line becomes once redacted.
func All() []Secret {
	awsID := tok("AKIA", 16, upper)
	awsSecret := tok("", 40, b64)
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + tok("", 18, alnum)))
	urlPass := tok("", 16, alnum) + "-x"
	key := pemKey("RSA ", 6)
	openssh := pemKey("OPENSSH ", 4)
	return append(append([]Secret{
		{"private-key", key, "use this key:\n" + key + "\nthen ssh in", "use this key:\n[redacted: private-key]\nthen ssh in"},
		{"private-key", openssh, "cat > id_ed25519 <<EOF\n" + openssh + "\nEOF", "cat > id_ed25519 <<EOF\n[redacted: private-key]\nEOF"},
		{"anthropic-api-key", tok("sk-ant-api03-", 93, b64url) + "AA", "ANTHROPIC_API_KEY=" + tok("sk-ant-api03-", 93, b64url) + "AA", "ANTHROPIC_API_KEY=[redacted: anthropic-api-key]"},
		{"openai-api-key", tok("sk-proj-", 156, b64url), "export OPENAI_API_KEY=" + tok("sk-proj-", 156, b64url), "export OPENAI_API_KEY=[redacted: openai-api-key]"},
		{"openai-api-key", tok("sk-", 20, alnum) + "T3BlbkFJ" + tok("", 20, alnum), "key " + tok("sk-", 20, alnum) + "T3BlbkFJ" + tok("", 20, alnum) + " is old", "key [redacted: openai-api-key] is old"},
		{"openrouter-api-key", tok("sk-or-v1-", 64, hexLow), "OPENROUTER_API_KEY=" + tok("sk-or-v1-", 64, hexLow), "OPENROUTER_API_KEY=[redacted: openrouter-api-key]"},
		{"api-key", tok("sk-", 32, hexLow), "DEEPSEEK_API_KEY=" + tok("sk-", 32, hexLow), "DEEPSEEK_API_KEY=[redacted: api-key]"},
		{"github-pat", tok("ghp_", 36, alnum), "git push https://" + tok("ghp_", 36, alnum) + "@github.com/o/r.git", "git push https://[redacted: github-pat]@github.com/o/r.git"},
		{"github-pat", tok("github_pat_", 22, alnum) + "_" + tok("", 59, alnum), "GH_TOKEN=" + tok("github_pat_", 22, alnum) + "_" + tok("", 59, alnum) + " gh pr list", "GH_TOKEN=[redacted: github-pat] gh pr list"},
		{"github-token", tok("ghs_", 36, alnum), "token: " + tok("ghs_", 36, alnum), "token: [redacted: github-token]"},
		{"gitlab-pat", tok("glpat-", 20, b64url), "GITLAB_TOKEN=" + tok("glpat-", 20, b64url), "GITLAB_TOKEN=[redacted: gitlab-pat]"},
		{"gitlab-token", tok("glrt-", 20, b64url), "gitlab-runner register --token " + tok("glrt-", 20, b64url), "gitlab-runner register --token [redacted: gitlab-token]"},
		{"slack-token", "xoxb-" + tok("", 11, "0123456789") + "-" + tok("", 13, "0123456789") + "-" + tok("", 24, alnum),
			"SLACK_BOT_TOKEN=xoxb-" + tok("", 11, "0123456789") + "-" + tok("", 13, "0123456789") + "-" + tok("", 24, alnum) + ".",
			"SLACK_BOT_TOKEN=[redacted: slack-token]."},
		{"slack-webhook", "T" + tok("", 8, upper) + "/B" + tok("", 8, upper) + "/" + tok("", 24, alnum),
			"curl https://hooks.slack.com/services/T" + tok("", 8, upper) + "/B" + tok("", 8, upper) + "/" + tok("", 24, alnum),
			"curl https://hooks.slack.com/services/[redacted: slack-webhook]"},
		{"aws-access-key-id", awsID, "aws_access_key_id = " + awsID, "aws_access_key_id = [redacted: aws-access-key-id]"},
		{"aws-secret-access-key", awsSecret, "aws_secret_access_key = " + awsSecret + "\nregion = eu-west-1", "aws_secret_access_key = [redacted: aws-secret-access-key]\nregion = eu-west-1"},
		{"google-api-key", tok("AIza", 35, b64url), "?key=" + tok("AIza", 35, b64url) + "&q=1", "?key=[redacted: google-api-key]&q=1"},
		{"stripe-key", tok("sk_live_", 24, alnum), "STRIPE_KEY=" + tok("sk_live_", 24, alnum), "STRIPE_KEY=[redacted: stripe-key]"},
		{"npm-token", tok("npm_", 36, alnum), "//registry.npmjs.org/:_authToken=" + tok("npm_", 36, alnum), "//registry.npmjs.org/:_authToken=[redacted: npm-token]"},
		{"pypi-token", tok("pypi-AgEIcHlwaS5vcmc", 60, b64url), "password = " + tok("pypi-AgEIcHlwaS5vcmc", 60, b64url), "password = [redacted: pypi-token]"},
		{"huggingface-token", tok("hf_", 34, alnum), "HF_TOKEN=" + tok("hf_", 34, alnum), "HF_TOKEN=[redacted: huggingface-token]"},
		{"sendgrid-api-key", tok("SG.", 22, b64url) + "." + tok("", 43, b64url), "SENDGRID_API_KEY='" + tok("SG.", 22, b64url) + "." + tok("", 43, b64url) + "'", "SENDGRID_API_KEY='[redacted: sendgrid-api-key]'"},
		{"digitalocean-token", tok("dop_v1_", 64, hexLow), "doctl auth init -t " + tok("dop_v1_", 64, hexLow), "doctl auth init -t [redacted: digitalocean-token]"},
		{"shopify-token", tok("shpat_", 32, hexLow), "X-Shopify-Access-Token: " + tok("shpat_", 32, hexLow), "X-Shopify-Access-Token: [redacted: shopify-token]"},
		{"jwt", jwt(), "session=" + jwt() + "; Path=/", "session=[redacted: jwt]; Path=/"},
		{"authorization-header", tok("", 40, alnum), `curl -H "Authorization: Bearer ` + tok("", 40, alnum) + `" https://api.example.com/v1`, `curl -H "Authorization: Bearer [redacted: authorization-header]" https://api.example.com/v1`},
		{"authorization-header", basic, "authorization: basic " + basic, "authorization: basic [redacted: authorization-header]"},
		{"api-key-header", tok("", 32, alnum), "-H 'x-api-key: " + tok("", 32, alnum) + "'", "-H 'x-api-key: [redacted: api-key-header]'"},
		{"url-password", urlPass, "psql postgres://app:" + urlPass + "@db.internal:5432/app", "psql postgres://app:[redacted: url-password]@db.internal:5432/app"},
	}, FormatSecrets()...), IssueForms()...)
}

// Window is the length of the pieces of a secret that Leak looks for.
const Window = 12

// Leak returns a piece of s's secret material (Window characters of it, the armor lines
// of a key aside) that text holds, or "" when it holds none, so that a secret cut short
// by a summary is caught as well as a whole one.
func (s Secret) Leak(text string) string {
	for _, part := range strings.Fields(s.Value) {
		if strings.Contains(part, "-----") {
			continue
		}
		for i := 0; i+Window <= len(part); i++ {
			if w := part[i : i+Window]; strings.Contains(text, w) {
				return w
			}
		}
	}
	return ""
}

// OneLine is s.Use with its white space runs made single spaces (as a summary quotes a
// line).
func (s Secret) OneLine() string { return strings.Join(strings.Fields(s.Use), " ") }

// NoLeak fails the test when text holds any piece of a planted secret (All), naming
// what the text is.
func NoLeak(t testing.TB, what, text string) {
	t.Helper()
	for _, s := range All() {
		if w := s.Leak(text); w != "" {
			t.Errorf("%s holds %q of a %s:\n%s", what, w, s.Kind, text)
		}
	}
}
