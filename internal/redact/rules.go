package redact

import (
	"regexp"
	"slices"
	"strings"
)

// rules is the table, in the order the rules run: a format with a more specific prefix
// before a looser one sharing its anchor (sk-ant- before sk-), the formats of the data
// table (formats.go) after the hand-written ones, then the secrets known by their name
// (assign.go), with the header rules before them (a header is a name and a value too)
// and the URL rule last, so that a known token in an assignment, a header or a URL is
// named by its own kind.
var rules = slices.Concat(tokenRules, tableRules(formats), headerRules, tableRules(contextual), urlRules)

func tableRules(fs []format) []rule {
	out := make([]rule, len(fs))
	for i, f := range fs {
		out[i] = f.rule()
	}
	return out
}

// tokenRules are the hand-written rules: formats whose matching needs code (private
// keys) or that pi-lsp's own users meet most (model providers, forges).
var tokenRules = []rule{
	// PEM (RFC 7468) and OpenSSH private keys: "-----BEGIN RSA PRIVATE KEY-----",
	// "-----BEGIN OPENSSH PRIVATE KEY-----", "-----BEGIN ENCRYPTED PRIVATE KEY-----",
	// OpenPGP's "-----BEGIN PGP PRIVATE KEY BLOCK-----" (RFC 4880), through the END line,
	// or, for a key cut short, through its base64 lines.
	{kind: PrivateKey, anchors: []string{"-----BEGIN"}, match: privateKeyEnd},
	// Anthropic API keys: "sk-ant-api03-…", admin keys "sk-ant-admin01-…" (Anthropic's
	// API documentation and console).
	{kind: AnthropicAPIKey, anchors: []string{"sk-ant-"}, wordStart: true, re: re(`sk-ant-[A-Za-z0-9_-]{20,}`)},
	// OpenRouter keys: "sk-or-v1-" and 64 hex digits.
	{kind: OpenRouterAPIKey, anchors: []string{"sk-or-"}, wordStart: true, re: re(`sk-or-v1-[0-9a-f]{32,}`)},
	// OpenAI keys: project "sk-proj-…", service account "sk-svcacct-…", admin
	// "sk-admin-…"; older user keys are 20 characters, "T3BlbkFJ" (base64 of "OpenAI")
	// and 20 more.
	{kind: OpenAIAPIKey, anchors: []string{"sk-"}, wordStart: true,
		re: re(`sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})`)},
	// Other "sk-" keys (legacy OpenAI "sk-" and 48 characters, DeepSeek, Moonshot and
	// other OpenAI-compatible providers): a long letters-and-digits run after "sk-".
	{kind: APIKey, anchors: []string{"sk-"}, wordStart: true, re: re(`sk-[A-Za-z0-9]{32,}`)},
	// GitHub personal access tokens: classic "ghp_" and 36 base62 characters,
	// fine-grained "github_pat_" and 82 (GitHub's documented token prefixes, "Behind
	// GitHub's new authentication token formats", 2021).
	{kind: GitHubPAT, anchors: []string{"ghp_", "github_pat_"}, wordStart: true,
		re: re(`(?:ghp_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`)},
	// Other GitHub tokens of the same scheme: OAuth "gho_", user-to-server "ghu_",
	// server-to-server "ghs_", refresh "ghr_".
	{kind: GitHubToken, anchors: []string{"gho_", "ghu_", "ghs_", "ghr_"}, wordStart: true, re: re(`gh[ousr]_[A-Za-z0-9]{20,}`)},
	// GitLab personal access tokens: "glpat-" and 20 characters, or the longer routable
	// form with dot-separated parts (GitLab's "Token prefixes" documentation).
	{kind: GitLabPAT, anchors: []string{"glpat-"}, wordStart: true, re: re(`glpat-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]{2,})*`)},
	// GitLab's other prefixed tokens from the same table: OAuth application secret,
	// deploy, runner, CI job, trigger, feed, incoming mail, agent, SCIM and feature flag
	// tokens, and runner registration tokens "GR1348941…".
	{kind: GitLabToken, anchors: []string{"gloas-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glimt-", "glagent-", "glsoat-", "glffct-", "GR1348941"}, wordStart: true,
		re: re(`(?:gl(?:oas|dt|rt|cbt|ptt|ft|imt|agent|soat|ffct)-|GR1348941)[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]{2,})*`)},
	// Slack tokens: bot "xoxb-", user "xoxp-", app-level "xapp-", and "xoxa-", "xoxr-",
	// "xoxs-", "xoxo-", "xoxe-" and rotating "xoxe.xoxp-" (Slack's token types
	// documentation).
	{kind: SlackToken, anchors: []string{"xox", "xapp-"}, wordStart: true, re: re(`(?:xox[abposre]-|xoxe\.xox[bp]-|xapp-)[A-Za-z0-9-]{10,}`)},
	// Slack incoming webhooks: https://hooks.slack.com/services/T…/B…/… (the path is the
	// secret; the host stays).
	{kind: SlackWebhook, anchors: []string{"hooks.slack.com/"}, re: re(`hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/+-]{16,})`)},
	// AWS access key ids: "AKIA" (long-term), "ASIA" (temporary), "ABIA", "ACCA" and 16
	// upper-case letters and digits (AWS IAM's "Unique identifier prefixes").
	{kind: AWSAccessKeyID, anchors: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"}, wordStart: true,
		re: re(`(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b`)},
	// AWS secret access keys: 40 base64 characters, only after the names the AWS CLI,
	// SDKs and IAM use for them (aws_secret_access_key, AWS_SECRET_ACCESS_KEY,
	// SecretAccessKey, --aws-secret-access-key), which are kept.
	{kind: AWSSecretAccessKey, anchors: []string{"aws", "secret"}, fold: true,
		re: re(`(?:` + ci("aws") + `[ _.-]?` + ci("secret") + `[ _.-]?(?:` + ci("access") + `[ _.-]?)?` + ci("key") + `|` +
			ci("secret") + `[ _.-]?` + ci("access") + `[ _.-]?` + ci("key") + `)(?:["'` + "`" + `]|\*{1,2}){0,3}\s*(?:=>|:=|[:=])?\s*["'` + "`" +
			`]?(?P<s>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`)},
	// Google API keys: "AIza" and 35 characters (Google Cloud's API keys documentation).
	{kind: GoogleAPIKey, anchors: []string{"AIza"}, wordStart: true, re: re(`AIza[0-9A-Za-z_-]{35,}`)},
	// Stripe secret and restricted keys "sk_live_", "rk_live_" (and their test-mode
	// forms), webhook signing secrets "whsec_" (Stripe's API keys documentation).
	{kind: StripeKey, anchors: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"}, wordStart: true,
		re: re(`(?:[sr]k_(?:live|test)_|whsec_)[0-9A-Za-z]{16,}`)},
	// npm access tokens: "npm_" and 36 characters (npm's access tokens documentation).
	{kind: NPMToken, anchors: []string{"npm_"}, wordStart: true, re: re(`npm_[A-Za-z0-9]{36,}`)},
	// PyPI API tokens: macaroons "pypi-AgEIcHlwaS5vcmc…" (base64 of pypi.org), and
	// TestPyPI's "pypi-AgENdGVzdC5weXBpLm9yZw…" (PyPI's API token help).
	{kind: PyPIToken, anchors: []string{"pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"}, wordStart: true,
		re: re(`pypi-Ag(?:EIcHlwaS5vcmc|ENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{16,}`)},
	// Hugging Face user access tokens: "hf_" and 34 letters (Hugging Face's security
	// tokens documentation).
	{kind: HuggingFaceToken, anchors: []string{"hf_"}, wordStart: true, re: re(`hf_[A-Za-z0-9]{30,}`)},
	// SendGrid API keys: "SG." and two dot-separated base64url parts (22 and 43).
	{kind: SendGridAPIKey, anchors: []string{"SG."}, wordStart: true, re: re(`SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`)},
	// DigitalOcean personal, OAuth and refresh tokens: "dop_v1_", "doo_v1_", "dor_v1_"
	// and 64 hex digits.
	{kind: DigitalOceanToken, anchors: []string{"dop_v1_", "doo_v1_", "dor_v1_"}, wordStart: true, re: re(`do[opr]_v1_[a-f0-9]{32,}`)},
	// Shopify access tokens and shared secrets: "shpat_", "shpca_", "shppa_", "shpss_"
	// and 32 hex digits.
	{kind: ShopifyToken, anchors: []string{"shpat_", "shpca_", "shppa_", "shpss_"}, wordStart: true, re: re(`shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}`)},
	// JSON Web Tokens (RFC 7519, JWS compact serialization RFC 7515): base64url header
	// and payload, each a JSON object, so both start "eyJ"; then the signature (a token
	// cut before its signature is redacted too).
	// An occurrence of "eyJ" inside a header that did not match cannot match either
	// (its header ends at the same place), so the search goes on after that header.
	{kind: JWT, anchors: []string{"eyJ"}, wordStart: true, re: re(`eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]+)?`),
		skip: func(s string, i int) int { return runEnd(s, i+3, isBase64URL) }},
}

