package jsjson

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

func TestScanAgreesWithEncodingJSON(t *testing.T) {
	cases := []string{
		`{}`, `{"a":1}`, ` {"a" : [1, 2.5e-3, -0, "x\"y", {"b":null}], "c": true } `,
		`{"a":}`, `{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":"\x"}`,
		`{"a":"\u12"}`, `{"a":"\u00e9\/"}`, "{\"a\":\"tab\there\"}", `{"a":[1,2}`, `{"a":[1,2]]}`,
		`{"a":tru}`, `{"a":nulls}`, `[1]`, `"s"`, `{"a":1} x`, `{"\u0061":2}`, `{"a":[[[[]]]],"b":{}}`,
		`{"a":1e5,"b":1E+2,"c":-1.5e-2}`, `{"a":[{}, [], ""]}`, `{`, ``, `{"a":"unterminated}`,
		`{"message":{"content":[{"type":"text","text":"a\"b\\"},{"arguments":{"path":"\\\""}}]}}`,
		`{"message":{"content":"x\\\"y\\"}}`, `{"message":{"content":"x\\"y"}}`, `{"a":"\u00"}`,
		`{"a":"\u0041\ud83d\ude00"}`, `{"a":"x\`, `{"a":"x\"}`, `{"message":{"usage":{"input":1},"content":[1,"a",{"type":"toolCall"}]}}`,
		"{\"a\":\"x\u0001\"}", "{\"a\":1,\t\"b\":\"tab\"}", "{\"a\":\"\u007f\u0080\xff\"}",
	}
	for _, c := range cases {
		want := json.Valid([]byte(c)) && strings.HasPrefix(strings.TrimSpace(c), "{")
		fields, err := ScanObject([]byte(c), nil)
		if (err == nil) != want {
			t.Errorf("ScanObject(%q) err=%v, encoding/json valid object=%v", c, err, want)
		}
		var es EntryScan
		es.Block = func(int, []Field, []Field) {}
		if err := ScanEntry([]byte(c), &es); (err == nil) != want {
			t.Errorf("ScanEntry(%q) err=%v, encoding/json valid object=%v", c, err, want)
		}
		if Valid([]byte(c)) != json.Valid([]byte(c)) {
			t.Errorf("Valid(%q) = %v", c, Valid([]byte(c)))
		}
		if err == nil {
			var m map[string]json.RawMessage
			json.Unmarshal([]byte(c), &m)
			for _, f := range fields {
				if string(m[f.Key]) != string(f.Value) && !json.Valid(f.Value) {
					t.Errorf("%q: field %s = %s", c, f.Key, f.Value)
				}
			}
		}
	}
	deep := `{"a":` + strings.Repeat("[", MaxDepth+5) + strings.Repeat("]", MaxDepth+5) + `}`
	if _, err := ScanObject([]byte(deep), nil); err == nil {
		t.Error("nesting beyond MaxDepth accepted")
	}
	f, err := ScanObject([]byte(`{"type":"message","id":"ab","parentId":null,"k\u0065y":"v"}`), nil)
	if err != nil || len(f) != 4 || f[3].Key != "key" || string(f[2].Value) != "null" {
		t.Fatalf("fields %+v %v", f, err)
	}
}

func FuzzScanObject(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"type":"message","id":"x","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`, `{"a":[1,{"b":"\u00e9"}]}`, `{`, `{"a":"\`,
		`{"id":"0123456789abcdef0123456789abcdef","message":{"role":"assistant","content":[{"type":"toolCall","name":"read","arguments":{"path":"a/b.go"}}],"usage":{"input":1,"cost":{"total":0}}},"type":"message"}`,
		`{"long":"` + strings.Repeat("x", 130) + `","n":-1.5e3,"t":true,"f":false,"z":null,"a":[],"o":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ScanObject(data, nil)
		var m map[string]json.RawMessage
		stdErr := json.Unmarshal(data, &m)
		if (err == nil) != (stdErr == nil) && !(stdErr == nil && m == nil) {
			t.Fatalf("ScanObject err=%v, encoding/json err=%v for %q", err, stdErr, data)
		}
		var es EntryScan
		es.Block = func(int, []Field, []Field) {}
		if entryErr := ScanEntry(data, &es); (entryErr == nil) != (err == nil) {
			t.Fatalf("ScanEntry err=%v, ScanObject err=%v for %q", entryErr, err, data)
		}
		// ScanEntry's shortcuts (strings ended by the quote map of a line without
		// escapes) find the members ScanObject finds.
		if objFields, err := ScanObject(data, nil); err == nil {
			if len(objFields) != len(es.Fields) {
				t.Fatalf("ScanEntry found %d members, ScanObject %d, in %q", len(es.Fields), len(objFields), data)
			}
			for k, f := range objFields {
				if f.Key != es.Fields[k].Key || string(f.Value) != string(es.Fields[k].Value) {
					t.Fatalf("member %d: ScanEntry %q=%s, ScanObject %q=%s", k, es.Fields[k].Key, es.Fields[k].Value, f.Key, f.Value)
				}
			}
		}
	})
}

func TestLookupFieldLastWins(t *testing.T) {
	d := []byte(`{"a":1,"b":{"a":9},"a":2,"c":"x"}`)
	if v, ok := LookupField(d, "a"); !ok || string(v) != "2" {
		t.Errorf("a = %s %v", v, ok)
	}
	if v, ok := LookupField(d, "c"); !ok || string(v) != `"x"` {
		t.Errorf("c = %s", v)
	}
	if _, ok := LookupField(d, "z"); ok {
		t.Error("z found")
	}
	if v, ok := LookupField([]byte(`{}`), "a"); ok || v != nil {
		t.Error("empty object")
	}
}

