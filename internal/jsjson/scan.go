package jsjson

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

// ErrSyntax reports text that JSON.parse would reject.
var ErrSyntax = errors.New("invalid JSON")

// MaxDepth bounds nesting in Scan, matching encoding/json's limit so that every text Scan
// accepts can also be decoded with encoding/json.
const MaxDepth = 10000

// Field is one member of a scanned object: its key (unescaped) and the raw bytes of its
// value (a sub-slice of the input).
type Field struct {
	Key   string
	Value []byte
}

// ScanObject validates data as one JSON object (surrounding whitespace allowed) and
// returns its top-level members in order, without decoding the values. It is a single
// pass with no allocation beyond the returned slice.
func ScanObject(data []byte, fields []Field) ([]Field, error) {
	s := scanner{data: data}
	s.ws()
	if s.i >= len(data) || data[s.i] != '{' {
		return nil, ErrSyntax
	}
	fields, err := s.object(levelPlain, nil, fields, 0)
	if err != nil {
		return nil, err
	}
	s.ws()
	if s.i != len(data) {
		return nil, ErrSyntax
	}
	return fields, nil
}

// unsafeString views b as a string without copying (b must not change afterwards).
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// ForEachObject calls fn with the members of each element of a JSON array that is
// already known to be valid, scanning each element once (a non-object element gives
// nil fields). It reports false if data is not an array.
func ForEachObject(data []byte, fn func(fields []Field)) bool {
	s := scanner{data: data}
	s.ws()
	if s.i >= len(data) || data[s.i] != '[' {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(data) && data[s.i] == ']' {
		return true
	}
	var buf [8]Field
	for {
		s.ws()
		if s.i < len(data) && data[s.i] == '{' {
			fields, err := s.object(levelPlain, nil, buf[:0], 1)
			if err != nil {
				return false
			}
			fn(fields)
		} else {
			if !s.value(1) {
				return false
			}
			fn(nil)
		}
		s.ws()
		if s.i >= len(data) {
			return false
		}
		if data[s.i] == ']' {
			return true
		}
		if data[s.i] != ',' {
			return false
		}
		s.i++
	}
}

// Valid reports whether data is one JSON value (as JSON.parse accepts it, within MaxDepth).
func Valid(data []byte) bool {
	s := scanner{data: data}
	s.ws()
	if !s.value(0) {
		return false
	}
	s.ws()
	return s.i == len(data)
}

type scanner struct {
	data []byte
	i    int
	// noCtl: data holds no byte below 0x20 at all, so strings need no check for raw
	// control characters and are skipped by searching for quotes and backslashes.
	noCtl bool
	// quotes, when set, marks the double quotes of data, which holds no control byte
	// and no backslash: a string ends at the next quote (see lineScan).
	quotes []uint64
}

func (s *scanner) ws() {
	// Pi writes compact JSON: the next byte is almost never whitespace, which one
	// comparison tells for every byte above the space.
	for s.i < len(s.data) {
		c := s.data[s.i]
		if c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return
		}
		s.i++
	}
}

// str scans a string starting at the opening quote; it reports whether it held escapes.
// Eight bytes at a time are checked for a quote, a backslash or a control character, so
// long strings (tool output, file contents) are skipped at memory speed.
func (s *scanner) str() (esc, ok bool) {
	if s.noCtl {
		return s.strNoCtl()
	}
	d := s.data
	i := s.i + 1
	for {
		for i+8 <= len(d) {
			w := binary.LittleEndian.Uint64(d[i:])
			if special(w) != 0 {
				break
			}
			i += 8
		}
		if i >= len(d) {
			return esc, false
		}
		c := d[i]
		switch {
		case c == '"':
			s.i = i + 1
			return esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(d) {
				return esc, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					return esc, false
				}
				i += 6
			default:
				return esc, false
			}
		case c < 0x20:
			return esc, false
		default:
			i++
		}
	}
}

