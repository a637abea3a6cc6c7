package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/rpc/frame"
)

// MaxFrameBytes bounds one incoming message. A larger frame is read and discarded and
// answered with an error; it never takes the server down.
const MaxFrameBytes = 64 << 20

// stream is a Content-Length framed JSON-RPC message stream that survives bad input: a
// frame with a missing, negative, oversized or lying Content-Length, or a body that is not
// a JSON-RPC message, is answered with a JSON-RPC error and skipped, never closing the
// connection.
type stream struct {
	fr  *frame.Reader
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
	s := &stream{w: w, c: c, max: maxFrame}
	s.fr = frame.NewReader(r, maxFrame)
	// Answer an oversized frame first: its body may be large, and the client should not
	// wait for it to be read and thrown away.
	s.fr.BeforeDiscard = func(length, limit int) {
		s.reject(nil, CodeInvalidRequest, fmt.Sprintf("frame of %d bytes exceeds the %d byte limit", length, limit))
	}
	return s
}

func (s *stream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeFrame(data)
}

func (s *stream) writeFrame(data []byte) error {
	head := frame.AppendHeader(make([]byte, 0, 40), len(data))
	s.mu.Lock()
	defer s.mu.Unlock()
	// The body is written from where it is, not copied after the header.
	if _, err := s.w.Write(head); err != nil {
		return err
	}
	_, err := s.w.Write(data)
	return err
}

// writeResponse frames a successful response whose result is already valid JSON.
func (s *stream) writeResponse(id ID, result json.RawMessage) error {
	idJSON, err := json.Marshal(id)
	if err != nil {
		return err
	}
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	n := len(head) + len(idJSON) + len(mid) + len(result) + 1
	start := frame.AppendHeader(make([]byte, 0, 64+len(idJSON)), n)
	start = append(append(append(start, head...), idJSON...), mid...)
	s.mu.Lock()
	defer s.mu.Unlock()
	// The result is written from where it is kept, not copied into the frame.
	if _, err := s.w.Write(start); err != nil {
		return err
	}
	if _, err := s.w.Write(result); err != nil {
		return err
	}
	_, err = s.w.Write([]byte{'}'})
	return err
}

func (s *stream) Close() error { return s.c.Close() }

// next reads frames until one decodes into a message; each frame that does not is
// answered with an error and skipped. Only a failure of the underlying reader (EOF, a
// closed pipe) is returned.
func (s *stream) next() (message, error) {
	for {
		body, err := s.fr.Next()
		if err != nil {
			var fe *frame.Error
			if errors.As(err, &fe) {
				if !fe.TooLarge { // an oversized frame was answered before its body was discarded
					s.reject(nil, CodeParseError, fe.Msg)
				}
				continue
			}
			return message{}, err
		}
		m, err := decodeMessage(body)
		var bad *badMessage
		if errors.As(err, &bad) {
			s.reject(bad.id, bad.code, bad.msg)
			continue
		}
		return m, err
	}
}

// maxIDBytes bounds a request id (an answer echoes it), maxMethodBytes a method name.
const (
	maxIDBytes     = 1 << 10
	maxMethodBytes = 1 << 10
)

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
// encoding/json. For a repeated key it is the first value.
func topLevelField(body []byte, key string) json.RawMessage {
	var found json.RawMessage
	jsjson.EachMember(body, func(k string, v []byte) bool {
		if k == key {
			found = json.RawMessage(v)
			return false
		}
		return true
	})
	return found
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
