package redact

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// JSON returns the JSON text data with its strings redacted: each string (key or value)
// in which a rule matches, once its escapes are decoded, is replaced by its redacted
// text, encoded as encoding/json encodes it; everything else is kept byte for byte, and
// data is returned as it is when no string changes. The result is valid JSON when data
// is. A text that is not JSON is redacted as a string (String).
func JSON(data []byte) []byte {
	if !json.Valid(data) {
		return []byte(String(string(data)))
	}
	var out []byte // nil until a string changes
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		j := stringEnd(data, i)
		raw := data[i:j]
		if s, changed := redactJSONString(raw); changed {
			if out == nil {
				out = make([]byte, 0, len(data))
			}
			out = append(append(out, data[last:i]...), s...)
			last = j
		}
		i = j - 1
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

// stringEnd is the end of the JSON string that starts at data[i] (just past its closing
// quote).
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// redactJSONString redacts one JSON string (with its quotes), and reports whether it
// changed.
func redactJSONString(raw []byte) ([]byte, bool) {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		// No escape and valid UTF-8: the text between the quotes is the string itself,
		// and a marker holds nothing that needs an escape.
		s := string(raw[1 : len(raw)-1])
		out := String(s)
		if out == s {
			return raw, false
		}
		return append(append([]byte{'"'}, out...), '"'), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw, false
	}
	out := String(s)
	if out == s {
		return raw, false
	}
	enc, err := json.Marshal(out)
	if err != nil {
		return raw, false
	}
	return enc, true
}
