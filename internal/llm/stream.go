package llm

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"io"
	"strings"
	"time"
)

func val(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// reportTokens reports a received stream event.
func reportTokens(req Request, at Progress, start time.Time, chunks int) {
	if req.Progress == nil {
		return
	}
	p := at
	p.Starting, p.Retry, p.Wait = false, "", 0
	p.Tokens, p.Elapsed = chunks, time.Since(start)
	req.Progress(p)
}

// finish is the result of a complete answer: its text trimmed (an empty one fails).
func finish(text string, usage *Usage, m *catalog.Model) (Result, *Error, error) {
	out := strings.TrimSpace(text)
	if out == "" {
		return failed(KindEmpty, msgEmpty)
	}
	return Result{Text: out, Usage: usage, Model: m.ID}, nil, nil
}

// streamFailure classifies a failed request or stream of any API: cancelled by the
// caller, stalled, an HTTP error (from what the transport saw), unreachable, or broken.
// streamEnd is how an attempt ends once its stream is read: with the error event the
// stream carried, with the parent's cancellation (nothing to report as a failure), or with
// the failure of a read cut short (a read error, a stall, a deadline). Both nil: the stream
// was read to its end and the attempt goes on to its answer.
func streamEnd(parent, ctx context.Context, ci *callInfo, failure *Error, readErr error, endpoint string, stallTimeout time.Duration, chunks int) (*Error, error) {
	if failure != nil {
		return failure, failure
	}
	if readErr == nil && ctx.Err() == nil {
		return nil, nil
	}
	if parent.Err() != nil {
		return nil, parent.Err()
	}
	se := streamFailure(ctx, ci, cmp.Or(readErr, ctx.Err()), endpoint, stallTimeout, chunks)
	return se, se
}

func streamFailure(ctx context.Context, ci *callInfo, err error, endpoint string, stallTimeout time.Duration, chunks int) *Error {
	ci.mu.Lock()
	status, body, retryAfter := ci.status, string(ci.body), ci.retryAfter
	ci.mu.Unlock()
	if se := ci.refused(); se != nil {
		return se
	}
	var se *Error
	switch {
	case isLineTooLong(err):
		se = lineTooLong(ci)
	case ctx.Err() != nil:
		se = &Error{Kind: KindTransient, stalled: true}
		if chunks == 0 && status == 0 {
			se.Message = "no response within " + stallTimeout.String() + ": stalled before the response headers"
		} else {
			se.Message = "stream stalled for " + stallTimeout.String() + ": no byte received"
		}
	case status >= 400:
		se = statusError(status, body, retryAfter)
	case status == 0 && unreachable(err):
		se = unreachableError(endpoint, err)
	default:
		var syn *json.SyntaxError
		se = &Error{Kind: KindTransient, Message: "stream broken: " + err.Error()}
		if errors.As(err, &syn) {
			se.Message = "malformed stream data from the server: " + err.Error()
		} else if strings.Contains(err.Error(), "unexpected EOF") {
			se.Message = "stream broken: the connection closed mid-answer (unexpected EOF)"
		} else if status == 200 {
			se.Message = "error event in the stream: " + errorBodyMessage(err.Error())
		}
		if contextTooLongRe.MatchString(se.Message) {
			se.Kind = KindContextTooLong
		}
	}
	return se
}

// bytesPerToken is how many bytes of text or thinking one output token may stand for in
// an answer's size limit: several times what any tokenizer gives (about 4 for English,
// at most 4 per character for CJK), so no real answer reaches it.
const bytesPerToken = 32

// answerLimit is the most bytes of text and thinking an answer to a request asking for
// maxTokens output tokens may have (with a margin: answerSize).
func answerLimit(maxTokens int) int {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	return maxTokens*bytesPerToken + 64<<10
}

// maxLineFor bounds a line of the response to a request asking for maxTokens: one event
// may carry the whole answer (a final event repeating it), JSON-escaped.
func maxLineFor(maxTokens int) int { return 8*answerLimit(maxTokens) + 1<<20 }

// answerSize counts the bytes of text and thinking an attempt has received, against the
// limit of what its request asked for: a provider (or anything answering in its place)
// that streams on is cut off, and nothing of its answer is used.
type answerSize struct {
	asked, limit, n int
}

func newAnswerSize(maxTokens int) *answerSize {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	return &answerSize{asked: maxTokens, limit: answerLimit(maxTokens)}
}

// add counts n more bytes; past the limit it is the attempt's failure.
func (a *answerSize) add(n int) *Error {
	a.n += n
	return a.check()
}

// set makes the count n (an answer re-sent whole); past the limit it is the failure.
func (a *answerSize) set(n int) *Error {
	a.n = n
	return a.check()
}

func (a *answerSize) check() *Error {
	if a.n <= a.limit {
		return nil
	}
	return &Error{Kind: KindOversized, Message: fmt.Sprintf("the answer passed %d bytes, far more than the %d tokens the request asked for; the stream was cut and nothing of it is used", a.limit, a.asked)}
}

// isLineTooLong reports whether err is (or, through a reader that flattened it, says)
// errLineTooLong.
func isLineTooLong(err error) bool {
	return errors.Is(err, errLineTooLong) || errors.Is(err, bufio.ErrTooLong) || strings.Contains(err.Error(), errLineTooLong.Error())
}

// lineTooLong is the failure of an attempt whose response had a line past ci.maxLine.
func lineTooLong(ci *callInfo) *Error {
	ci.mu.Lock()
	limit := ci.maxLine
	ci.mu.Unlock()
	return &Error{Kind: KindOversized, Message: fmt.Sprintf("a line of the answer passed %d bytes, far more than the request asked for; the stream was cut and nothing of it is used", limit)}
}

// askedTokens is the output limit a request body asks for, in the field of its API.
func askedTokens(body map[string]any) int {
	for _, k := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
		if v, ok := body[k].(int); ok {
			return v
		}
	}
	if gen, ok := body["generationConfig"].(map[string]any); ok {
		if v, ok := gen["maxOutputTokens"].(int); ok {
			return v
		}
	}
	return 0
}