func TestScanEntryStrings(t *testing.T) {
	atoms := []string{`a`, `\"`, `\\`, `\n`, `\u00e9`, `\u12`, `\x`, `"`, `\`, "\t", "\x01", `é`, `\/`}
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		// A plain run first, so that escapes and ends fall on every offset of the
		// words the scanner reads a string's start in.
		b.WriteString(strings.Repeat("a", r.Intn(48)))
		for k := r.Intn(8); k >= 0; k-- {
			b.WriteString(atoms[r.Intn(len(atoms))])
		}
		data := []byte(`{"message":{"content":[{"type":"text","text":"` + b.String() + `"}]},"id":"x"}`)
		var es EntryScan
		var text []byte
		es.Block = func(_ int, block, _ []Field) {
			for _, f := range block {
				if f.Key == "text" {
					text = f.Value
				}
			}
		}
		err := ScanEntry(data, &es)
		if want := json.Valid(data); (err == nil) != want {
			t.Fatalf("ScanEntry(%q) err=%v, encoding/json valid=%v", data, err, want)
		}
		if err == nil && string(text) != `"`+b.String()+`"` {
			t.Fatalf("ScanEntry(%q): text %s", data, text)
		}
	}
}

// Pi's sliceHead never splits a surrogate pair (the character is left out); s.slice
// keeps the high surrogate, which Go renders as U+FFFD.
func TestSliceHead16KeepsPairsWhole(t *testing.T) {
	s := "a\U0001F600b"
	for _, c := range []struct {
		n         int
		head, cut string
	}{{0, "", ""}, {1, "a", "a"}, {2, "a", "a\ufffd"}, {3, "a\U0001F600", "a\U0001F600"}, {4, s, s}, {9, s, s}} {
		if got := SliceHead16(s, c.n); got != c.head {
			t.Errorf("SliceHead16(%q, %d) = %q, want %q", s, c.n, got, c.head)
		}
		if got := Slice16(s, c.n); got != c.cut {
			t.Errorf("Slice16(%q, %d) = %q, want %q", s, c.n, got, c.cut)
		}
	}
}

// lineClass is lineScan without the quotes.
func lineClass(data []byte) uint8 {
	return lineScan(data, make([]uint64, (len(data)+63)/64))
}

// lineClass finds a control byte, a backslash and a high byte wherever they lie (in a
// vectorised block or in the tail after the blocks), and none in text without them.
func TestLineClass(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for n := 0; n < 300; n++ {
		b := make([]byte, n)
		for i := range b {
			if b[i] = byte(0x20 + r.Intn(0x5f)); b[i] == '\\' {
				b[i] = 'x'
			}
		}
		if c, w := lineClass(b), classWords(b); c != 0 || w != 0 || blockClasses(b) != 0 {
			t.Fatalf("class %b/%b of %q", c, w, b)
		}
		for i := range b {
			for _, x := range []struct {
				c     byte
				class uint8
			}{{0, classControl}, {0x09, classControl}, {0x1f, classControl}, {'\\', classBackslash}, {0x80, classHigh}, {0xe9, classHigh}, {0xff, classHigh}} {
				old := b[i]
				b[i] = x.c
				if c, w := lineClass(b), classWords(b); c != x.class || w != x.class {
					t.Fatalf("len %d: byte %#x at %d: class %b/%b, want %b", n, x.c, i, c, w, x.class)
				}
				if got, want := blockClasses(b), x.class; i < len(b)&^63 && got != want || i >= len(b)&^63 && got != 0 {
					t.Fatalf("len %d: byte %#x at %d: block classes %b", n, x.c, i, got)
				}
				b[i] = old
			}
		}
	}
}

// StringView decodes as StringValue does, whichever path it takes.
func TestStringViewAgreesWithStringValue(t *testing.T) {
	atoms := []string{`a`, `Z`, `~`, ` `, `\"`, `\\`, `\n`, `\u00e9`, `\u12`, `"`, `\`, "\t", "\x01", "\x1f", "\x7f", `é`, "\xff", `\/`}
	r := rand.New(rand.NewSource(3))
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		b.WriteString(strings.Repeat("p", r.Intn(20)))
		for k := r.Intn(6); k > 0; k-- {
			b.WriteString(atoms[r.Intn(len(atoms))])
		}
		raw := []byte(`"` + b.String() + `"`)
		got, gotOK := StringView(raw)
		want, wantOK := StringValue(raw)
		if got != want || gotOK != wantOK {
			t.Fatalf("StringView(%q) = %q %v, StringValue %q %v", raw, got, gotOK, want, wantOK)
		}
	}
}

// lineScan marks every double quote of a line, whatever its length and wherever the
// quote lies (in a vectorised block, in the overlapping last block, in a short line).
func TestLineScanMarksQuotes(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for n := 0; n < 300; n++ {
		b := make([]byte, n)
		for i := range b {
			if b[i] = byte(0x20 + r.Intn(0x5f)); r.Intn(7) == 0 {
				b[i] = '"'
			}
		}
		quotes := make([]uint64, (n+63)/64)
		lineScan(b, quotes)
		for i := range b {
			got := quotes[i>>6]>>(i&63)&1 == 1
			if got != (b[i] == '"') {
				t.Fatalf("len %d: byte %d (%q) marked %v", n, i, b[i], got)
			}
		}
		if n%64 != 0 && len(quotes) > 0 && quotes[len(quotes)-1]>>(n%64) != 0 {
			t.Fatalf("len %d: bits past the end", n)
		}
	}
}
