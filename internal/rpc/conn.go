package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/redact"
)

// The JSON-RPC 2.0 connection: messages decoded once, from the frame, into what the
// server handles (a request keeps its params as the bytes that came, so a handler
// decodes them straight into its typed params), and the server's own calls to the
// client matched to their answers. Batches are not part of LSP and are refused.

// ID is a request id: a non-negative integer or a string.
type ID struct {
	Num      uint64
	Str      string
	IsString bool
}

func (id ID) String() string {
	if id.IsString {
		return strconv.Quote(id.Str)
	}
	return strconv.FormatUint(id.Num, 10)
}

func (id ID) MarshalJSON() ([]byte, error) {
	if id.IsString {
		return json.Marshal(id.Str)
	}
	return strconv.AppendUint(nil, id.Num, 10), nil
}

// key is the id as a map key (a number and a string of its digits are different ids).
func (id ID) key() string {
	if id.IsString {
		return "s:" + id.Str
	}
	return "n:" + strconv.FormatUint(id.Num, 10)
}

// request is a request, or (Notif) a notification, from the client.
type request struct {
	Method string
	// Params are the params member as sent; nil without one ("null" is kept).
	Params *json.RawMessage
	ID     ID
	Notif  bool
}

// respError is a JSON-RPC error object.
type respError struct {
	Code    int64            `json:"code"`
	Message string           `json:"message"`
	Data    *json.RawMessage `json:"data,omitempty"`
}

func (e *respError) Error() string { return fmt.Sprintf("code %d: %s", e.Code, e.Message) }

// response is the client's answer to one of the server's calls.
type response struct {
	ID     ID
	Result json.RawMessage
	Error  *respError
}

// message is one decoded message: a request or a response.
type message struct {
	req  *request
	resp *response
}

// badMessage is a message the server answers with an error instead of handling it.
type badMessage struct {
	id   json.RawMessage // echoed (nil: null)
	code int64
	msg  string
}

func (b *badMessage) Error() string { return b.msg }

// decodeMessage decodes a frame's body: an object with a string method is a request (a
// notification without an id), one with a result or an error a response. What is
// neither, or both, is a badMessage.
func decodeMessage(body []byte) (message, error) {
	id := requestID(body)
	bad := func(code int64, msg string) (message, error) {
		return message{}, &badMessage{id: id, code: code, msg: msg}
	}
	if len(id) > maxIDBytes {
		return message{}, &badMessage{code: CodeInvalidRequest, msg: fmt.Sprintf("request id of %d bytes is longer than %d", len(id), maxIDBytes)}
	}
	if reason := badID(id); reason != "" {
		// An id the server cannot answer faithfully: refused, echoing it as sent.
		return bad(CodeInvalidRequest, reason)
	}
	// The whole body is checked first: a body that is not JSON is a parse error.
	if err := json.Unmarshal(body, &struct{}{}); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return bad(CodeParseError, "invalid message: "+err.Error())
		}
		return bad(CodeInvalidRequest, "invalid message: a batch or a value that is not a request or response object")
	}
	var rawID, method, params, result, errv []byte
	hasParams, hasResult := false, false
	jsjson.EachMember(body, func(k string, v []byte) bool {
		switch k { // the later of repeated members, as encoding/json keeps
		case "id":
			rawID = v
		case "method":
			method = v
		case "params":
			params, hasParams = v, true
		case "result":
			result, hasResult = v, true
		case "error":
			errv = v
		}
		return true
	})
	isResponse := hasResult || (errv != nil && string(errv) != "null")
	switch {
	case method != nil && isResponse, method == nil && !isResponse:
		return bad(CodeInvalidRequest, "invalid message: neither a request nor a response")
	case len(method) > maxMethodBytes:
		return bad(CodeInvalidRequest, fmt.Sprintf("method of %d bytes is longer than %d", len(method), maxMethodBytes))
	}
	var mid ID
	hasID := rawID != nil && string(rawID) != "null"
	if hasID {
		switch {
		case rawID[0] == '"':
			mid.IsString = true
			if err := json.Unmarshal(rawID, &mid.Str); err != nil {
				return bad(CodeInvalidRequest, "invalid message: id: "+err.Error())
			}
		default:
			n, err := strconv.ParseInt(string(rawID), 10, 64)
			if err != nil || n < 0 {
				// The id is named by its start only: an id of any size must not make an
				// answer (and its redaction) of the same size.
				return bad(CodeInvalidRequest, fmt.Sprintf("invalid message: id %s is not a non-negative integer or a string", clip(rawID, 40)))
			}
			mid.Num = uint64(n)
		}
	}
	if isResponse {
		r := &response{ID: mid, Result: result}
		if errv != nil && string(errv) != "null" {
			r.Error = new(respError)
			if err := json.Unmarshal(errv, r.Error); err != nil {
				return bad(CodeInvalidRequest, "invalid message: error: "+err.Error())
			}
		} else if r.Result == nil {
			r.Result = json.RawMessage("null")
		}
		return message{resp: r}, nil
	}
	req := &request{ID: mid, Notif: !hasID}
	if err := json.Unmarshal(method, &req.Method); err != nil {
		return bad(CodeInvalidRequest, "invalid message: method is not a string")
	}
	if hasParams {
		raw := json.RawMessage(params)
		req.Params = &raw
	}
	return message{req: req}, nil
}