// strNoCtl is str for data without control bytes: the closing quote is the first quote
// not escaped, found with bytes.IndexByte (vectorised), and only the backslashes before
// it are looked at.
func (s *scanner) strNoCtl() (esc, ok bool) {
	d := s.data
	i := s.i + 1
	if s.quotes != nil {
		return false, s.plainStr(i)
	}
	// Most strings are short (keys, ids, timestamps, roles): their first bytes are
	// looked at 8 at a time, since a call to the vectorised search costs more than a
	// short string. The lowest flagged byte of a word is always a real quote or
	// backslash (the borrow artefacts of the test lie above a hit).
	for k := 0; k < shortWords && i+8 <= len(d); k++ {
		if m := quoteOrBackslash(binary.LittleEndian.Uint64(d[i:])); m != 0 {
			j := i + bits.TrailingZeros64(m)/8
			if d[j] == '"' {
				s.i = j + 1
				return false, true
			}
			break // an escape: the search below takes it from this word on
		}
		i += 8
	}
	for {
		q := bytes.IndexByte(d[i:], '"')
		if q < 0 {
			return esc, false
		}
		q += i
		for {
			b := bytes.IndexByte(d[i:q], '\\')
			if b < 0 {
				s.i = q + 1
				return esc, true
			}
			esc = true
			p := i + b
			if p+1 == q { // \" : that quote is escaped, the string goes on
				i = q + 1
				break
			}
			switch d[p+1] {
			case '\\', '/', 'b', 'f', 'n', 'r', 't':
				i = p + 2
			case 'u':
				if p+6 > q || !isHex(d[p+2]) || !isHex(d[p+3]) || !isHex(d[p+4]) || !isHex(d[p+5]) {
					return esc, false
				}
				i = p + 6
			default:
				return esc, false
			}
		}
	}
}

// plainStr ends a string whose contents start at i, in data marked by s.quotes: at
// the next quote.
func (s *scanner) plainStr(i int) bool {
	q := s.quotes
	w := i >> 6
	if w >= len(q) {
		return false
	}
	if m := q[w] >> (uint(i) & 63); m != 0 {
		s.i = i + bits.TrailingZeros64(m) + 1
		return true
	}
	for w++; w < len(q); w++ {
		if q[w] != 0 {
			s.i = w<<6 + bits.TrailingZeros64(q[w]) + 1
			return true
		}
	}
	return false
}

// shortWords is how many words of a string strNoCtl looks at before it searches.
const shortWords = 4

// quoteOrBackslash has a high bit set in each byte lane of w that is '"' or '\\' (and
// possibly in lanes above such a one).
func quoteOrBackslash(w uint64) uint64 {
	q := w ^ quot
	b := w ^ bsl
	return ((q-lo7)&^q | (b-lo7)&^b) & hi7
}

// The classes of bytes lineScan reports.
const (
	classControl   = 1 << iota // a byte below 0x20: raw in a string, a syntax error
	classBackslash             // an escape, or a syntax error
	classHigh                  // a byte at or above 0x80: UTF-8 to check
)

// lineScan says which of the bytes that make a JSON string need more than a view of
// its bytes data holds (classControl, classBackslash, classHigh), and sets in quotes
// (a word per 64 bytes, (len(data)+63)/64 of them) the bit of every double quote. In a
// line without backslashes, each string ends at the next quote of that map. The check
// reads every byte of every line: whole 64-byte blocks vectorised, the rest as the last
// 64 bytes of the line (which overlap the blocks) or, for a line shorter than that,
// a word at a time.
func lineScan(data []byte, quotes []uint64) uint8 {
	c := blocks(data, quotes)
	n := len(data) &^ 63
	tail := len(data) - n
	switch {
	case tail == 0:
	case n > 0:
		var last [1]uint64
		c |= blocks(data[len(data)-64:], last[:])
		quotes[n>>6] = last[0] >> (64 - tail)
	default:
		c |= classWords(data)
		quotes[0] = quoteBits(data)
	}
	return c
}

