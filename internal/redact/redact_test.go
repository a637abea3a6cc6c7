package redact_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/secrets"
)

// Every rule redacts a realistic planted value, keeps the text around it, names its
// kind, and leaves nothing of the secret.
func TestRedactEveryRule(t *testing.T) {
	seen := map[redact.Kind]bool{}
	for _, s := range secrets.All() {
		got, kinds := redact.Redact(s.Use)
		if got != s.Redacted {
			t.Errorf("%s:\n in  %q\n got %q\nwant %q", s.Kind, s.Use, got, s.Redacted)
		}
		if !slices.Equal(kinds, []redact.Kind{redact.Kind(s.Kind)}) {
			t.Errorf("%s: kinds %v", s.Kind, kinds)
		}
		if w := s.Leak(got); w != "" {
			t.Errorf("%s: %q survives in %q", s.Kind, w, got)
		}
		if !redact.Has(s.Use) || redact.Has(got) {
			t.Errorf("%s: Has(in) = %v, Has(out) = %v", s.Kind, redact.Has(s.Use), redact.Has(got))
		}
		seen[redact.Kind(s.Kind)] = true
	}
	for _, k := range redact.Kinds() {
		if !seen[k] {
			t.Errorf("no planted secret of kind %s", k)
		}
	}
}

// More forms of the same formats: other prefixes, other spellings of the context, keys
// cut short or written on one line.
func TestRedactForms(t *testing.T) {
	tok, an, hx, b64 := secrets.Tok, secrets.Alnum, secrets.Hex, secrets.Base64
	key := secrets.All()[0].Value
	lines := strings.Split(key, "\n")
	awsSecret := tok("", 40, b64)
	for _, tc := range []struct{ in, want string }{
		// A key flattened onto one line and cut short, as a summary quotes it.
		{"Ran `echo " + strings.Join(lines[:3], " ") + " " + lines[3][:20] + "…`", "Ran `echo [redacted: private-key]…`"},
		{strings.Join(lines, " ") + " and more prose", "[redacted: private-key] and more prose"},
		// In a JSON string, with escaped newlines.
		{`{"key":"` + strings.Join(lines, `\n`) + `"}`, `{"key":"[redacted: private-key]"}`},
		{`{"key":"` + strings.Join(lines[:4], `\n`) + `"}`, `{"key":"[redacted: private-key]"}`},
		// Encrypted PEM with header lines, no END line.
		{"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n\n" + lines[1] + "\nthen",
			"[redacted: private-key]\nthen"},
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + lines[1] + "\n" + lines[2] + "\n-----END PGP PRIVATE KEY BLOCK-----", "[redacted: private-key]"},
		{"-----BEGIN EC PRIVATE KEY-----…", "[redacted: private-key]…"},
		{"export GITHUB_TOKEN=" + tok("gho_", 36, an), "export GITHUB_TOKEN=[redacted: github-token]"},
		{"token " + tok("ghp_", 24, an) + "…", "token [redacted: github-pat]…"}, // cut short
		{tok("glpat-", 27, an) + ".01.0i" + tok("", 7, hx) + " works", "[redacted: gitlab-pat] works"},
		{"GR1348941" + tok("", 20, an), "[redacted: gitlab-token]"},
		{"xapp-1-A0" + tok("", 9, an) + "-" + tok("", 13, hx) + "-" + tok("", 64, hx), "[redacted: slack-token]"},
		{"ASIA" + tok("", 16, secrets.Upper) + ",", "[redacted: aws-access-key-id],"},
		{"AWS_SECRET_ACCESS_KEY=" + awsSecret, "AWS_SECRET_ACCESS_KEY=[redacted: aws-secret-access-key]"},
		{`"SecretAccessKey": "` + awsSecret + `",`, `"SecretAccessKey": "[redacted: aws-secret-access-key]",`},
		{"aws configure set aws_secret_access_key " + awsSecret, "aws configure set aws_secret_access_key [redacted: aws-secret-access-key]"},
		{"--aws-secret-access-key=" + awsSecret + "\n", "--aws-secret-access-key=[redacted: aws-secret-access-key]\n"},
		{`{"headers":{"Authorization":"token ` + tok("", 36, an) + `"}}`, `{"headers":{"Authorization":"token [redacted: authorization-header]"}}`},
		{"Proxy-Authorization: Basic " + tok("", 20, an) + "==", "Proxy-Authorization: Basic [redacted: authorization-header]"},
		{"PRIVATE-TOKEN: " + tok("", 20, an), "PRIVATE-TOKEN: [redacted: api-key-header]"},
		{"git clone https://alice:" + tok("", 12, an) + "@example.com/repo.git", "git clone https://alice:[redacted: url-password]@example.com/repo.git"},
		{"redis://:" + tok("", 12, an) + "@localhost:6379/0", "redis://:[redacted: url-password]@localhost:6379/0"},
		{"sk_test_" + tok("", 24, an) + " whsec_" + tok("", 32, an), "[redacted: stripe-key] [redacted: stripe-key]"},
		// Two secrets in one line, and a known token inside a URL or a header.
		{"Authorization: Bearer " + tok("ghp_", 36, an), "Authorization: Bearer [redacted: github-pat]"},
		{"https://x:" + tok("glpat-", 20, an) + "@gitlab.com/g/p.git", "https://x:[redacted: gitlab-pat]@gitlab.com/g/p.git"},
	} {
		got := redact.String(tc.in)
		if got != tc.want {
			t.Errorf("\n in  %q\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if redact.Has(got) {
			t.Errorf("%q still matches a rule", got)
		}
	}
}

