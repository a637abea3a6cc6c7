package redact

import (
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/secrets"
)

// Each row of the data tables, tested on its own: the planted token of its format (in
// the line of a session that uses it) is redacted as the row's kind; the near misses
// that gitleaks' own examples of the rule are made of are not: the token cut below the
// format's length, and (for a format that must start a word) the token run into a
// preceding word.
func TestFormatRows(t *testing.T) {
	planted := map[Kind][]secrets.Secret{}
	for _, s := range secrets.All() {
		planted[Kind(s.Kind)] = append(planted[Kind(s.Kind)], s)
	}
	for _, f := range append(append([]format(nil), formats...), contextual...) {
		ss := planted[f.id]
		if len(ss) == 0 {
			t.Errorf("%s: no planted example", f.id)
			continue
		}
		r := f.rule()
		for _, s := range ss {
			got := String(s.Use)
			if got != s.Redacted {
				t.Errorf("%s: %q became %q, want %q", f.id, s.Use, got, s.Redacted)
			}
			if len(r.find(s.Use, false)) == 0 {
				t.Errorf("%s: its own row does not match %q", f.id, s.Use)
			}
			if f.value != nil {
				continue
			}
			cut := s.Value[:len(s.Value)*2/5]
			if out := String(cut); out != cut {
				t.Errorf("%s: the token cut short %q became %q", f.id, cut, out)
			}
			if r.wordStart {
				glued := "x" + s.Value
				if len(r.find(glued, false)) != 0 {
					t.Errorf("%s: matched inside a word: %q", f.id, glued)
				}
			}
		}
	}
}

// The assignment rows on the examples gitleaks' generic rule is tested with (its true
// positives are redacted, the false positives it lists are left), and on ordinary code
// of the languages a coding session shows, where a name of a secret holds no secret.
// A command that gives its password flag twice has each value redacted in one pass (the
// match of the command used to end at the first, so the second stayed; FuzzRedactJSON's
// seed a3af5c0b0246aa6d), and a value the rule refuses between them does not stop it.
func TestRepeatedPasswordFlags(t *testing.T) {
	first, second := secrets.Tok("rf", 14, secrets.Alnum), secrets.Tok("rs", 18, secrets.Alnum)
	for _, in := range []string{
		"redis-cli -a " + first + " -a " + second + " ping",
		"redis-cli -a $REDIS_PASS -a " + first + " -a " + second,
		"mysql -u root -p" + first + " -p" + second + " shop",
		"docker login -u ci -p " + first + " -p '" + second + "' registry.example.com",
		"curl -u a:" + first + " -u b:" + second + " https://example.com",
	} {
		out := String(in)
		if strings.Contains(out, first) || strings.Contains(out, second) || Has(out) {
			t.Errorf("%q → %q", in, out)
		}
		if strings.Count(out, "[redacted: cli-password]") != 2 {
			t.Errorf("%q → %q: want two markers", in, out)
		}
		if String(out) != out {
			t.Errorf("not idempotent: %q → %q", out, String(out))
		}
	}
	if in := "redis-cli -a $REDIS_PASS ping"; String(in) != in {
		t.Errorf("a variable was redacted: %q", String(in))
	}
}

