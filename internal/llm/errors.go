package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// ErrContextTooLong means the model refused the request as larger than its context.
var ErrContextTooLong = errors.New("summary request exceeds the model's context window")

// ErrorKind classifies a failed model request.
type ErrorKind string

const (
	KindContextTooLong ErrorKind = "contextTooLong"
	KindRateLimited    ErrorKind = "rateLimited"
	KindAuth           ErrorKind = "auth"
	KindTransient      ErrorKind = "transient"
	KindFatal          ErrorKind = "fatal"
	KindEmpty          ErrorKind = "emptySummary"
	// KindLength: the answer stopped at the output limit, so the summary is incomplete
	// (Pi 1.6.0 refuses to store it).
	KindLength ErrorKind = "length"
	// KindToolCall: the answer called a tool instead of summarizing.
	KindToolCall ErrorKind = "toolCall"
	// KindUnreachable: the connection could not be made (refused, no route, unknown
	// host); retried once.
	KindUnreachable ErrorKind = "unreachable"
	// KindOversized: the answer ran past the size its request asked for (answerSize);
	// not retried.
	KindOversized ErrorKind = "answerTooLong"
)

// The messages of the ends of a stream that every API's reader gives alike.
const (
	msgConnectionCut = "stream ended before the model finished (connection cut)"
	msgTokenCap      = "generation hit the token cap and the summary is incomplete"
	msgToolCall      = "the model called a tool instead of summarizing"
	msgEmpty         = "the model returned an empty summary"
)

// failed is an attempt's end in a Error of kind with message, as an attemptFunc
// returns it.
func failed(kind ErrorKind, message string) (Result, *Error, error) {
	se := &Error{Kind: kind, Message: message}
	return Result{}, se, se
}

// Error is a classified failure of a model request.
type Error struct {
	Kind    ErrorKind
	Status  int
	Message string
	Retries int

	// Provider, Source and Fix complete an auth failure: who refused which credential,
	// where it came from, and what fixes it.
	Provider, Source, Fix string

	retryAfterHint time.Duration
	cause          error
	stalled        bool // the attempt received nothing for StallTimeout
}

// Unwrap returns the underlying cause, if any (context.DeadlineExceeded when the total
// timeout ran out).
func (e *Error) Unwrap() error { return e.cause }

func (e *Error) Error() string {
	if e.Kind == KindLength || e.Kind == KindToolCall {
		return e.Message // in Pi's words, under the caller's label
	}
	msg := e.Message
	if e.Status != 0 {
		msg = fmt.Sprintf("HTTP %d: %s", e.Status, msg)
	}
	if e.Kind == KindAuth && (e.Provider != "" || e.Source != "") {
		who := e.Provider
		if who == "" {
			who = "the endpoint"
		}
		msg = fmt.Sprintf("%s refused the credential (%s)", who, msg)
		if e.Source != "" {
			msg += "; it came from " + e.Source
		}
		if e.Fix != "" {
			msg += "; fix: " + e.Fix
		}
	}
	if e.Retries > 0 {
		if e.Retries == 1 {
			msg += " (after 1 retry)"
		} else {
			msg += fmt.Sprintf(" (after %d retries)", e.Retries)
		}
	}
	return "summarizer: " + msg
}

// Is lets errors.Is(err, ErrContextTooLong) match.
func (e *Error) Is(target error) bool {
	return target == ErrContextTooLong && e.Kind == KindContextTooLong
}

var (
	bearerRe = regexp.MustCompile(`(?i)(bearer\s+)[^\s"',;]+`)
	skKeyRe  = regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{6,}`)
)

// redactSecrets removes the configured key and anything shaped like a key or a bearer
// token from a provider's error text.
func redactSecrets(msg string, keys ...string) string {
	for _, key := range keys {
		if len(key) >= 4 {
			msg = strings.ReplaceAll(msg, key, "[redacted]")
		}
	}
	msg = bearerRe.ReplaceAllString(msg, "${1}[redacted]")
	return skKeyRe.ReplaceAllString(msg, "sk-[redacted]")
}

var contextTooLongRe = regexp.MustCompile(`(?i)(maximum context length|context length|context_length_exceeded|exceeds the (available )?context|too many tokens|prompt is too long|token limit exceeded|exceed_context_size)`)

// describeFailure completes a failure with who refused which credential and its fix.
func describeFailure(m *catalog.Model, cred *catalog.Credential) func(se *Error) {
	return func(se *Error) {
		if se.Kind == KindAuth {
			se.Provider = m.Provider
			if cred != nil {
				se.Source, se.Fix = cred.Source, cred.Fix
			}
		}
	}
}

// retryReason is the short form of a failure in progress lines: "stall", "HTTP 503",
// "stream broken".
func retryReason(se *Error) string {
	switch {
	case se.stalled:
		return "stall"
	case se.Status != 0:
		return fmt.Sprintf("HTTP %d", se.Status)
	}
	return se.Message // whole: a progress line never cuts an error off
}

// unreachable reports whether err is a connection that could not be made: refused, no
// route, or a host name that does not resolve.
func unreachable(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}

// unreachableError is the failure of an attempt whose connection could not be made, with
// the whole cause.
func unreachableError(endpoint string, err error) *Error {
	msg := err.Error()
	if endpoint != "" && !strings.Contains(msg, endpoint) {
		msg = "cannot reach " + endpoint + ": " + msg
	}
	return &Error{Kind: KindUnreachable, Message: msg}
}

// statusError classifies an HTTP error response of any API by its status and body.
func statusError(status int, body string, retryAfter time.Duration) *Error {
	msg := errorBodyMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	se := &Error{Status: status, Message: msg, retryAfterHint: retryAfter}
	switch {
	case contextTooLongRe.MatchString(msg) || strings.Contains(body, "context_length_exceeded"):
		se.Kind = KindContextTooLong
	case status == 429:
		se.Kind = KindRateLimited
	case status == 401 || status == 403:
		se.Kind = KindAuth
	case status >= 500 || status == 408 || status == 409:
		se.Kind = KindTransient
	default:
		se.Kind = KindFatal
	}
	return se
}

// errorBodyMessage is the message of an error body: the "message" of its "error" object
// (OpenAI, Anthropic, Google all nest it so), else the body itself.
func errorBodyMessage(body string) string {
	body = strings.TrimSpace(body)
	var v struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if jsonUnmarshalString(body, &v) == nil {
		switch e := v.Error.(type) {
		case map[string]any:
			if m, ok := e["message"].(string); ok && m != "" {
				return m
			}
		case string:
			if e != "" {
				return e
			}
		}
		if v.Message != "" {
			return v.Message
		}
	}
	return body
}

func jsonUnmarshalString(s string, v any) error { return json.Unmarshal([]byte(s), v) }
