package compaction

import (
	"strings"
	"testing"
)

// Command labels read the command as a shell does. The commands are in the shape of real
// agents' multi-line shell calls (a comment, a cd, an export, an assignment from $(…),
// a here-document), written here.
func TestCommandLabelsAreShellAware(t *testing.T) {
	cases := []struct {
		name, command, want string
		not                 []string
	}{
		{"setup lines passed over",
			"# look at the health endpoint\ncd /srv/shop\nexport STAGE=qa\nsource .env.qa\nTOKEN=$(vault kv get -field=token ops/shop)\ncurl -sf -H \"Authorization: Bearer $TOKEN\" https://qa.shop.test/health",
			"`curl -sf -H \"Authorization: Bearer $TOKEN\" https://qa.shop.test/health` (…)", []string{"`cd", "`#", "`export", "TOKEN)"}},
		{"here-document body left out",
			"mkdir -p /tmp/probe\ncat > /tmp/probe/run.py <<'PY'\nimport json, sys\nprint(json.load(sys.stdin)['rows'])\nPY\npython /tmp/probe/run.py < rows.json",
			"`cat > /tmp/probe/run.py` (…)", []string{"import json", "<<", "mkdir"}},
		{"a loop is one step",
			"sleep 5\nfor f in exports/*.csv; do\n  wc -l \"$f\"\ndone",
			"`for f in exports/*.csv` (…)", []string{"sleep"}},
		{"never split inside $(…) or quotes",
			"COUNT=$(psql -tAc 'select count(*) from jobs; select 1' app)\necho \"jobs: $COUNT; done\"",
			"`echo \"jobs: $COUNT; done\"` (…)", []string{"count(*)"}},
		{"a short one-line command is whole", "go test ./pkg/cart/ -run TestTotals", "`go test ./pkg/cart/ -run TestTotals`", nil},
	}
	for _, c := range cases {
		got := cmdSpan(c.command)
		if got != c.want {
			t.Errorf("%s: label %q, want %q", c.name, got, c.want)
		}
		if strings.Count(got, "`")%2 != 0 {
			t.Errorf("%s: unbalanced backticks in %q", c.name, got)
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: label %q holds %q", c.name, got, n)
			}
		}
	}
	steps := shellSteps("A=$(jq -r '.items[] | select(.ok) | .name' data.json); printf '%s\\n' \"$A\" | sort")
	if len(steps) != 3 || !strings.Contains(steps[0], "select(.ok) | .name' data.json)") {
		t.Errorf("steps split inside $(…) or quotes: %q", steps)
	}
}

// Every item is one item, bounded: report headings, table rows and bold lead-ins of an
// assistant's report are no items, a nested marker is dropped, harness text is left
// out, and a huge span (a minified line) is shortened with its backticks balanced.
func TestTidyItem(t *testing.T) {
	minified := "`" + strings.Repeat("x=f(a,\"b\");", 400) + "`"
	cases := map[string]string{
		"- [x] - Moved the parser into `core/parse.go`": "Moved the parser into `core/parse.go`",
		"1. **Rate limits** — per tenant now":           "**Rate limits** — per tenant now",
		"### Parser refactor":                           "",
		"| file | change |":                             "",
		"|---|---|":                                     "",
		"**What changed:**":                             "",
		"**Next:**":                                     "",
		"Shell cwd was reset to /home/dev/app":          "",
		"</system-reminder>":                            "",
		"[SYSTEM NOTIFICATION - background task done]":  "",
		"Command running in background with ID: 4f2a1c": "",
	}
	for in, want := range cases {
		if got := tidyItem(in); got != want {
			t.Errorf("tidyItem(%q) = %q, want %q", in, got, want)
		}
	}
	got := tidyItem("Build fails on " + minified + " in the bundle")
	if len(got) > maxLine+20 || strings.Count(got, "`")%2 != 0 {
		t.Errorf("a huge span is not bounded or not balanced (%d chars): %.120q", len(got), got)
	}
	if got := outputLine("zsh:1: parse error near `-40'"); strings.Contains(got, "`") {
		t.Errorf("output quoted with a backtick: %q", got)
	}
}

// A message that is a whole document opening with a title (a slash command's expanded
// prompt) asks what its title and first sentence say.
func TestCommandDocumentIsItsTitle(t *testing.T) {
	doc := "# Release Checklist\n\nWalk through the release steps for this repository. Stop at the first failure.\n\n## Step 1\n- bump the version\n- tag it\n"
	got, pasted := cleanUserText(doc)
	if got != "Release Checklist: Walk through the release steps for this repository." || !pasted {
		t.Errorf("cleanUserText = %q, %v", got, pasted)
	}
	if d := commandDocument("fix the login bug please"); d != "" {
		t.Errorf("a plain request is no document: %q", d)
	}
}