// Near misses are left exactly as they are.
func TestRedactNearMisses(t *testing.T) {
	for _, in := range []string{
		"",
		"commit 3f786850e387550fdab836ed7e6dc881de23001b fixes it",
		"session 0190aaaa-0000-7000-8000-000000000001 and c9a6f2a4-2e7b-4f9e-9a9a-0123456789ab",
		"/home/user/src/sk-learn/model.py and internal/redact/rules.go",
		"the sk- prefix marks an OpenAI key; use sk-proj keys, not sk-1234",
		"task-0123456789abcdef0123456789abcdef01 is a job id", // "sk-" inside a word
		"risk-free, disk-backed",
		"ghp_ tokens, ghp_short, github_pat_ is the prefix, gho_x",
		"AKIA is the prefix of access key ids; AKIAIOSFODNN7EXAMPLEXYZ is too long",
		"xoxb- is a bot token prefix, glpat- a GitLab one, npm_config_registry, hf_hub_download",
		"SG.Services, AIza, eyJ, eyJhbGciOiJIUzI1NiJ9 alone",
		"http://localhost:8080/path?a=b@c",
		"https://example.com/a:b@c",
		"ssh://git@github.com:22/org/repo.git and git@github.com:org/repo.git",
		"user@example.com, http://[::1]:8080/, https://host/#x:y@z",
		"Authorization: Bearer token",
		"the Authorization header, authorization: required",
		"api-key: none",
		"secret_access_key = ${AWS_SECRET}",
		strings.Repeat("A", 40) + " is not a secret without a name before it",
		"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0123456789abcdefghijklmnopqrstu\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE0123456789abcdefghij\n-----END PUBLIC KEY-----",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host",
		"[redacted: github-pat] stays",
		"héllo wörld ſecret_access_key …",
	} {
		got, kinds := redact.Redact(in)
		if got != in || len(kinds) != 0 {
			t.Errorf("changed a near miss:\n in  %q\n got %q (%v)", in, got, kinds)
		}
		if redact.Has(in) {
			t.Errorf("Has(%q)", in)
		}
	}
	// A marker is never redacted again.
	for _, k := range redact.Kinds() {
		if m := redact.Marker(k); redact.String(m) != m || redact.Has(m) {
			t.Errorf("marker %q is redacted", m)
		}
	}
}