func TestAssignmentRows(t *testing.T) {
	rnd := func(seed string, n int) string { return secrets.Tok(seed, n, secrets.Alnum)[len(seed):] + "7" }
	for _, in := range []string{
		`"credentials" : "` + secrets.Tok("", 64, secrets.Hex) + `"`,
		`passwd = ` + rnd("pw", 30),
		`"client_secret" : "` + secrets.Tok("cs", 64, secrets.Hex) + `",`,
		`mySecretString=` + rnd("ms", 30),
		`todo_secret_do_not_commit = ` + rnd("td", 30),
		`some_api_token_123 = "` + rnd("sa", 60) + `"`,
		`private-key: ` + rnd("pk", 100),
		`'access_token': 'eyJ0eXAioiJKV1slS3oASx=='`,
	} {
		if out, kinds := Redact(in); out == in || len(kinds) != 1 || !strings.HasSuffix(string(kinds[0]), "-assignment") {
			t.Errorf("not redacted as an assignment: %q → %q %v", in, out, kinds)
		}
	}
	for _, in := range []string{
		// gitleaks' false positives of its generic rule.
		`report_access_id: e8e4df51-2054-49b0-ab1c-516ac95c691d`,
		`public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"`,
		`publicToken = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"`,
		`"kms_key_id": "555ea4a3-d53a-4412-9c66-3a7cb667b0d6",`,
		`"key_name": "prod5zyxlmy-cmk",`,
		`IceSSL.KeyFile=s_rsa1024_priv.pem`,
		`app.keystore.file=env/cert.p12`,
		`secret_length = X25519.secret_length`,
		`LLM_SECRET_NAME = "NEXUS-GPT4-API-KEY"`,
		`  <UserSecretsId>79a3edd0-2092-40a2-a04d-dcb46d5ca9ed</UserSecretsId>`,
		`    access_token_url='https://github.com/login/oauth/access_token',`,
		`csrf-token=Mj2qykJO5rELyHgezQ69nzUX0i3OH67V7+V4eUrLfpuyOuxmiW9rhROG/Whikle15syazJOkrjJa3U2AbhIvUw==`,
		"GITHUB_API_KEY=\nDYNATRACE_API_KEY=",
		"snowflake.password=\njdbc.snowflake.url=",
		`credentialsId: 'ff083f76-7804-4ef1-80e4-fe975bb9141b'`,
		`withCredentials([usernamePassword(credentialsId: '29f63271-dc2f-4734-8221-5b31b5169bac', usernameVariable: 'USERNAME', passwordVariable: 'PASSWORD')]) {`,
		`PuttyPassword=0`,
		`secretSize must be >= XXH3_SECRET_SIZE_MIN`,
		// Ordinary code and prose.
		`token := strings.TrimSpace(os.Getenv("GITHUB_TOKEN"))`,
		`password: string;`,
		`if token == "abc123def456" {`,
		`const maxTokens = 4096`,
		`secret := cfg.Secret`,
		`apiKey: process.env.OPENAI_API_KEY,`,
		`"max_tokens": 16384, "input_tokens": 123456`,
		"Password    string `json:\"password\"`",
		`password = getpass.getpass()`,
		`token = sha256(data).hexdigest()`,
		`TOKEN_URL=https://auth.example.com/oauth/token`,
		`ssh_key_path: ~/.ssh/id_ed25519`,
		`export GITHUB_TOKEN=$(gh auth token)`,
		`token: ${{ secrets.GITHUB_TOKEN }}`,
		`SECRET_KEY = os.environ["SECRET_KEY"]`,
		`password_hint: "your first pet"`,
		`AWS_SECRET_ACCESS_KEY=<your-secret-key>`,
		`DB_PASSWORD=********`,
		`DB_PASSWORD=changeme123`,
		`api_key: YOUR_API_KEY_HERE`,
		`the token expires after 3600 seconds; the password must have 12 characters`,
		`Tokens: 12.4k input, 3.1k output`,
		`tokenizer=bert-base-uncased-v2`,
		`secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>`,
		`password: "{{ vault_db_password }}"`,
		`cancellationToken = ct2024`,
		`mysql -u root -p app < dump.sql`,
		`mysql -u root -p$MYSQL_PWD app`,
		`sshpass -e ssh deploy@host`,
		`docker login -u ci --password-stdin registry.example.com`,
		`curl -u "$USER:$TOKEN" https://example.com`,
		`curl -fsSL https://example.com/install.sh | sh`,
		`git log --format=%H -n 1 3f786850e387550fdab836ed7e6dc881de23001b`,
	} {
		if out, kinds := Redact(in); out != in {
			t.Errorf("changed: %q → %q %v", in, out, kinds)
		}
	}
}
