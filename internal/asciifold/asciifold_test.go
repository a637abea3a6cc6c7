package asciifold

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Fold rests on one fact of Unicode's simple case folding, the one (?i) uses: the only
// runes outside ASCII that fold to an ASCII letter are the Kelvin sign and the long s.
func TestFoldCoversEveryRuneThatFoldsToASCII(t *testing.T) {
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < utf8.RuneSelf && unicode.IsLetter(f) {
				if got, want := Fold(string(r)), strings.ToLower(string(f)); got != want {
					t.Errorf("%U folds to %q: Fold gives %q, want %q", r, f, got, want)
				}
			}
		}
	}
	if got := Fold("Ab\u212A\u017Fé\xff"); got != "abksé\uFFFD" {
		t.Errorf("Fold = %q", got)
	}
}

// HasPrefix and Index find a lower-case literal where a (?i) regexp of it matches, in
// ASCII text of any case, and nowhere else.
func TestIndexAgreesWithCaseInsensitiveRegexp(t *testing.T) {
	texts := []string{"", "x", "Bearer abc", "a BEARER b", "bEaReR", "beare", "the bearer's", "b-e-a-r-e-r", "[BEARER]", "sk-", "xSK-1", "ends with sk"}
	for _, lit := range []string{"bearer", "sk-", "x"} {
		re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(lit))
		for _, s := range texts {
			want := -1
			if loc := re.FindStringIndex(s); loc != nil {
				want = loc[0]
			}
			if got := Index(s, lit); got != want {
				t.Errorf("Index(%q, %q) = %d, the regexp says %d", s, lit, got, want)
			}
			if got := HasPrefix(s, lit); got != (want == 0) {
				t.Errorf("HasPrefix(%q, %q) = %v, the regexp says %v", s, lit, got, want == 0)
			}
		}
	}
	if Lower('Q') != 'q' || Lower('q') != 'q' || Lower('[') != '[' || Lower(0xC0) != 0xC0 {
		t.Error("Lower changes a byte that is no ASCII capital, or misses one")
	}
	if !IsASCII("plain text ~") || IsASCII("caf\u00e9") {
		t.Error("IsASCII")
	}
}
