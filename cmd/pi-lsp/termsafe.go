package main

import (
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// Terminal-safe output. Session content (tool output, labels, session names, file paths,
// the header's cwd) is whatever a model, a tool or a file put there, and the CLI prints
// it to a terminal: a raw ESC starts a sequence that can write the clipboard (OSC 52),
// hide a link (OSC 8) or clear the screen, a bare CR or backspace overwrites what was
// printed, a C1 control (U+0080–U+009F) is a one-character CSI or OSC on some terminals,
// and a bidi override shows text in another order than it is read. Every byte a command
// writes to stdout or stderr passes through one termSafe writer, which run puts between
// the command and the process's streams, so a command (a new one too) cannot print such
// a character raw: it shows it escaped instead, the way Go quotes it, `\x1b` for a C0
// control, `\u202e` for DEL, a C1 control or a bidi control, `\xff` for a byte that is
// not UTF-8. Newline and tab pass.
//
// The same writer serves --json output: encoding/json already escapes C0 controls and
// replaces invalid UTF-8, so inside JSON the writer meets only DEL, C1 and bidi
// characters, whose `\u…` form is the JSON escape of the same character (the decoded
// value is unchanged). Commands whose output is not for a terminal (serve's LSP stream, gen's
// session lines) are left raw: see rawOutput.

// rawOutput names the commands whose stdout is a byte stream for a program, not text for
// a person: the LSP wire (its Content-Length counts the bytes) and a generated session
// file (which must be what Pi writes).
var rawOutput = map[string]bool{"serve": true, "gen": true}

// termSafe is an io.Writer that escapes terminal controls on their way to w. A UTF-8
// sequence split across two writes is held (at most 3 bytes) until the next write or
// Flush. Safe for concurrent use (progress lines come from another goroutine).
type termSafe struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // the start of a UTF-8 sequence the last write ended in
	buf     []byte
}

func newTermSafe(w io.Writer) *termSafe { return &termSafe{w: w} }

// Write escapes p and writes it on. It reports len(p) written when the escaped bytes
// were all written, whatever their number.
func (t *termSafe) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := p
	if len(t.pending) > 0 {
		in = append(t.pending, p...)
		t.pending = nil
	}
	// Hold an incomplete UTF-8 sequence at the end for the next write.
	if cut := incompleteTail(in); cut < len(in) {
		t.pending = append([]byte(nil), in[cut:]...)
		in = in[:cut]
	}
	t.buf = appendTermSafe(t.buf[:0], in)
	if len(t.buf) == 0 {
		return len(p), nil
	}
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held incomplete sequence, escaped byte by byte: nothing completes it now.
func (t *termSafe) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		return nil
	}
	out := appendTermSafe(nil, t.pending)
	t.pending = nil
	_, err := t.w.Write(out)
	return err
}

// incompleteTail is where an incomplete (but so far valid) UTF-8 sequence at the end of
// p starts, or len(p).
func incompleteTail(p []byte) int {
	for i := len(p) - 1; i >= 0 && i > len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return i
			}
			break
		}
	}
	return len(p)
}

// appendTermSafe appends s to dst with every terminal control escaped. Runs of safe
// bytes, the bulk of any output, are copied whole.
func appendTermSafe(dst, s []byte) []byte {
	start := 0 // the start of the run of safe bytes not yet copied
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			if c == 0x7f {
				dst = append(dst, `\u007f`...)
			} else {
				dst = fmt.Appendf(dst, `\x%02x`, c)
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = fmt.Appendf(dst, `\x%02x`, c)
			start = i + size
		case isUnsafeRune(r):
			dst = append(dst, s[start:i]...)
			dst = fmt.Appendf(dst, `\u%04x`, r)
			start = i + size
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// isUnsafeRune reports the non-ASCII runes a terminal acts on or that reorder text: the
// C1 controls and the bidi embeddings, overrides, isolates and marks.
func isUnsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r >= 0x202a && r <= 0x202e: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	case r == 0x200e || r == 0x200f || r == 0x061c: // LRM, RLM, ALM
		return true
	}
	return false
}

// terminalSafeString is s as termSafe prints it (for tests and messages built apart).
func terminalSafeString(s string) string { return string(appendTermSafe(nil, []byte(s))) }

// underlying is the writer a termSafe wraps, or w itself: isTerminal looks through it.
func underlying(w io.Writer) io.Writer {
	if t, ok := w.(*termSafe); ok {
		return t.w
	}
	return w
}
