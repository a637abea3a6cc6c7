package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// MaxFrameBytes bounds one incoming message. A larger frame is read and discarded and
// answered with an error; it never takes the server down.
const MaxFrameBytes = 64 << 20

// stream is a Content-Length framed JSON-RPC object stream that survives bad input: a
// frame with a missing, negative, oversized or lying Content-Length, or a body that is not
// a JSON-RPC message, is answered with a JSON-RPC error and skipped, instead of closing
// the connection as the library's stream does.
type stream struct {
	r   *bufio.Reader
	w   io.Writer
	max int // largest accepted frame body
	c   io.Closer
	mu  sync.Mutex // serializes writes
	// onBadFrame is told about each skipped frame (for logging).
	onBadFrame func(error)
}

func newStream(r io.Reader, w io.Writer, c io.Closer, maxFrame int) *stream {
	if maxFrame <= 0 {
		maxFrame = MaxFrameBytes
	}
	return &stream{r: bufio.NewReaderSize(r, 64<<10), w: w, c: c, max: maxFrame}
}

func (s *stream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeFrame(data)
}

func (s *stream) writeFrame(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "Content-Length: %d\r\n\r\n", len(data))
	buf.Write(data)
	_, err := s.w.Write(buf.Bytes())
	return err
}

// writeResponse frames a successful response whose result is already valid JSON.
func (s *stream) writeResponse(id jsonrpc2.ID, result json.RawMessage) error {
	idJSON, err := json.Marshal(id)
	if err != nil {
		return err
	}
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	n := len(head) + len(idJSON) + len(mid) + len(result) + 1
	frame := make([]byte, 0, 64+len(idJSON))
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(n), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(append(append(frame, head...), idJSON...), mid...)
	s.mu.Lock()
	defer s.mu.Unlock()
	// The result is written from where it is kept, not copied into the frame.
	if _, err := s.w.Write(frame); err != nil {
		return err
	}
	if _, err := s.w.Write(result); err != nil {
		return err
	}
	_, err = s.w.Write([]byte{'}'})
	return err
}

func (s *stream) Close() error { return s.c.Close() }

// ReadObject reads frames until one decodes into v. Only a failure of the underlying
// reader (EOF, closed pipe) is returned.
func (s *stream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		if err != nil {
			var fe *frameError
			if errors.As(err, &fe) {
				if !fe.answered {
					s.reject(nil, fe.code, fe.msg)
				}
				continue
			}
			return err
		}
		id := requestID(body)
		if bad := badID(id); bad != "" {
			// The library would answer a negative id as a huge unsigned one, which
			// the client could never match: refuse it, echoing the id as sent.
			s.reject(id, CodeInvalidRequest, bad)
			continue
		}
		if err := json.Unmarshal(body, v); err != nil {
			code := int64(CodeParseError)
			if json.Valid(body) && !strings.Contains(err.Error(), "exceeded max depth") {
				code = CodeInvalidRequest
			}
			s.reject(id, code, "invalid message: "+err.Error())
			continue
		}
		return nil
	}
}

type frameError struct {
	code     int64
	msg      string
	answered bool // the error answer was already written
}

func (e *frameError) Error() string { return e.msg }

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

func (s *stream) readFrame() ([]byte, error) {
	length := -1
	sawHeader := false
	var bad *frameError
	for {
		line, err := s.r.ReadString('\n')
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
			bad = &frameError{code: CodeParseError, msg: fmt.Sprintf("bad Content-Length %q", value)}
			length = -1
			continue
		}
		bad, length = nil, int(min(n, int64(math.MaxInt)))
	}
	if bad != nil {
		return nil, bad
	}
	if length < 0 {
		return nil, &frameError{code: CodeParseError, msg: "frame without Content-Length"}
	}
	if length > s.max {
		// Answer first: the body may be large, and the client should not wait for it.
		msg := fmt.Sprintf("frame of %d bytes exceeds the %d byte limit", length, s.max)
		s.reject(nil, CodeInvalidRequest, msg)
		if _, err := io.CopyN(io.Discard, s.r, int64(length)); err != nil {
			return nil, err
		}
		return nil, &frameError{code: CodeInvalidRequest, msg: msg, answered: true}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// requestID extracts the id of a message, also from one that fails to decode, so an
// error can be addressed to it. It returns nil when there is no string or number id.
func requestID(body []byte) json.RawMessage {
	raw := topLevelField(body, "id")
	if len(raw) == 0 || !json.Valid(raw) {
		return nil // an id that is not itself JSON cannot be echoed: answer with id null
	}
	if raw[0] == '"' || raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		return raw
	}
	return nil
}

// badID explains why a numeric id cannot be answered faithfully ("" when it can).
func badID(id json.RawMessage) string {
	if len(id) == 0 || id[0] == '"' {
		return ""
	}
	if _, err := strconv.ParseUint(string(id), 10, 64); err != nil {
		return fmt.Sprintf("request id %s is not supported: use a non-negative integer or a string", id)
	}
	return ""
}

// topLevelField returns the raw value of a key of a top-level JSON object without
// decoding the rest, so it works on bodies too deep (or too broken after the key) for
// encoding/json.
func topLevelField(body []byte, key string) json.RawMessage {
	i := 0
	ws := func() {
		for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r') {
			i++
		}
	}
	str := func() (string, bool) { // at '"'
		start := i
		i++
		for i < len(body) {
			switch body[i] {
			case '\\':
				i += 2
				continue
			case '"':
				i++
				var s string
				if json.Unmarshal(body[start:i], &s) != nil {
					return "", false
				}
				return s, true
			}
			i++
		}
		return "", false
	}
	skip := func() bool { // skips one value, iteratively
		depth := 0
		for i < len(body) {
			switch c := body[i]; c {
			case '"':
				if _, ok := str(); !ok {
					return false
				}
			case '{', '[':
				depth++
				i++
			case '}', ']':
				if depth == 0 {
					return true
				}
				depth--
				i++
			case ',':
				if depth == 0 {
					return true
				}
				i++
			default:
				i++
			}
			if depth == 0 && i < len(body) && (body[i] == ',' || body[i] == '}') {
				return true
			}
		}
		return depth == 0
	}
	ws()
	if i >= len(body) || body[i] != '{' {
		return nil
	}
	i++
	for {
		ws()
		if i >= len(body) || body[i] != '"' {
			return nil
		}
		k, ok := str()
		if !ok {
			return nil
		}
		ws()
		if i >= len(body) || body[i] != ':' {
			return nil
		}
		i++
		ws()
		start := i
		if !skip() {
			return nil
		}
		if k == key {
			return json.RawMessage(bytes.TrimSpace(body[start:i]))
		}
		ws()
		if i >= len(body) || body[i] != ',' {
			return nil
		}
		i++
	}
}

func (s *stream) reject(id json.RawMessage, code int64, msg string) {
	if s.onBadFrame != nil {
		s.onBadFrame(errors.New(msg))
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg, "data": map[string]string{"kind": "badMessage"}}}
	data, err := json.Marshal(resp)
	if err != nil { // never send an empty frame: fall back to an answer without the id
		resp["id"] = nil
		if data, err = json.Marshal(resp); err != nil {
			return
		}
	}
	_ = s.writeFrame(data)
}
