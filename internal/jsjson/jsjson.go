// Package jsjson reproduces the few JavaScript JSON behaviours that Pi's algorithms
// depend on, so that Go code computes byte-identical strings and lengths.
//
// Invariant: Stringify(Parse(x)) equals what JSON.stringify(JSON.parse(x)) gives in V8
// for every valid JSON text x, and Len16 counts string length the way
// String.prototype.length does (UTF-16 code units).
package jsjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Kind is the JavaScript type of a parsed value.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a parsed JSON value that keeps object key order as V8 does.
type Value struct {
	Kind  Kind
	Bool  bool
	Num   float64
	Str   string
	Items []Value  // Array
	Keys  []string // Object, in V8 property order
	Vals  []Value  // Object, parallel to Keys
}

// Get returns the member named key of an object value.
func (v *Value) Get(key string) (*Value, bool) {
	if v == nil || v.Kind != Object {
		return nil, false
	}
	for i, k := range v.Keys {
		if k == key {
			return &v.Vals[i], true
		}
	}
	return nil, false
}

// Parse decodes one JSON text. Duplicate keys keep their first position and last value,
// and integer-like keys are ordered first, ascending, as V8 orders own properties.
func Parse(data []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return Value{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return Value{}, fmt.Errorf("jsjson: trailing data")
	}
	return v, nil
}

const maxDepth = 10000

func parseValue(dec *json.Decoder, depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, fmt.Errorf("jsjson: nesting deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return Value{}, err
	}
	switch t := tok.(type) {
	case nil:
		return Value{Kind: Null}, nil
	case bool:
		return Value{Kind: Bool, Bool: t}, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			// Out of range numbers become Infinity in JS.
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return Value{Kind: Number, Num: f}, nil
			}
			return Value{}, err
		}
		return Value{Kind: Number, Num: f}, nil
	case string:
		return Value{Kind: String, Str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := Value{Kind: Array}
			for dec.More() {
				item, err := parseValue(dec, depth+1)
				if err != nil {
					return Value{}, err
				}
				v.Items = append(v.Items, item)
			}
			if _, err := dec.Token(); err != nil {
				return Value{}, err
			}
			return v, nil
		case '{':
			v := Value{Kind: Object}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return Value{}, err
				}
				key, _ := kt.(string)
				item, err := parseValue(dec, depth+1)
				if err != nil {
					return Value{}, err
				}
				replaced := false
				for i, k := range v.Keys {
					if k == key {
						v.Vals[i] = item
						replaced = true
						break
					}
				}
				if !replaced {
					v.Keys = append(v.Keys, key)
					v.Vals = append(v.Vals, item)
				}
			}
			if _, err := dec.Token(); err != nil {
				return Value{}, err
			}
			orderLikeV8(&v)
			return v, nil
		}
	}
	return Value{}, fmt.Errorf("jsjson: unexpected token %v", tok)
}

// arrayIndex reports whether k is a canonical array index ("0".."4294967294").
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n > 4294967294 {
		return 0, false
	}
	return n, true
}

func orderLikeV8(v *Value) {
	hasIndex := false
	for _, k := range v.Keys {
		if _, ok := arrayIndex(k); ok {
			hasIndex = true
			break
		}
	}
	if !hasIndex {
		return
	}
	idx := make([]int, len(v.Keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		na, oka := arrayIndex(v.Keys[idx[a]])
		nb, okb := arrayIndex(v.Keys[idx[b]])
		if oka && okb {
			return na < nb
		}
		return oka && !okb
	})
	keys := make([]string, len(idx))
	vals := make([]Value, len(idx))
	for i, j := range idx {
		keys[i], vals[i] = v.Keys[j], v.Vals[j]
	}
	v.Keys, v.Vals = keys, vals
}

// Stringify renders v exactly as JSON.stringify does (no indentation).
func Stringify(v Value) string {
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}

// StringifyRaw parses raw JSON and re-renders it as JSON.stringify would.
func StringifyRaw(raw []byte) (string, error) {
	v, err := Parse(raw)
	if err != nil {
		return "", err
	}
	return Stringify(v), nil
}

func writeValue(b *strings.Builder, v Value) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		if v.Bool {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case Number:
		b.WriteString(FormatNumber(v.Num))
	case String:
		Quote(b, v.Str)
	case Array:
		b.WriteByte('[')
		for i, it := range v.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, it)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, k := range v.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			Quote(b, k)
			b.WriteByte(':')
			writeValue(b, v.Vals[i])
		}
		b.WriteByte('}')
	}
}

// Quote writes s as a JSON string literal the way JSON.stringify does: only '"', '\\'
// and control characters are escaped (no HTML or U+2028 escaping).
func Quote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				if c < 0x20 {
					fmt.Fprintf(b, `\u%04x`, c)
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Invalid UTF-8 cannot come from JSON.parse; render the replacement char.
			b.WriteString("\ufffd")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// FormatNumber renders f as JavaScript's Number.prototype.toString does.
func FormatNumber(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "null" // JSON.stringify renders non-finite numbers as null
	case f == 0:
		return "0"
	}
	neg := f < 0
	if neg {
		f = -f
	}
	// Shortest round-trip digits and decimal exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddddde±xx
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	k := len(digits)
	n := exp + 1 // position of the decimal point relative to digits
	var out string
	switch {
	case k <= n && n <= 21:
		out = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		out = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		out = "0." + strings.Repeat("0", -n) + digits
	default:
		sign := "+"
		if n-1 < 0 {
			sign = "-"
		}
		ax := n - 1
		if ax < 0 {
			ax = -ax
		}
		if k == 1 {
			out = digits + "e" + sign + strconv.Itoa(ax)
		} else {
			out = digits[:1] + "." + digits[1:] + "e" + sign + strconv.Itoa(ax)
		}
	}
	if neg {
		return "-" + out
	}
	return out
}

// Len16 is the JavaScript length of s: the number of UTF-16 code units.
func Len16(s string) int {
	// ASCII counts a unit a byte: skip it eight bytes at a time, and decode only from
	// the first word with a byte above it.
	i := 0
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
		i += 8
	}
	n := i
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// Slice16 returns the first n UTF-16 code units of s, as s.slice(0, n) does. A surrogate
// pair cut in half keeps its high surrogate, rendered as U+FFFD since Go strings hold UTF-8.
func Slice16(s string, n int) string { return slice16(s, n, "\ufffd") }

// SliceHead16 is Pi's sliceHead: the first n UTF-16 code units of s, less one when a
// surrogate pair straddles the cut (the whole character is left out, never split).
func SliceHead16(s string, n int) string { return slice16(s, n, "") }

// slice16 cuts s after n UTF-16 code units; a character that straddles the cut is
// replaced by split.
func slice16(s string, n int, split string) string {
	count := 0
	for i := 0; i < len(s); {
		if count >= n {
			return s[:i]
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if count+w > n {
			return s[:i] + split
		}
		count += w
		i += size
	}
	return s
}
