// Package asciifold finds ASCII literals in text regardless of case, as a case-insensitive
// regular expression compares letters, without running one. The prefilters that let a
// regexp run only on a text that may hold a match (internal/redact's anchors,
// internal/compaction's cue keys) rest on it, so that a prefilter never turns away a text
// its regexp would match.
//
// Invariant: a literal written in lower case ASCII occurs in Fold(s) exactly where a (?i)
// regexp of it matches s; on text that is ASCII, HasPrefix and Index agree with that
// without building Fold(s).
package asciifold

import (
	"strings"
	"unicode/utf8"
)

// Lower is c with an ASCII capital letter made lower case, any other byte as it is.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// HasPrefix reports whether s starts with lower (lower case), the ASCII letters of s in
// either case.
func HasPrefix(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		if Lower(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

// Index is the first position of lower (lower case, not empty) in s, the ASCII letters of
// s in either case; -1 when it is not there.
func Index(s, lower string) int {
	c := lower[0]
	for i := 0; i+len(lower) <= len(s); i++ {
		if Lower(s[i]) == c && HasPrefix(s[i:], lower) {
			return i
		}
	}
	return -1
}

// IsASCII reports whether every byte of s is ASCII.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Fold is s with every letter that case-folds to an ASCII letter written as that letter
// in lower case: ASCII letters and the two other runes whose fold orbit holds one, the
// Kelvin sign (k) and the long s (s). Other runes stay as they are (an invalid byte
// becomes U+FFFD).
func Fold(s string) string {
	if IsASCII(s) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
		case r == '\u212A': // KELVIN SIGN
			r = 'k'
		case r == '\u017F': // LATIN SMALL LETTER LONG S
			r = 's'
		}
		b.WriteRune(r)
	}
	return b.String()
}
