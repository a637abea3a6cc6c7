package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// MaxFrameBytes bounds one incoming message. A larger frame is read and discarded and
// answered with an error; it never takes the server down.
const MaxFrameBytes = 64 << 20

// stream is a Content-Length framed JSON-RPC object stream that survives bad input: a
// frame with a missing, negative, oversized or lying Content-Length, or a body that is not
// a JSON-RPC message, is answered with a JSON-RPC error and skipped, instead of closing
// the connection as the library's stream does.
type stream struct {
	r  *bufio.Reader
	w  io.Writer
	c  io.Closer
	mu sync.Mutex // serializes writes
	// onBadFrame is told about each skipped frame (for logging).
	onBadFrame func(error)
}

func newStream(r io.Reader, w io.Writer, c io.Closer) *stream {
	return &stream{r: bufio.NewReaderSize(r, 64<<10), w: w, c: c}
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

func (s *stream) Close() error { return s.c.Close() }

// ReadObject reads frames until one decodes into v. Only a failure of the underlying
// reader (EOF, closed pipe) is returned.
func (s *stream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		if err != nil {
			var fe *frameError
			if errors.As(err, &fe) {
				s.reject(nil, CodeParseError, fe.msg)
				continue
			}
			return err
		}
		if err := json.Unmarshal(body, v); err != nil {
			id := requestID(body)
			code := int64(CodeParseError)
			if json.Valid(body) {
				code = CodeInvalidRequest
			}
			s.reject(id, code, "invalid message: "+err.Error())
			continue
		}
		return nil
	}
}

type frameError struct{ msg string }

func (e *frameError) Error() string { return e.msg }

func (s *stream) readFrame() ([]byte, error) {
	length := -1
	sawHeader := false
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
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, &frameError{fmt.Sprintf("bad Content-Length %q", strings.TrimSpace(value))}
			}
			length = n
		}
	}
	if length < 0 {
		return nil, &frameError{"frame without Content-Length"}
	}
	if length > MaxFrameBytes {
		if _, err := io.CopyN(io.Discard, s.r, int64(length)); err != nil {
			return nil, err
		}
		return nil, &frameError{fmt.Sprintf("frame of %d bytes exceeds the %d byte limit", length, MaxFrameBytes)}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// requestID extracts the id of a message that failed to decode, so the error can be
// addressed to it.
func requestID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	if m.ID[0] == '"' || (m.ID[0] >= '0' && m.ID[0] <= '9') {
		return m.ID
	}
	return nil
}

func (s *stream) reject(id json.RawMessage, code int64, msg string) {
	if s.onBadFrame != nil {
		s.onBadFrame(errors.New(msg))
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg, "data": map[string]string{"kind": "badMessage"}}}
	data, _ := json.Marshal(resp)
	_ = s.writeFrame(data)
}
