// Package frame is LSP's base protocol: messages framed by a Content-Length header. One
// framer serves the server, which must survive any input (a tolerant Reader: a bad frame
// is an *Error, and reading goes on at the next well-formed header), and the test
// harnesses, which hold the server's output to the canonical form (a strict Reader: one
// "Content-Length: N\r\n" header, a blank line, N bytes of valid JSON).
//
// Invariant: a Reader never holds more than its limit of one body, nor more than the last
// MaxHeaderLine bytes of a header line, whatever it is sent.
package frame

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// MaxHeaderLine is the longest header line kept whole. Of a longer one (garbage, or the
// rest of a frame whose length was wrong) only the end is kept, where a Content-Length
// header run into it would be: the rest is skipped as it is read, never held.
const MaxHeaderLine = 4 << 10

// Error is a frame that was skipped. A tolerant Reader can go on after it; a strict one
// has found output that is not canonical.
type Error struct {
	Msg string
	// TooLarge: the frame's body (Length bytes) exceeded the limit and was discarded.
	TooLarge bool
	Length   int
}

func (e *Error) Error() string { return e.Msg }

// Reader reads framed message bodies.
type Reader struct {
	r      *bufio.Reader
	max    int
	strict bool
	// BeforeDiscard, when set, is called with the length of a frame over the limit before
	// its body is read and thrown away (so the server can answer without waiting for it).
	BeforeDiscard func(length, limit int)
}

// NewReader is a tolerant Reader of bodies of at most max bytes.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// NewStrictReader is a Reader that refuses anything but canonical frames of valid JSON.
func NewStrictReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), max: math.MaxInt, strict: true}
}

// AppendHeader appends the header of a body of n bytes to dst.
func AppendHeader(dst []byte, n int) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "\r\n\r\n"...)
}

// Frame is body with its header.
func Frame(body []byte) []byte { return append(AppendHeader(nil, len(body)), body...) }

// Next returns the next body. A skipped frame is an *Error; any other error is the
// underlying reader's (io.EOF at the end).
func (r *Reader) Next() ([]byte, error) {
	if r.strict {
		return r.nextStrict()
	}
	length := -1
	sawHeader := false
	var bad *Error
	for {
		line, err := r.headerLine()
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !sawHeader {
				continue // stray blank line between frames
			}
			break
		}
		sawHeader = true
		value, ok := contentLengthAt(line)
		if !ok {
			continue // another header (Content-Type), or garbage
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 {
			bad = &Error{Msg: fmt.Sprintf("bad Content-Length %q", value)}
			length = -1
			continue
		}
		bad, length = nil, int(min(n, int64(math.MaxInt)))
	}
	if bad != nil {
		return nil, bad
	}
	if length < 0 {
		return nil, &Error{Msg: "frame without Content-Length"}
	}
	if length > r.max {
		if r.BeforeDiscard != nil {
			r.BeforeDiscard(length, r.max)
		}
		if _, err := io.CopyN(io.Discard, r.r, int64(length)); err != nil {
			return nil, err
		}
		return nil, &Error{Msg: fmt.Sprintf("frame of %d bytes exceeds the %d byte limit", length, r.max), TooLarge: true, Length: length}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r.r, body); err != nil {
		return nil, err
	}
	return body, nil
}

func (r *Reader) nextStrict() ([]byte, error) {
	line, err := r.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	var n int
	if _, err := fmt.Sscanf(line, "Content-Length: %d\r\n", &n); err != nil || n < 0 || line != "Content-Length: "+strconv.Itoa(n)+"\r\n" {
		return nil, &Error{Msg: fmt.Sprintf("bad header line %q", line)}
	}
	blank, err := r.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if blank != "\r\n" {
		return nil, &Error{Msg: fmt.Sprintf("header not followed by a blank line: %q", blank)}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r.r, body); err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, &Error{Msg: fmt.Sprintf("body is not JSON: %.200q", body)}
	}
	return body, nil
}

// contentLengthAt finds a Content-Length header in a header line. The header is found
// also after garbage on the same line (the rest of a frame whose length was missing,
// wrong or a lie), so the stream resynchronizes on the next well-formed frame.
func contentLengthAt(line string) (value string, ok bool) {
	i := strings.Index(strings.ToLower(line), "content-length:")
	if i < 0 {
		return "", false
	}
	_, value, _ = strings.Cut(line[i:], ":")
	return strings.TrimSpace(value), true
}

// headerLine reads a line up to '\n' (included), keeping at most its last MaxHeaderLine
// bytes.
func (r *Reader) headerLine() (string, error) {
	var long []byte // the end of a line longer than the reader's buffer
	for {
		chunk, err := r.r.ReadSlice('\n')
		if err == nil && long == nil {
			return string(chunk), nil
		}
		if err != nil && err != bufio.ErrBufferFull {
			return "", err
		}
		long = append(long, chunk...)
		if len(long) > MaxHeaderLine {
			long = append(long[:0], long[len(long)-MaxHeaderLine:]...)
		}
		if err == nil {
			return string(long), nil
		}
	}
}