// headerRules and urlRules run after the token formats: what they keep (a header's name,
// a URL's user and host) may hold a token another rule names better.
var headerRules = []rule{
	// HTTP Authorization and Proxy-Authorization credentials (RFC 9110 §11.6.2) with the
	// Bearer (RFC 6750), Basic (RFC 7617), token or Bot scheme: the header name and the
	// scheme stay, the credentials (token68) are redacted; in a header, a JSON field or
	// an assignment.
	{kind: AuthorizationHeader, anchors: []string{"authorization"}, fold: true,
		re: re(ci("authorization") + `(?:["'` + "`" + `]|\*{1,2}){0,3}\s*[:=]\s*["'` + "`" + `]?(?:` + ci("bearer") + `|` + ci("basic") + `|` + ci("token") + `|` + ci("bot") +
			`)\s+(?P<s>[A-Za-z0-9._~+/-]{8,}=*)`)},
	// API key headers: x-api-key (Anthropic, AWS API Gateway), api-key (Azure OpenAI),
	// x-auth-token, and GitLab's PRIVATE-TOKEN; the name stays.
	{kind: APIKeyHeader, anchors: []string{"x-api-key", "api-key", "x-auth-token", "private-token"}, fold: true,
		re: re(`(?:` + ci("x-api-key") + `|` + ci("api-key") + `|` + ci("x-auth-token") + `|` + ci("private-token") + `)(?:["'` + "`" + `]|\*{1,2}){0,3}\s*:\s*["'` + "`" +
			`]?(?P<s>[A-Za-z0-9._~+/-]{16,}=*)`)},
}