// quoteBits has bit j set where data[j] (at most 64 bytes) is a double quote.
func quoteBits(data []byte) uint64 {
	var q uint64
	for j, b := range data {
		if b == '"' {
			q |= 1 << j
		}
	}
	return q
}

// classWords is lineScan's classification a word at a time.
func classWords(data []byte) uint8 {
	const k = 0x2020202020202020
	var ctl, bs, high uint64
	i := 0
	for ; i+8 <= len(data); i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		x := w ^ bsl
		ctl |= (w - k) &^ w
		bs |= (x - lo7) &^ x
		high |= w
	}
	var c uint8
	for ; i < len(data); i++ {
		switch b := data[i]; {
		case b < 0x20:
			c |= classControl
		case b == '\\':
			c |= classBackslash
		case b >= 0x80:
			c |= classHigh
		}
	}
	// A borrow artefact of the word tests lies above a real hit, so a flag from them
	// is always a real one.
	if ctl&hi7 != 0 {
		c |= classControl
	}
	if bs&hi7 != 0 {
		c |= classBackslash
	}
	if high&hi7 != 0 {
		c |= classHigh
	}
	return c
}

const (
	lo7  = 0x0101010101010101
	hi7  = 0x8080808080808080
	quot = 0x2222222222222222
	bsl  = 0x5c5c5c5c5c5c5c5c
)