// The text around a secret is kept byte for byte, whatever it holds (invalid UTF-8,
// NULs, long runs), and redacting twice changes nothing.
func TestRedactKeepsSurroundings(t *testing.T) {
	s := secrets.All()[7] // a GitHub token in a URL
	for _, around := range []string{"", "\x00\xff\xfe", strings.Repeat("é", 1000), strings.Repeat(" ", 70000)} {
		in := around + s.Use + around
		got := redact.String(in)
		if want := around + s.Redacted + around; got != want {
			t.Errorf("around %.10q: got %.80q", around, got)
		}
		if redact.String(got) != got {
			t.Errorf("not idempotent around %.10q", around)
		}
	}
}

// Text made of anchors, the worst case of the search (every position starts an
// attempt), is searched quickly and left without a match.
func TestRedactHostileInput(t *testing.T) {
	for _, unit := range []string{"eyJ-", "sk-", "ghp_", "://a:", "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN ", "authorization: bearer ",
		"aws_secret_access_key=", "AKIA", "x-api-key:", "\\n", "https://u:p@"} {
		in := strings.Repeat(unit, (256<<10)/len(unit))
		out := redact.String(in)
		if redact.Has(out) {
			t.Errorf("%q×N: output still matches", unit)
		}
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range secrets.All() {
		f.Add(s.Use)
	}
	f.Add("https://a:b@https://c:d@e")
	f.Add("AKIA" + strings.Repeat("A", 16) + "ghp_" + strings.Repeat("b", 30))
	f.Fuzz(func(t *testing.T, in string) {
		out := redact.String(in)
		if redact.Has(out) {
			t.Fatalf("output of %q still matches: %q", in, out)
		}
		if !redact.Has(in) && out != in {
			t.Fatalf("%q has no match but became %q", in, out)
		}
		if redact.String(out) != out {
			t.Fatalf("not idempotent: %q", out)
		}
	})
}

func BenchmarkRedact(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("- [x] Ran `go test ./internal/compaction` in /home/user/src/project (see https://example.com/docs)\n")
	}
	clean := sb.String()
	dirty := clean + secrets.All()[7].Use + clean
	b.Run("clean-1MB", func(b *testing.B) {
		b.SetBytes(int64(len(clean)))
		for b.Loop() {
			redact.String(clean)
		}
	})
	b.Run("one-secret-2MB", func(b *testing.B) {
		b.SetBytes(int64(len(dirty)))
		for b.Loop() {
			redact.String(dirty)
		}
	})
}

// FuzzRedactJSON: redacting a JSON text leaves valid JSON whose strings match no rule,
// and leaves a text whose strings match none byte for byte.
func FuzzRedactJSON(f *testing.F) {
	for _, s := range secrets.All() {
		b, _ := json.Marshal(map[string]any{"message": s.Use, "args": map[string]string{"command": s.Use}})
		f.Add(string(b))
	}
	f.Add(`{"a":"x\nAGE-SECRET-KEY-1","b":[1,2,{"c":"password: \"hunter2x\""}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		out := redact.JSON([]byte(in))
		if !json.Valid([]byte(in)) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%q became invalid JSON %q", in, out)
		}
		// matches reports whether a string (key or value) of a JSON text matches a
		// rule, reading its tokens (a duplicate key included).
		matches := func(data []byte) bool {
			d := json.NewDecoder(bytes.NewReader(data))
			for {
				tok, err := d.Token()
				if err != nil {
					return false
				}
				if s, ok := tok.(string); ok && redact.Has(s) {
					return true
				}
			}
		}
		if matches(out) {
			t.Fatalf("a string of %q still matches", out)
		}
		if !matches([]byte(in)) && string(out) != in {
			t.Fatalf("%q has no match but became %q", in, out)
		}
	})
}