// sseEvent is one server-sent event: its name ("" when the stream names none) and its
// data lines joined by "\n".
type sseEvent struct {
	Name string
	Data []byte
}

// readSSE reads a server-sent event stream from r and hands each event to fn, until fn
// returns false, the stream ends, or reading fails (the error, for streamFailure).
// Comment lines (keep-alives) and unknown fields are skipped; a line longer than
// maxLine ends the stream (errLineTooLong). An event left without its closing blank line
// when the stream ends is handed on only when flushAtEnd is set.
func readSSE(r io.Reader, maxLine int, flushAtEnd bool, fn func(sseEvent) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, maxLine+1)), maxLine+1)
	var ev sseEvent
	pending := false
	for sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if len(line) == 0 {
			if pending && !fn(ev) {
				return nil
			}
			ev, pending = sseEvent{}, false
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if pending {
				ev.Data = append(ev.Data, '\n')
			}
			ev.Data = append(ev.Data, value...)
			pending = true
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return errLineTooLong
		}
		return err
	}
	if pending && flushAtEnd {
		fn(ev)
	}
	return nil
}

// errorEvent is the failure of an attempt whose stream carried an error after the 200:
// transient unless its code or message says the context was too long.
func errorEvent(data []byte) *Error {
	var v struct {
		Error struct {
			Code any    `json:"code"`
			Type string `json:"type"`
		} `json:"error"`
	}
	_ = json.Unmarshal(data, &v)
	msg := errorBodyMessage(string(data))
	se := &Error{Kind: KindTransient, Message: "error event in the stream: " + msg}
	if fmt.Sprint(v.Error.Code) == "context_length_exceeded" || v.Error.Type == "exceed_context_size_error" || contextTooLongRe.MatchString(msg) {
		se.Kind = KindContextTooLong
	}
	return se
}

// hasError reports whether a stream event's data is an object with an "error" member
// that is not null.
func hasError(data []byte) bool {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	return json.Unmarshal(data, &v) == nil && len(v.Error) > 0 && string(v.Error) != "null"
}

// decodeEvent decodes a stream event's data into v. The failure is the error the server
// sent in the event (an "error" member), or data that is not JSON (transient: a proxy
// may cut or garble a stream).
func decodeEvent(data []byte, v any) *Error {
	if hasError(data) {
		return errorEvent(data)
	}
	return unmarshalEvent(data, v)
}

// unmarshalEvent decodes a stream event's data into v; data that is not JSON is a
// transient failure.
func unmarshalEvent(data []byte, v any) *Error {
	if err := json.Unmarshal(data, v); err != nil {
		return &Error{Kind: KindTransient, Message: "malformed stream data from the server: " + err.Error()}
	}
	return nil
}