// special has a high bit set in each byte lane of w that is '"', '\\' or below 0x20.
func special(w uint64) uint64 {
	q := w ^ quot
	b := w ^ bsl
	zq := (q - lo7) &^ q
	zb := (b - lo7) &^ b
	ctl := (w - 0x2020202020202020) &^ w // bytes < 0x20 (with borrow artefacts only above a hit)
	return (zq | zb | ctl) & hi7
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func (s *scanner) lit(word string) bool {
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

func (s *scanner) num() bool {
	d, i := s.data, s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	if i >= len(d) {
		return false
	}
	switch {
	case d[i] == '0':
		i++
	case d[i] >= '1' && d[i] <= '9':
		i = digits(d, i)
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		if i = digits(d, i+1); d[i-1] == '.' {
			return false // a fraction needs a digit
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		start := i
		if i = digits(d, i); i == start {
			return false // so does an exponent
		}
	}
	s.i = i
	return true
}

// digits is the position after the run of digits at i.
func digits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// value scans one value iteratively (no recursion, so hostile nesting cannot overflow).
func (s *scanner) value(depth int) bool {
	var stack []byte // open containers: '{' or '['
	d := s.data
	for {
		if s.i >= len(d) {
			return false
		}
		switch c := d[s.i]; {
		case c == '{' || c == '[':
			if depth+len(stack) >= MaxDepth {
				return false
			}
			stack = append(stack, c)
			s.i++
			s.ws()
			if s.i < len(d) && (d[s.i] == '}' && c == '{' || d[s.i] == ']' && c == '[') {
				s.i++
				stack = stack[:len(stack)-1]
				break
			}
			if c == '{' {
				if !s.key() {
					return false
				}
			}
			continue
		case c == '"':
			if _, ok := s.str(); !ok {
				return false
			}
		case c == 't':
			if !s.lit("true") {
				return false
			}
		case c == 'f':
			if !s.lit("false") {
				return false
			}
		case c == 'n':
			if !s.lit("null") {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if !s.num() {
				return false
			}
		default:
			return false
		}
		// After a complete value: close containers or move to the next member.
		for {
			if len(stack) == 0 {
				return true
			}
			s.ws()
			if s.i >= len(d) {
				return false
			}
			top := stack[len(stack)-1]
			c := d[s.i]
			if c == ',' {
				s.i++
				s.ws()
				if top == '{' && !s.key() {
					return false
				}
				break
			}
			if top == '{' && c == '}' || top == '[' && c == ']' {
				s.i++
				stack = stack[:len(stack)-1]
				continue
			}
			return false
		}
	}
}

// key scans `"key" :` and the whitespace after it.
func (s *scanner) key() bool {
	s.ws()
	if s.i >= len(s.data) || s.data[s.i] != '"' {
		return false
	}
	if _, ok := s.str(); !ok {
		return false
	}
	s.ws()
	if s.i >= len(s.data) || s.data[s.i] != ':' {
		return false
	}
	s.i++
	s.ws()
	return true
}

// StringValue decodes a raw JSON string value; ok is false for any other value.
func StringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	plain := true
	for _, c := range inner {
		if c == '\\' || c < 0x20 {
			plain = false
			break
		}
	}
	if plain {
		if utf8.Valid(inner) {
			return string(inner), true
		}
	}
	v, err := Parse(raw)
	if err != nil || v.Kind != String {
		return "", false
	}
	return v.Str, true
}

// LookupField returns the raw value of the top-level member key of a JSON object that is
// already known to be valid. As with JSON.parse, the last of duplicated keys wins.
func LookupField(data []byte, key string) ([]byte, bool) {
	var found []byte
	ok := false
	s := scanner{data: data}
	s.ws()
	if s.i >= len(data) || data[s.i] != '{' {
		return nil, false
	}
	s.i++
	for {
		s.ws()
		if s.i >= len(data) || data[s.i] != '"' {
			return found, ok
		}
		ks := s.i
		esc, sok := s.str()
		if !sok {
			return nil, false
		}
		k := data[ks+1 : s.i-1]
		match := string(k) == key
		if esc && !match {
			if uq, uok := StringValue(data[ks:s.i]); uok {
				match = uq == key
			}
		}
		s.ws()
		if s.i >= len(data) || data[s.i] != ':' {
			return nil, false
		}
		s.i++
		s.ws()
		vs := s.i
		if !s.value(1) {
			return nil, false
		}
		if match {
			found, ok = data[vs:s.i], true
		}
		s.ws()
		if s.i >= len(data) || data[s.i] != ',' {
			return found, ok
		}
		s.i++
	}
}

// StringView is StringValue without a copy for strings that hold no escape: the result
// shares memory with raw, which therefore must never be modified afterwards. Session
// files are read into buffers that are never written, so decoding them this way costs
// no allocation per string.
func StringView(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if len(inner) == 0 {
		return "", true
	}
	if plainPrintable(inner) {
		return unsafe.String(&inner[0], len(inner)), true // ASCII: valid UTF-8 as it is
	}
	for _, c := range inner {
		if c == '\\' || c < 0x20 {
			return StringValue(raw)
		}
	}
	if !utf8.Valid(inner) {
		return StringValue(raw)
	}
	return unsafe.String(&inner[0], len(inner)), true
}

// PlainView is StringView for a string value of a line that ScanEntry found Plain: the
// bytes between its quotes, with no check of them.
func PlainView(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	return unsafeString(raw[1 : len(raw)-1]), true
}

// plainPrintable reports ASCII without a backslash or a control byte, 8 bytes at a time:
// what most strings of a session line (ids, types, timestamps, roles, paths) are.
func plainPrintable(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		x := w ^ bsl
		if (w|(x-lo7)&^x|(w-0x2020202020202020)&^w)&hi7 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c >= 0x80 || c == '\\' || c < 0x20 {
			return false
		}
	}
	return true
}

// EntryScan is what ScanEntry reports of a session line. Values are sub-slices of the
// scanned data; the buffers are reused from one ScanEntry to the next.
type EntryScan struct {
	Fields []Field // the line's top-level members
	// Message holds the members of the last top-level "message" member when it is an
	// object (MessageFound), Usage those of an object "usage" member inside it, found
	// at offset UsageAt of the data (-1: none).
	Message      []Field
	MessageFound bool
	Usage        []Field
	UsageAt      int
	// Block, when set, is called for each element of an array "content" member of the
	// message: contentAt is the array's offset in the data, block the element's members
	// (nil for an element that is not an object) and args those of its "arguments"
	// member when that is an object.
	Block func(contentAt int, block, args []Field)
	// Plain: the line holds no backslash, no control byte and no byte at or above
	// 0x80, so each of its strings is its bytes between the quotes (see PlainView).
	// It is known before Block is first called.
	Plain bool

	fieldsBuf  [16]Field
	messageBuf [24]Field
	usageBuf   [8]Field
	blockBuf   [8]Field
	argsBuf    [8]Field
	args       []Field
	quotes     []uint64
}

// The objects ScanEntry looks into.
const (
	levelEntry = iota
	levelMessage
	levelBlock
	levelPlain
)

// ScanEntry validates data as one JSON object, as ScanObject does, and in the same pass
// reports the members of the objects that reading a session entry needs: the message,
// its usage, its content blocks and their tool-call arguments. No byte is scanned twice.
func ScanEntry(data []byte, es *EntryScan) error {
	es.Fields, es.Message, es.Usage, es.args = es.fieldsBuf[:0], es.messageBuf[:0], es.usageBuf[:0], nil
	es.MessageFound, es.UsageAt = false, -1
	words := (len(data) + 63) / 64
	if cap(es.quotes) < words {
		es.quotes = make([]uint64, words+words/4)
	}
	quotes := es.quotes[:words]
	class := lineScan(data, quotes)
	s := scanner{data: data, noCtl: class&classControl == 0}
	if class&(classControl|classBackslash) == 0 {
		s.quotes = quotes // every string ends at the next quote
	}
	es.Plain = class == 0
	s.ws()
	if s.i >= len(data) || data[s.i] != '{' {
		return ErrSyntax
	}
	fields, err := s.object(levelEntry, es, es.Fields, 0)
	if err != nil {
		return err
	}
	es.Fields = fields
	s.ws()
	if s.i != len(data) {
		return ErrSyntax
	}
	return nil
}

// object scans an object at s.i, appending its members to out. What level of a session
// line it is says which members are looked into (see ScanEntry); levelPlain looks into
// none, and needs no EntryScan.
func (s *scanner) object(level int, es *EntryScan, out []Field, depth int) ([]Field, error) {
	// The position is kept in a local between calls that scan a value, and the
	// punctuation Pi's compact JSON puts next to each other is looked at first:
	// whitespace is skipped only where the expected byte is not there.
	data := s.data
	i := s.i + 1 // after '{'
	if i < len(data) && data[i] != '"' {
		i = skipWS(data, i)
		if i < len(data) && data[i] == '}' {
			s.i = i + 1
			return out, nil
		}
	}
	for {
		if i >= len(data) || data[i] != '"' {
			if i = skipWS(data, i); i >= len(data) || data[i] != '"' {
				return nil, ErrSyntax
			}
		}
		ks := i
		esc, ok := false, false
		if s.quotes != nil { // strAt, by hand: the call costs as much as the search
			ok = s.plainStr(i + 1)
		} else {
			esc, ok = s.strAt(i)
		}
		if !ok {
			return nil, ErrSyntax
		}
		i = s.i
		key := unsafeString(data[ks+1 : i-1])
		if esc {
			uq, ok := StringValue(data[ks:i])
			if !ok {
				return nil, ErrSyntax
			}
			key = uq
		}
		if i >= len(data) || data[i] != ':' {
			if i = skipWS(data, i); i >= len(data) || data[i] != ':' {
				return nil, ErrSyntax
			}
		}
		i++
		if i >= len(data) || data[i] <= ' ' {
			i = skipWS(data, i)
		}
		vs := i
		s.i = i
		var c byte
		if i < len(data) {
			c = data[i]
		}
		var err error
		switch {
		case c == '"':
			// The most common value (ids, types, timestamps, text): no member of a
			// string is looked into.
			if s.quotes != nil {
				ok = s.plainStr(i + 1)
			} else {
				_, ok = s.strAt(i)
			}
			if !ok {
				return nil, ErrSyntax
			}
		case c == '-' || c >= '0' && c <= '9':
			// Numbers (usage, times) and literals end where they are read: no
			// container to close.
			if !s.num() {
				return nil, ErrSyntax
			}
		case c == 'n' || c == 't' || c == 'f':
			if !s.lit(literalOf(c)) {
				return nil, ErrSyntax
			}
		case level == levelEntry && key == "message" && c == '{':
			es.Message, err = s.object(levelMessage, es, es.messageBuf[:0], depth+1)
		case level == levelMessage && key == "usage" && c == '{':
			es.Usage, err = s.object(levelPlain, es, es.usageBuf[:0], depth+1)
			es.UsageAt = vs
		case level == levelMessage && key == "content" && c == '[' && es.Block != nil:
			err = s.contentArray(es, depth+1)
		case level == levelBlock && key == "arguments" && c == '{':
			es.args, err = s.object(levelPlain, es, es.argsBuf[:0], depth+1)
		default:
			if !s.value(depth + 1) {
				return nil, ErrSyntax
			}
		}
		if err != nil {
			return nil, err
		}
		if level == levelEntry && key == "message" {
			es.MessageFound = c == '{' // a later non-object value replaces an earlier object
		}
		i = s.i
		out = append(out, Field{Key: key, Value: data[vs:i]})
		if i >= len(data) || data[i] != ',' && data[i] != '}' {
			if i = skipWS(data, i); i >= len(data) {
				return nil, ErrSyntax
			}
		}
		if data[i] == ',' {
			i++
			continue
		}
		if data[i] == '}' {
			s.i = i + 1
			return out, nil
		}
		return nil, ErrSyntax
	}
}

// literalOf is the JSON literal that starts with c ('n', 't' or 'f').
func literalOf(c byte) string {
	switch c {
	case 'n':
		return "null"
	case 't':
		return "true"
	}
	return "false"
}

// strAt scans the string whose opening quote is at i (as str does).
func (s *scanner) strAt(i int) (esc, ok bool) {
	if s.quotes != nil {
		return false, s.plainStr(i + 1)
	}
	s.i = i
	return s.str()
}

// skipWS is the position of the first byte at or after i that is not JSON whitespace.
func skipWS(data []byte, i int) int {
	for i < len(data) {
		if c := data[i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
		i++
	}
	return i
}

func (s *scanner) contentArray(es *EntryScan, depth int) error {
	data := s.data
	at := s.i
	s.i++ // '['
	s.ws()
	if s.i < len(data) && data[s.i] == ']' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if s.i < len(data) && data[s.i] == '{' {
			es.args = nil
			block, err := s.object(levelBlock, es, es.blockBuf[:0], depth+1)
			if err != nil {
				return err
			}
			es.Block(at, block, es.args)
		} else if !s.value(depth + 1) {
			return ErrSyntax
		} else {
			es.Block(at, nil, nil) // as ForEachObject: every element has its call
		}
		s.ws()
		if s.i >= len(data) {
			return ErrSyntax
		}
		if data[s.i] == ']' {
			s.i++
			return nil
		}
		if data[s.i] != ',' {
			return ErrSyntax
		}
		s.i++
	}
}

// PlainASCII reports bytes that decode to themselves in a JSON string: ASCII without a
// backslash (a valid literal holds no quote or control character inside).
func PlainASCII(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		x := w ^ bsl
		if w&hi7 != 0 || (x-lo7)&^x&hi7 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 || b[i] == '\\' {
			return false
		}
	}
	return true
}
