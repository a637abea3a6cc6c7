package secrets

import (
	"strings"
	"testing"
)

// Every line of the tables is a form, each draws a token of its own, and the runs are
// drawn as written: N characters of the alphabet, the text around them kept.
func TestFormsTables(t *testing.T) {
	for name, table := range map[string]string{"formats.tsv": formatsTSV, "issues.tsv": issuesTSV} {
		forms, err := parseForms(table)
		if err != nil {
			t.Fatalf("%s:%v", name, err)
		}
		lines := 0
		for _, l := range strings.Split(table, "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				lines++
			}
		}
		if len(forms) != lines || lines < 30 {
			t.Errorf("%s: %d forms of %d lines", name, len(forms), lines)
		}
		for _, f := range forms {
			if f.Kind == "" || f.Value == "" || strings.ContainsAny(f.Value, "{}") {
				t.Errorf("%s: form %+v", name, f)
			}
		}
	}
	seen := map[string]string{}
	for _, s := range All() {
		if k, dup := seen[s.Value]; dup {
			t.Errorf("%s and %s plant the same secret %q", k, s.Kind, s.Value)
		}
		seen[s.Value] = s.Kind
	}

	got, err := draw("key: ", `ab{4 digits}-{3 hex+Z}\n`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len("ab1234-xyz\\n") || !strings.HasPrefix(got, "ab") || got[6] != '-' || strings.Trim(got[2:6], "0123456789") != "" ||
		strings.Trim(got[7:10], "0123456789abcdefZ") != "" || !strings.HasSuffix(got, `\n`) {
		t.Errorf("draw = %q", got)
	}
	again, _ := draw("key: ", `ab{4 digits}-{3 hex+Z}\n`)
	other, _ := draw("token: ", `ab{4 digits}-{3 hex+Z}\n`)
	if again != got || other == got {
		t.Errorf("the stream is not fixed by the line: %q, %q, %q", got, again, other)
	}
	for _, bad := range []string{"{4}", "{x digits}", "{4 nope}", "{4 digits", "{0 hex}"} {
		if _, err := draw("", bad); err == nil {
			t.Errorf("draw(%q) took it", bad)
		}
	}
	if _, err := parseForms("kind\tbefore\tvalue\n"); err == nil {
		t.Error("a line of three fields was taken")
	}
}
