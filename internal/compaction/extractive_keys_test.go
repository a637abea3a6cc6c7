package compaction

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// keyTexts are texts to try the patterns on: every sentence of the corpus sessions'
// messages, and each pattern's keys in sentences, in other cases and with the runes that
// fold to ASCII, cut short by a letter.
func keyTexts(t *testing.T) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	var files []string
	filepath.WalkDir("../../testdata/corpus", func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("no corpus sessions")
	}
	for _, path := range files {
		f, err := session.Load(path)
		if err != nil {
			continue
		}
		for _, e := range f.Entries {
			m, err := e.Message()
			if err != nil || m == nil {
				continue
			}
			text := m.Text("\n")
			for _, line := range strings.Split(text, "\n") {
				add(strings.TrimSpace(line))
			}
			for _, s := range sentences(text) {
				add(s)
			}
		}
	}
	for _, k := range keyedPatterns {
		for _, key := range k.keys {
			for _, v := range []string{key, strings.ToUpper(key), strings.ReplaceAll(strings.ReplaceAll(key, "k", "\u212A"), "s", "\u017F"), key[:len(key)-1]} {
				add(v)
				add("So " + v + " here.")
				add("it " + v + ": done")
			}
		}
	}
	return out
}

// A keyed pattern answers as its regexp on every text: the keys only spare the regexp
// the texts it cannot match.
func TestKeyedPatternsAnswerAsTheirRegexp(t *testing.T) {
	texts := keyTexts(t)
	if len(keyedPatterns) < 30 {
		t.Fatalf("%d keyed patterns", len(keyedPatterns))
	}
	withKeys, skipped := 0, 0
	for _, k := range keyedPatterns {
		if k.keys != nil {
			withKeys++
		}
		plain := regexp.MustCompile(k.String())
		for _, s := range texts {
			if !k.mayMatch(s) {
				skipped++
			}
			if got, want := k.MatchString(s), plain.MatchString(s); got != want {
				t.Fatalf("%s on %q: %v, the regexp says %v", k, s, got, want)
			}
			if got, want := k.FindString(s), plain.FindString(s); got != want {
				t.Fatalf("%s on %q: found %q, the regexp %q", k, s, got, want)
			}
			if got, want := k.ReplaceAllString(s, "<$0>"), plain.ReplaceAllString(s, "<$0>"); got != want {
				t.Fatalf("%s on %q: replaced %q, the regexp %q", k, s, got, want)
			}
		}
	}
	// The point of the keys: most patterns have some, and most texts are spared.
	if withKeys*10 < len(keyedPatterns)*8 || skipped*2 < len(texts)*len(keyedPatterns) {
		t.Errorf("%d of %d patterns have keys; %d of %d texts spared the regexp", withKeys, len(keyedPatterns), skipped, len(texts)*len(keyedPatterns))
	}
	t.Logf("%d patterns (%d with keys), %d texts, %d of %d runs spared", len(keyedPatterns), withKeys, len(texts), skipped, len(texts)*len(keyedPatterns))
}

// endsInAbbrev answers as abbrevRe at every period of the corpus texts and on the
// abbreviations in other cases, after a word and in other runes.
func TestEndsInAbbrevAnswersAsTheRegexp(t *testing.T) {
	texts := keyTexts(t)
	for _, a := range []string{"e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "incl.", "no.", "go.", "it.", "ex."} {
		for _, v := range []string{a, strings.ToUpper(a), strings.ReplaceAll(a, "s", "\u017F")} {
			texts = append(texts, v, "see "+v, "x"+v, "(\u00e9"+v, "\u00e9"+v, "  "+v)
		}
	}
	texts = append(texts, "1.", " 12.", "\t7.", "123.", "a1.", "\n\n3.", "\v4.")
	n := 0
	for _, text := range texts {
		for i := 0; i < len(text); i++ {
			if text[i] != '.' {
				continue
			}
			s := text[:i+1]
			n++
			if got, want := endsInAbbrev(s), abbrevRe.MatchString(s); got != want {
				t.Fatalf("endsInAbbrev(%q) = %v, abbrevRe says %v", s, got, want)
			}
		}
	}
	t.Logf("%d ends", n)
}
