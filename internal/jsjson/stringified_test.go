package jsjson

import (
	"strings"
	"testing"
)

// StringifiedLen16 gives the length of what JSON.stringify writes back, on the inputs
// its shortcut takes (JSON as JSON.stringify writes it) and on every kind it leaves to
// the general path.
func TestStringifiedLen16MatchesStringify(t *testing.T) {
	inputs := []string{
		`{"path":"src/a.go","content":"package a"}`,
		`{"path":"src/a.go","oldText":"x","newText":"y","n":12,"ok":true,"none":null}`,
		`{"a":[1,2,[3,{"b":"c"}]],"e":{},"f":[]}`,
		`{"2":1,"1":2,"b":3,"a":4}`, // integer keys move first: same length
		`{"é":"ü€😀","x":"ASCII"}`,
		`"just a string"`, `123456789012345`, `-42`, `0`, `true`, `false`, `null`, `[]`, `{}`,
		// Left to the general path:
		`{"a":1,"a":22}`,            // a repeated key keeps one member
		`{ "a": 1 }`, "{\"a\":\n1}", // whitespace between tokens
		`{"a":"x\"y"}`, `{"a":"\u0041"}`, // escapes, one that stringify would not keep
		`{"a":"\/"}`, `{"a":"\u2028"}`, `{"a":"tab\there"}`,
		`1.0`, `1e3`, `-0`, `0.1`, `1.5e-7`, `1234567890123456789`, `-0.0`,
		`{"a":1.50}`, `[1,2.0,3e0]`,
		`{"__proto__":{"x":1}}`,
		`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33,"k1":0}`,
	}
	// Nested and long forms of the above.
	for _, in := range inputs[:6] {
		inputs = append(inputs, `{"wrap":`+in+`,"list":[`+in+`,`+in+`]}`, `[`+strings.Repeat(in+`,`, 20)+in+`]`)
	}
	for _, in := range inputs {
		want, err := StringifyRaw([]byte(in))
		if err != nil {
			t.Fatalf("StringifyRaw(%s): %v", in, err)
		}
		got, err := StringifiedLen16([]byte(in))
		if err != nil || got != Len16(want) {
			t.Errorf("StringifiedLen16(%s) = %d, %v; want %d (%s)", in, got, err, Len16(want), want)
		}
	}
	for _, bad := range []string{`{`, `{"a":}`, `[1,]`, `{"a":1}x`, ``, `nul`, `01`, `-`} {
		if _, err := StringifiedLen16([]byte(bad)); err == nil {
			t.Errorf("StringifiedLen16(%q) took invalid JSON", bad)
		}
	}
}

// The shortcut is taken where it should be: otherwise it would be a slower path with
// the same answers, and the test above could not tell.
func TestCanonicalRecognisesStringifyOutput(t *testing.T) {
	for in, want := range map[string]bool{
		`{"path":"src/a.go","content":"x"}`: true,
		`{"a":[1,-2,{"b":null}],"c":true}`:  true,
		`{"é":"😀"}`:                         true,
		`{"a":1,"a":2}`:                     false,
		`{"a": 1}`:                          false,
		`{"a":"\n"}`:                        false,
		`{"a":1.5}`:                         false,
		`-0`:                                false,
		`1234567890123456`:                  false,
	} {
		c := canonical{data: []byte(in)}
		if got := c.value(0) && c.i == len(in); got != want {
			t.Errorf("canonical(%s) = %v, want %v", in, got, want)
		}
	}
}
