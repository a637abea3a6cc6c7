package session

import (
	"bytes"
	"testing"
)

// FuzzLineEnd: the end of the line at any position, found in memory, by reads of a file
// and in a mapping whose long lines are read (lineEnd past memLook, made 5 bytes here), is the first
// newline at or after it, or the end of the data: the three ways agree with
// bytes.IndexByte. (The MaxLineBytes refusal is past any fuzzed input; see
// TestLineEndAcceptsUpToMaxLineBytes.) Seeds are in testdata/fuzz/FuzzLineEnd.
func FuzzLineEnd(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\n"), uint16(0))
	f.Add([]byte("no newline at all"), uint16(3))
	f.Add([]byte("\n\n\n"), uint16(1))
	f.Add(append(bytes.Repeat([]byte{'x'}, 3000), '\n'), uint16(17))
	// A short look in memory, so that the reads after it run on small inputs.
	look := memLook
	memLook = 5
	f.Cleanup(func() { memLook = look })
	f.Fuzz(func(t *testing.T, data []byte, at uint16) {
		if len(data) == 0 {
			return
		}
		from := int64(int(at) % len(data))
		want := int64(len(data))
		if i := bytes.IndexByte(data[from:], '\n'); i >= 0 {
			want = from + int64(i)
		}
		size := int64(len(data))
		for name, in := range map[string]lineSource{
			"memory": {mem: data, size: size},
			"file":   {r: bytes.NewReader(data), size: size},
			"mapped": {mem: data, r: bytes.NewReader(data), size: size},
		} {
			lr := &lineReader{in: in}
			got, err := lr.lineEnd(from, from)
			if err != nil || got != want {
				t.Fatalf("%s: lineEnd(%d) = %d, %v; want %d", name, from, got, err, want)
			}
		}
	})
}
