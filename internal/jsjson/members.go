package jsjson

import (
	"bytes"
	"encoding/json"
)

// EachMember calls fn with each member of a top-level JSON object, in order, until fn
// returns false; the values are views of body. Only keys are decoded (values are
// skipped, never copied), so it costs no memory whatever the body holds. It reports
// false when body is not an object, or is broken before fn stopped. Unlike LookupField it
// needs no valid input: the members before a break are seen (the server finds the id of
// a request whose body is broken after it), and values are skipped without recursion.
func EachMember(body []byte, fn func(key string, value []byte) bool) bool {
	i := 0
	ws := func() {
		for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r') {
			i++
		}
	}
	skipStr := func() bool { // at '"'
		i++
		for i < len(body) {
			switch body[i] {
			case '\\':
				i += 2
				continue
			case '"':
				i++
				return true
			}
			i++
		}
		return false
	}
	key := func() (string, bool) { // at '"'
		start := i
		if !skipStr() {
			return "", false
		}
		var s string
		if json.Unmarshal(body[start:i], &s) != nil {
			return "", false
		}
		return s, true
	}
	skip := func() bool { // skips one value, iteratively
		depth := 0
		for i < len(body) {
			switch c := body[i]; c {
			case '"':
				if !skipStr() {
					return false
				}
			case '{', '[':
				depth++
				i++
			case '}', ']':
				if depth == 0 {
					return true
				}
				depth--
				i++
			case ',':
				if depth == 0 {
					return true
				}
				i++
			default:
				i++
			}
			if depth == 0 && i < len(body) && (body[i] == ',' || body[i] == '}') {
				return true
			}
		}
		return depth == 0
	}
	ws()
	if i >= len(body) || body[i] != '{' {
		return false
	}
	i++
	ws()
	if i < len(body) && body[i] == '}' {
		return true
	}
	for {
		ws()
		if i >= len(body) || body[i] != '"' {
			return false
		}
		k, ok := key()
		if !ok {
			return false
		}
		ws()
		if i >= len(body) || body[i] != ':' {
			return false
		}
		i++
		ws()
		start := i
		if !skip() || i == start {
			return false // broken, or the body ends where a value should be
		}
		if !fn(k, bytes.TrimSpace(body[start:i])) {
			return true
		}
		ws()
		if i < len(body) && body[i] == '}' {
			return true
		}
		if i >= len(body) || body[i] != ',' {
			return false
		}
		i++
	}
}
