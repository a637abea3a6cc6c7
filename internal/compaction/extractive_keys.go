package compaction

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"

	"github.com/pi-lsp/pi-lsp/internal/asciifold"
)

// The summarizer's cue patterns are case-insensitive alternations of words, run on every
// sentence, line and item of a session: on a big one, seconds of regexp backtracking for
// texts that hold none of the words. A keyedRe first looks for the words any match must
// hold (taken from the pattern itself, so they cannot go out of step with it) with plain
// substring searches, and runs the regexp only on a text that holds one: what it matches
// is the regexp's answer, unchanged.

// keyedRe is a regexp with the literals one of which every match of it holds, lower
// case; nil keys when the pattern has no such set (it then always runs).
type keyedRe struct {
	*regexp.Regexp
	keys    []string
	byFirst [256][]string // the keys by their first byte
}

func keyed(expr string) *keyedRe {
	re := regexp.MustCompile(expr)
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err) // MustCompile took it
	}
	keys, ok := requiredKeys(tree.Simplify())
	if !ok {
		keys = nil
	}
	k := &keyedRe{Regexp: re, keys: keys}
	for _, key := range keys {
		k.byFirst[key[0]] = append(k.byFirst[key[0]], key)
	}
	keyedPatterns = append(keyedPatterns, k)
	return k
}

// keyedPatterns are every keyedRe of the package (its tests check each against its
// regexp).
var keyedPatterns []*keyedRe

// requiredKeys are literals (lower case) one of which every match of re holds, ok false
// when there is no such set (re may match without any literal, or a literal is not ASCII).
func requiredKeys(re *syntax.Regexp) (keys []string, ok bool) {
	if set, ok := exactSet(re); ok && shortest(set) > 0 && len(set) <= maxKeys {
		return set, true // the whole of what re matches
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return requiredKeys(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredKeys(re.Sub[0])
		}
	case syntax.OpConcat:
		// Any part's keys will do, or what a run of parts with few strings spells: the
		// most selective (longest shortest key).
		var best []string
		better := func(k []string) {
			if shortest(k) == 0 {
				return // a part that may match "" holds no key
			}
			small, bestSmall := len(k) <= maxKeys, best != nil && len(best) <= maxKeys
			if best == nil || (small && !bestSmall) || (small == bestSmall && shortest(k) > shortest(best)) {
				best = k
			}
		}
		for i, sub := range re.Sub {
			if k, ok := requiredKeys(sub); ok {
				better(k)
			}
			run := []string{""}
			for _, next := range re.Sub[i:] {
				set, ok := exactSet(next)
				if !ok {
					break
				}
				if run = product(run, set); run == nil {
					break
				}
				better(run)
			}
		}
		return best, shortest(best) > 0
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			k, ok := requiredKeys(sub)
			if !ok {
				return nil, false // this branch matches without a key
			}
			all = append(all, k...)
		}
		return all, true
	}
	return nil, false
}

// maxExact bounds the strings of an exact set, maxKeys the keys taken from one (each
// key is a search of the text).
const (
	maxExact = 256
	maxKeys  = 32
)

// exactSet are the strings re matches (lower case, assertions such as \b read as
// matching ""), ok false when they are not a few ASCII strings.
func exactSet(re *syntax.Regexp) (set []string, ok bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true
	case syntax.OpLiteral:
		s := asciifold.Fold(string(re.Rune))
		if !asciifold.IsASCII(s) {
			return nil, false
		}
		return []string{s}, true
	case syntax.OpCharClass:
		// A class of a few letters, as (?i) writes one ([Ss\x{17F}]): their folds.
		seen := map[string]bool{}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > 8 {
				return nil, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				f := asciifold.Fold(string(r))
				if f[0] >= utf8.RuneSelf {
					return nil, false
				}
				if !seen[f] {
					seen[f] = true
					set = append(set, f)
				}
			}
		}
		return set, len(set) > 0 && len(set) <= 8
	case syntax.OpCapture:
		return exactSet(re.Sub[0])
	case syntax.OpQuest:
		set, ok := exactSet(re.Sub[0])
		return append(set, ""), ok
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, ok := exactSet(sub)
			if !ok {
				return nil, false
			}
			set = append(set, s...)
		}
		return set, len(set) <= maxExact
	case syntax.OpConcat:
		set = []string{""}
		for _, sub := range re.Sub {
			s, ok := exactSet(sub)
			if !ok {
				return nil, false
			}
			if set = product(set, s); set == nil {
				return nil, false
			}
		}
		return set, true
	}
	return nil, false
}

// product is every string of a followed by every string of b, nil beyond maxExact.
func product(a, b []string) []string {
	if len(a)*len(b) > maxExact {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}

// shortest is the length of the shortest key, 0 for none.
func shortest(keys []string) int {
	n := -1
	for _, k := range keys {
		if n < 0 || len(k) < n {
			n = len(k)
		}
	}
	return max(n, 0)
}

// mayMatch reports whether s holds one of the keys, as the regexp compares letters
// (case folded): when it does not, the regexp cannot match s. One pass over s, trying at
// each byte the keys that start with it.
func (k *keyedRe) mayMatch(s string) bool {
	if k.keys == nil {
		return true
	}
	if !asciifold.IsASCII(s) {
		s = asciifold.Fold(s)
	}
	for i := 0; i < len(s); i++ {
		for _, key := range k.byFirst[asciifold.Lower(s[i])] {
			if asciifold.HasPrefix(s[i:], key) {
				return true
			}
		}
	}
	return false
}

func (k *keyedRe) MatchString(s string) bool { return k.mayMatch(s) && k.Regexp.MatchString(s) }

func (k *keyedRe) FindString(s string) string {
	if !k.mayMatch(s) {
		return ""
	}
	return k.Regexp.FindString(s)
}

func (k *keyedRe) FindStringSubmatch(s string) []string {
	if !k.mayMatch(s) {
		return nil
	}
	return k.Regexp.FindStringSubmatch(s)
}

func (k *keyedRe) FindAllStringSubmatch(s string, n int) [][]string {
	if !k.mayMatch(s) {
		return nil
	}
	return k.Regexp.FindAllStringSubmatch(s, n)
}

func (k *keyedRe) FindAllString(s string, n int) []string {
	if !k.mayMatch(s) {
		return nil
	}
	return k.Regexp.FindAllString(s, n)
}

func (k *keyedRe) ReplaceAllString(s, repl string) string {
	if !k.mayMatch(s) {
		return s
	}
	return k.Regexp.ReplaceAllString(s, repl)
}
