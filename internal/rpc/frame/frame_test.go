package frame

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func bodies(t *testing.T, r *Reader) (got []string, skipped []string) {
	t.Helper()
	for {
		b, err := r.Next()
		var fe *Error
		switch {
		case errors.As(err, &fe):
			skipped = append(skipped, fe.Msg)
			if r.strict {
				return
			}
		case err == io.EOF:
			return
		case err != nil:
			t.Fatal(err)
		default:
			got = append(got, string(b))
		}
	}
}

// The tolerant reader skips what is not a frame and goes on at the next header, also one
// run into garbage; an oversized body is discarded after BeforeDiscard.
func TestTolerantReaderResynchronizes(t *testing.T) {
	in := "Content-Length: 2\r\n\r\n{}" +
		"Content-Length: -5\r\n\r\n" +
		"Content-Type: x\r\n\r\n" +
		"garbage Content-Length: 4\r\n\r\n[1,2]" + // a lying length: 4 of the 5 bytes
		"\r\n\r\nContent-Length: 12\r\n\r\n" + strings.Repeat("x", 12) +
		"content-length: 3\r\nContent-Type: y\r\n\r\n\"a\""
	r := NewReader(strings.NewReader(in), 10)
	var discarded []int
	r.BeforeDiscard = func(n, limit int) { discarded = append(discarded, n, limit) }
	got, skipped := bodies(t, r)
	if want := []string{"{}", "[1,2", `"a"`}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("bodies %q, want %q", got, want)
	}
	if len(skipped) != 4 || !strings.Contains(skipped[0], "bad Content-Length") || !strings.Contains(skipped[1], "without Content-Length") || !strings.Contains(skipped[3], "exceeds") {
		t.Errorf("skipped %q", skipped)
	}
	if len(discarded) != 2 || discarded[0] != 12 || discarded[1] != 10 {
		t.Errorf("BeforeDiscard got %v", discarded)
	}
}

// The strict reader takes only the canonical form of valid JSON.
func TestStrictReaderRefusesWhatIsNotCanonical(t *testing.T) {
	if got, skipped := bodies(t, NewStrictReader(strings.NewReader(string(Frame([]byte(`{"a":1}`)))+string(Frame([]byte("[]")))))); len(got) != 2 || len(skipped) != 0 {
		t.Fatalf("canonical frames: %q, %q", got, skipped)
	}
	for _, in := range []string{
		"content-length: 2\r\n\r\n{}",
		"Content-Length: 02\r\n\r\n{}",
		"Content-Length: 2 \r\n\r\n{}",
		"Content-Length: 2\n\r\n{}",
		"Content-Length: 2\r\nContent-Type: x\r\n\r\n{}",
		"Content-Length: 2\r\n\r\n{x",
		"Content-Length: 2 garbage after it\r\n\r\n{}",
	} {
		if _, skipped := bodies(t, NewStrictReader(strings.NewReader(in))); len(skipped) != 1 {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestFrameHeader(t *testing.T) {
	if got := string(Frame([]byte("{}"))); got != "Content-Length: 2\r\n\r\n{}" {
		t.Fatalf("Frame = %q", got)
	}
}
