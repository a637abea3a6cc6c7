package llm

import (
	"errors"
	"strings"
	"testing"
)

// The event stream reader: names and data lines, CRLF line ends, comments, multi-line
// data, an unterminated last event (handed on only when asked), and a line past the
// bound ending the stream.
func TestReadSSE(t *testing.T) {
	stream := ": keep-alive\r\n\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\ndata: one\ndata:two\nid: 7\n\n: ping\n\ndata: tail"
	for _, flush := range []bool{false, true} {
		var got []string
		err := readSSE(strings.NewReader(stream), 1<<10, flush, func(ev sseEvent) bool {
			got = append(got, ev.Name+"|"+string(ev.Data))
			return true
		})
		want := []string{`a|{"x":1}`, "|one\ntwo"}
		if flush {
			want = append(want, "|tail")
		}
		if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("flush=%v: events %q err %v, want %q", flush, got, err, want)
		}
	}
	n := 0
	err := readSSE(strings.NewReader("data: 1\n\ndata: 2\n\n"), 1<<10, false, func(sseEvent) bool { n++; return false })
	if err != nil || n != 1 {
		t.Errorf("a reader that stops: %d events, err %v", n, err)
	}
	err = readSSE(strings.NewReader("data: "+strings.Repeat("x", 5000)+"\n\n"), 1<<10, true, func(sseEvent) bool { return true })
	if !errors.Is(err, errLineTooLong) {
		t.Errorf("a line past the bound: %v", err)
	}
}
