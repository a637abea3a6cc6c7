package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/rpc/frame"
)

// MaxFrameBytes bounds one incoming message. A larger frame is read and discarded and
// answered with an error; it never takes the server down.
const MaxFrameBytes = 64 << 20

// stream is a Content-Length framed JSON-RPC object stream that survives bad input: a
// frame with a missing, negative, oversized or lying Content-Length, or a body that is not
// a JSON-RPC message, is answered with a JSON-RPC error and skipped, instead of closing
// the connection as the library's stream does.
type stream struct {
	fr  *frame.Reader
	w   io.Writer
	max int // largest accepted frame body
	c   io.Closer
	mu  sync.Mutex // serializes writes
	// onBadFrame is told about each skipped frame (for logging).
	onBadFrame func(error)
	// params are those of the request ReadObject returned last (see withParams).
	paramsMu  sync.Mutex
	params    []byte
	hasParams bool
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
func (s *stream) writeResponse(id jsonrpc2.ID, result json.RawMessage) error {
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

// ReadObject reads frames until one decodes into v. Only a failure of the underlying
// reader (EOF, closed pipe) is returned.
func (s *stream) ReadObject(v any) error {
	for {
		body, err := s.fr.Next()
		if err != nil {
			var fe *frame.Error
			if errors.As(err, &fe) {
				if fe.TooLarge {
					continue // answered before its body was discarded
				}
				s.reject(nil, CodeParseError, fe.Msg)
				continue
			}
			return err
		}
		id := requestID(body)
		if len(id) > maxIDBytes {
			s.reject(nil, CodeInvalidRequest, fmt.Sprintf("request id of %d bytes is longer than %d", len(id), maxIDBytes))
			continue
		}
		if bad := badID(id); bad != "" {
			// The library would answer a negative id as a huge unsigned one, which
			// the client could never match: refuse it, echoing the id as sent.
			s.reject(id, CodeInvalidRequest, bad)
			continue
		}
		envelope, params, hasParams, err := s.envelope(body)
		if err == nil {
			err = json.Unmarshal(envelope, v)
		}
		if err != nil {
			code := int64(CodeParseError)
			if json.Valid(body) && !strings.Contains(err.Error(), "exceeded max depth") {
				code = CodeInvalidRequest
			}
			s.reject(id, code, "invalid message: "+err.Error())
			continue
		}
		s.paramsMu.Lock()
		s.params, s.hasParams = params, hasParams
		s.paramsMu.Unlock()
		return nil
	}
}

// maxIDBytes bounds a request id (an answer echoes it), maxMethodBytes a method name.
const (
	maxIDBytes     = 1 << 10
	maxMethodBytes = 1 << 10
)

// envelope is what the library decodes of a request: its id and method, with params
// left out (they are handed to the handler as they came, see withParams). The library
// decodes a request into a map of interface values and encodes its params again, which
// costs tens of times their size when they hold many small values. A response (to the
// server's own requests, always small) larger than maxLibraryBody is turned into an
// error response, and any other body that large is refused here, for the same reason.
func (s *stream) envelope(body []byte) (envelope, params []byte, hasParams bool, err error) {
	// The whole body is checked first, as the library would (the same errors).
	if err := json.Unmarshal(body, &struct{}{}); err != nil {
		if _, ok := err.(*json.UnmarshalTypeError); !ok {
			return nil, nil, false, err
		}
	}
	var jsonrpc, id, method, errv []byte
	var hasResult bool
	isObject := jsjson.EachMember(body, func(k string, v []byte) bool {
		switch k { // the later of repeated members, as the library's map keeps
		case "jsonrpc":
			jsonrpc = v
		case "id":
			id = v
		case "method":
			method = v
		case "params":
			params, hasParams = v, true
		case "result":
			hasResult = true
		case "error":
			errv = v
		}
		return true
	})
	switch {
	case !isObject || method == nil && len(body) <= maxLibraryBody:
		if len(body) > maxLibraryBody {
			return nil, nil, false, fmt.Errorf("a message of %d bytes that is not a request object", len(body))
		}
		return body, nil, false, nil // the library answers as it does
	case method == nil:
		return responseTooLarge(id, len(body)), nil, false, nil
	case len(id) > maxIDBytes:
		return nil, nil, false, fmt.Errorf("request id of %d bytes is longer than %d", len(id), maxIDBytes)
	case len(method) > maxMethodBytes:
		return nil, nil, false, fmt.Errorf("method of %d bytes is longer than %d", len(method), maxMethodBytes)
	case method[0] != '"':
		method = []byte("null") // the library's "missing method field"
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":`)
	if jsonrpc == nil || len(jsonrpc) > 64 {
		jsonrpc = []byte(`"2.0"`)
	}
	b.Write(jsonrpc)
	if id != nil {
		b.WriteString(`,"id":`)
		b.Write(id)
	}
	b.WriteString(`,"method":`)
	b.Write(method)
	if hasParams {
		if string(params) == "null" {
			b.WriteString(`,"params":null`)
			params, hasParams = nil, false
		} else {
			b.WriteString(`,"params":{}`)
		}
	}
	// A request that also has a result or an error is neither, for the library.
	if hasResult {
		b.WriteString(`,"result":null`)
	}
	if errv != nil && string(errv) != "null" {
		b.WriteString(`,"error":{}`)
	}
	b.WriteByte('}')
	return b.Bytes(), params, hasParams, nil
}

// maxLibraryBody is the largest body other than a request the library decodes itself:
// the client's answers to the server's requests (a hook's summary among them; 1 MB is
// some 250,000 tokens, far past any summary, and bounds what decoding one can cost).
const maxLibraryBody = 1 << 20

// responseTooLarge is an error response to id in place of one too large to decode.
func responseTooLarge(id []byte, n int) []byte {
	if id == nil {
		id = []byte("null")
	}
	msg, _ := json.Marshal(fmt.Sprintf("response of %d bytes: more than the %d bytes the server reads of an answer", n, maxLibraryBody))
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32603,"message":` + string(msg) + `}}`)
}

// withParams is h with each request's params as they came in the frame (the envelope
// the library decoded has none). The library hands a request to the handler before it
// reads the next one, so the params ReadObject kept last are the request's.
func (s *stream) withParams(h jsonrpc2.Handler) jsonrpc2.Handler { return paramsHandler{s, h} }

type paramsHandler struct {
	s *stream
	h jsonrpc2.Handler
}

func (p paramsHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	s := p.s
	s.paramsMu.Lock()
	params, has := s.params, s.hasParams
	s.params, s.hasParams = nil, false
	s.paramsMu.Unlock()
	if has {
		raw := json.RawMessage(params)
		req.Params = &raw
	}
	p.h.Handle(ctx, conn, req)
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
