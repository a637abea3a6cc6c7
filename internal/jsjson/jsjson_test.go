package jsjson

import (
	"strings"
	"testing"
	"unicode/utf16"
)

func TestStringifyMatchesV8(t *testing.T) {
	cases := map[string]string{
		`{"b":1,"a":[1,2.50,"x<y>&"],"2":true,"1":null}`: `{"1":null,"2":true,"b":1,"a":[1,2.5,"x<y>&"]}`,
		`{"a":1,"a":2,"b":3}`:                            `{"a":2,"b":3}`,
		`"\u2028 \u00e9 \u0001"`:                         "\"\u2028 \u00e9 \\u0001\"",
		`1e21`:                                           `1e+21`,
		`123456789012345678901`:                          `123456789012345680000`,
		`0.000001`:                                       `0.000001`,
		`0.0000001`:                                      `1e-7`,
		`-1.5E-10`:                                       `-1.5e-10`,
		`100`:                                            `100`,
		`"a/b"`:                                          `"a/b"`,
		`{"01":1,"10":2,"9":3}`:                          `{"9":3,"10":2,"01":1}`,
	}
	for in, want := range cases {
		got, err := StringifyRaw([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got != want {
			t.Errorf("Stringify(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestLen16AndSlice16(t *testing.T) {
	if got := Len16("a\u00e9\U0001F600"); got != 4 {
		t.Fatalf("Len16 = %d, want 4", got)
	}
	if got := Slice16("ab\U0001F600c", 3); got != "ab\ufffd" {
		t.Fatalf("Slice16 split pair = %q", got)
	}
	if got := Slice16("abc", 5); got != "abc" {
		t.Fatalf("Slice16 = %q", got)
	}
}

// Len16 counts as UTF-16 does wherever the first byte above ASCII falls: inside the
// words it skips eight bytes at a time, at their edges, or in the tail after them.
func TestLen16CountsEveryOffset(t *testing.T) {
	for _, r := range []string{"\u00e9", "\u20ac", "\U0001F600", "\xff"} {
		for n := 0; n <= 20; n++ {
			for k := 0; k <= 3; k++ {
				s := strings.Repeat("a", n) + strings.Repeat(r, k) + strings.Repeat("b", n%9)
				want := len(utf16.Encode([]rune(s)))
				if got := Len16(s); got != want {
					t.Fatalf("Len16(%q) = %d, want %d", s, got, want)
				}
			}
		}
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for _, in := range []string{`{`, `{"a":}`, `[1,]`, `1 2`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
}