var urlRules = []rule{
	// Passwords in URLs (RFC 3986 userinfo, scheme://user:password@host): the scheme,
	// the user and the host stay. Most URLs have no userinfo, which hasUserinfo sees
	// without running the regexp.
	{kind: URLPassword, anchors: []string{"://"}, quick: hasUserinfo, re: re(`://[^\s:/?#@\[\]"'` + "`" + `<>]*:(?P<s>[^\s/?#@"'` + "`" + `<>]+)@`)},
}

// re compiles a rule's pattern, anchored at the start of the text it runs on.
func re(pattern string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + pattern + `)`) }

// hasUserinfo reports whether the URL whose "://" is at s[i:] has a user and password
// before its host: a ':' and then an '@' before the first delimiter.
func hasUserinfo(s string, i int) bool {
	colon := false
	for j := i + 3; j < len(s); j++ {
		switch s[j] {
		case ':':
			colon = true
		case '@':
			return colon
		case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>':
			return false
		}
	}
	return false
}

// runEnd is the end of the run of bytes in class from i.
func runEnd(s string, i int, class func(byte) bool) int {
	for i < len(s) && class(s[i]) {
		i++
	}
	return i
}

func isBase64URL(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// Private keys.

var (
	pemHeader = regexp.MustCompile(`^-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----`)
	pemFooter = regexp.MustCompile(`^-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----`)
)

// maxPEM bounds how far a key's END line is looked for (an RSA 8192 key is about 6.5 KB;
// JSON escapes add to it).
const maxPEM = 16 << 10

// privateKeyEnd is the end of the private key whose BEGIN line starts at s[i:], or -1:
// through its END line when one follows within maxPEM bytes and before another BEGIN
// line, otherwise (a key cut short, as a summary cuts a long line) through the base64
// lines after the header.
func privateKeyEnd(s string, i int) int {
	m := pemHeader.FindStringIndex(s[i:])
	if m == nil {
		return -1
	}
	body := i + m[1]
	limit := min(len(s), body+maxPEM)
	if j := strings.Index(s[body:limit], "-----BEGIN"); j >= 0 {
		limit = body + j
	}
	for k := body; k < limit; {
		j := strings.Index(s[k:limit], "-----END")
		if j < 0 {
			break
		}
		if f := pemFooter.FindStringIndex(s[k+j:]); f != nil {
			return k + j + f[1]
		}
		k += j + 1
	}
	return pemBodyEnd(s, body)
}

// pemBodyEnd is the end of the key material from p on: base64 tokens separated by white
// space or the escapes \n, \r, \t (a key written in a JSON string or flattened onto one
// line), and the Proc-Type, DEK-Info and Comment header lines of older and OpenSSH keys.
// A token is taken when it is long (a PEM line is 64 characters), ends in padding, or
// is cut short by another character (a summary's "…"); the run stops before a short
// word, which is prose after a key.
func pemBodyEnd(s string, p int) int {
	end := p
	q := p
	for {
		q = skipSeparators(s, q)
		if q >= len(s) {
			return end
		}
		if h := pemHeaderLine(s[q:]); h > 0 {
			// The header name, then its value up to the end of its line.
			t := q + h
			for t < len(s) && (s[t] == ' ' || s[t] == '\t') {
				t++
			}
			for t < len(s) && !isSeparator(s, t) {
				t++
			}
			end, q = t, t
			continue
		}
		t := q
		for t < len(s) && isBase64(s[t]) {
			t++
		}
		tok := s[q:t]
		if tok == "" {
			return end
		}
		if t < len(s) && !isSeparator(s, t) {
			// Cut short: take it and stop.
			if len(tok) >= 4 {
				end = t
			}
			return end
		}
		if len(tok) < 16 && !strings.HasSuffix(tok, "=") {
			return end
		}
		end, q = t, t
	}
}

func pemHeaderLine(s string) int {
	for _, h := range []string{"Proc-Type:", "DEK-Info:", "Comment:"} {
		if strings.HasPrefix(s, h) {
			return len(h)
		}
	}
	return 0
}

func skipSeparators(s string, q int) int {
	for q < len(s) {
		switch {
		case s[q] == ' ' || s[q] == '\t' || s[q] == '\n' || s[q] == '\r':
			q++
		case isEscape(s, q):
			q += 2
		default:
			return q
		}
	}
	return q
}

func isSeparator(s string, q int) bool {
	return s[q] == ' ' || s[q] == '\t' || s[q] == '\n' || s[q] == '\r' || isEscape(s, q)
}

func isEscape(s string, q int) bool {
	return s[q] == '\\' && q+1 < len(s) && (s[q+1] == 'n' || s[q+1] == 'r' || s[q+1] == 't')
}

func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}