// conn is the server's side of a JSON-RPC connection over a stream.
type conn struct {
	st     *stream
	handle func(ctx context.Context, req *request)
	onStop func(error) // told why the read loop stopped (nil: EOF)

	mu      sync.Mutex
	seq     uint64
	pending map[string]chan *response
	closed  bool
	done    chan struct{}
}

// newConn starts reading st, handing each request to handle in wire order on one
// dispatch goroutine (the handler dispatches long work itself).
func newConn(ctx context.Context, st *stream, handle func(ctx context.Context, req *request)) *conn {
	c := &conn{st: st, handle: handle, pending: map[string]chan *response{}, done: make(chan struct{})}
	go c.read(ctx)
	return c
}

// maxQueued is how many requests may wait for the dispatcher while a handler runs
// (reading stops there until it catches up).
const maxQueued = 256

// drainGrace is how long the requests already read are given to be handled once the
// input has ended (a client's shutdown and exit, sent just before it closes its end)
// before the connection closes anyway.
const drainGrace = time.Second

// read reads messages on its own, apart from their handling: the end of the input (the
// client gone, its end of the pipe closed) closes the connection whatever a handler is
// doing, even one that never returns, so that the server never outlives its client.
// Requests go to the dispatcher in wire order; answers to the server's own calls are
// delivered at once.
func (c *conn) read(ctx context.Context) {
	reqs := make(chan *request, maxQueued)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for req := range reqs {
			c.handle(ctx, req)
		}
	}()
	for {
		m, err := c.st.next()
		if err != nil {
			close(reqs)
			select {
			case <-drained:
			case <-time.After(drainGrace):
			}
			_ = c.close()
			return
		}
		switch {
		case m.req != nil:
			reqs <- m.req
		case m.resp != nil:
			c.mu.Lock()
			ch := c.pending[m.resp.ID.key()]
			delete(c.pending, m.resp.ID.key())
			c.mu.Unlock()
			if ch != nil {
				ch <- m.resp // buffered: the caller may have stopped waiting
			}
		}
	}
}

// disconnected is closed when the connection is.
func (c *conn) disconnected() <-chan struct{} { return c.done }

// errClosed is the error of a call the closing connection never answered.
var errClosed = errors.New("jsonrpc: connection closed")

func (c *conn) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for k, ch := range c.pending {
		close(ch)
		delete(c.pending, k)
	}
	close(c.done)
	c.mu.Unlock()
	return c.st.Close()
}

// notify sends a notification, redacted (redact.JSON): a notification may carry a
// summary, a session's text or an error's words.
func (c *conn) notify(method string, params any) error {
	return c.writeRedacted(outgoing{JSONRPC: "2.0", Method: method, Params: params})
}

// writeRedacted sends msg with the secrets in its strings redacted.
func (c *conn) writeRedacted(msg outgoing) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return c.st.writeFrame(redact.JSON(data))
}

// call sends a request and decodes its result into result (when not nil). It returns
// the client's error response as a *respError, and ctx's error when ctx ends first.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	id := ID{Num: c.seq}
	c.seq++
	ch := make(chan *response, 1)
	c.pending[id.key()] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id.key())
		c.mu.Unlock()
	}
	if err := c.st.WriteObject(outgoing{JSONRPC: "2.0", ID: &id, Method: method, Params: params}); err != nil {
		forget()
		return err
	}
	select {
	case r, ok := <-ch:
		switch {
		case !ok:
			return errClosed
		case r.Error != nil:
			return r.Error
		case result != nil:
			return json.Unmarshal(r.Result, result)
		}
		return nil
	case <-ctx.Done():
		forget()
		return ctx.Err()
	}
}

// reply answers a request with a result.
func (c *conn) reply(id ID, result any) error {
	data, err := json.Marshal(result)
	if err != nil {
		return err
	}
	return c.st.writeResponse(id, data)
}

// replyError answers a request with an error whose message and data are redacted as a
// notification is (an error may quote what failed); the id is the client's own, sent
// back as it came.
func (c *conn) replyError(id ID, e *respError) error {
	if e != nil {
		r := *e
		r.Message = redact.String(r.Message)
		if r.Data != nil {
			d := json.RawMessage(redact.JSON(*r.Data))
			r.Data = &d
		}
		e = &r
	}
	return c.st.WriteObject(outgoing{JSONRPC: "2.0", ID: &id, Error: e})
}

// outgoing is a message the server sends: a request (ID and Method), a notification
// (Method) or an error response.
type outgoing struct {
	JSONRPC string     `json:"jsonrpc"`
	ID      *ID        `json:"id,omitempty"`
	Method  string     `json:"method,omitempty"`
	Params  any        `json:"params,omitempty"`
	Error   *respError `json:"error,omitempty"`
}

// clip is b, or its first n bytes followed by "…" and the size, for an error message.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(string(b[:n]), ""), len(b))
}
