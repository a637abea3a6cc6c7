package jsjson

import "unicode/utf8"

// StringifiedLen16 is JSON.stringify(JSON.parse(raw)).length: the length Pi counts for
// a tool call's arguments. JSON that JSON.stringify wrote (compact, no escapes, integers
// as integers, every key once) has that length already, found without parsing it into
// a tree; any other input is parsed and stringified.
func StringifiedLen16(raw []byte) (int, error) {
	if c := (canonical{data: raw}); c.value(0) && c.i == len(raw) {
		return Len16(unsafeString(raw)), nil
	}
	s, err := StringifyRaw(raw)
	if err != nil {
		return 0, err
	}
	return Len16(s), nil
}

// canonical checks that data is JSON as JSON.stringify writes it, in the part where a
// stringified copy has the same length: no whitespace between tokens, strings without
// escapes (and valid UTF-8), integers of at most 15 digits without a sign of zero, no
// key twice in an object (key order may differ: reordering keeps the length). It
// answers false for anything else, valid or not.
type canonical struct {
	data []byte
	i    int
}

// canonicalKeys bounds the keys of an object checked for repeats; an object with more
// takes the general path.
const canonicalKeys = 32

func (c *canonical) value(depth int) bool {
	if c.i >= len(c.data) || depth > 64 {
		return false
	}
	switch b := c.data[c.i]; {
	case b == '{':
		return c.object(depth)
	case b == '[':
		c.i++
		if c.i < len(c.data) && c.data[c.i] == ']' {
			c.i++
			return true
		}
		for {
			if !c.value(depth + 1) {
				return false
			}
			if closed, ok := c.next(']'); closed || !ok {
				return ok
			}
		}
	case b == '"':
		_, ok := c.str()
		return ok
	case b == '-' || b >= '0' && b <= '9':
		return c.integer()
	case b == 't':
		return c.word("true")
	case b == 'f':
		return c.word("false")
	case b == 'n':
		return c.word("null")
	}
	return false
}

func (c *canonical) object(depth int) bool {
	c.i++
	if c.i < len(c.data) && c.data[c.i] == '}' {
		c.i++
		return true
	}
	var keys [canonicalKeys]string
	n := 0
	for {
		if c.i >= len(c.data) || c.data[c.i] != '"' {
			return false
		}
		k, ok := c.str()
		if !ok || n == canonicalKeys {
			return false
		}
		for _, seen := range keys[:n] {
			if seen == k {
				return false
			}
		}
		keys[n] = k
		n++
		if c.i >= len(c.data) || c.data[c.i] != ':' {
			return false
		}
		c.i++
		if !c.value(depth + 1) {
			return false
		}
		if closed, ok := c.next('}'); closed || !ok {
			return ok
		}
	}
}

// next reads what follows an item or a member: a comma (more follow) or end, which
// closes the array or object (closed). Anything else is not canonical (!ok).
func (c *canonical) next(end byte) (closed, ok bool) {
	if c.i >= len(c.data) {
		return false, false
	}
	switch c.data[c.i] {
	case ',':
		c.i++
		return false, true
	case end:
		c.i++
		return true, true
	}
	return false, false
}

// str reads a string without escapes or control bytes, and gives its contents.
func (c *canonical) str() (string, bool) {
	start := c.i + 1
	ascii := true
	for j := start; j < len(c.data); j++ {
		switch b := c.data[j]; {
		case b == '"':
			s := unsafeString(c.data[start:j])
			if !ascii && !utf8.ValidString(s) {
				return "", false
			}
			c.i = j + 1
			return s, true
		case b == '\\' || b < 0x20:
			return "", false
		case b >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// integer reads -?(0|[1-9][0-9]*) of at most 15 digits, not -0: a number JavaScript
// holds exactly and writes back as it is.
func (c *canonical) integer() bool {
	j := c.i
	if c.data[j] == '-' {
		j++
	}
	digits := j
	for j < len(c.data) && c.data[j] >= '0' && c.data[j] <= '9' {
		j++
	}
	n := j - digits
	if n == 0 || n > 15 || n > 1 && c.data[digits] == '0' || c.data[digits] == '0' && digits > c.i {
		return false
	}
	if j < len(c.data) && (c.data[j] == '.' || c.data[j] == 'e' || c.data[j] == 'E') {
		return false
	}
	c.i = j
	return true
}

func (c *canonical) word(w string) bool {
	if len(c.data)-c.i < len(w) || string(c.data[c.i:c.i+len(w)]) != w {
		return false
	}
	c.i += len(w)
	return true
}
