package compaction

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The machinery every summary API shares: one attempt streams an answer to its end; the
// attempts of a summary are retried with backoff on rate limits, server errors and broken
// streams, within a bounded total time; a stall (no byte for StallTimeout) and an
// unreachable host are retried once; every attempt is announced through req.Progress.

// attemptFunc makes one request attempt of a summary.
type attemptFunc func(ctx context.Context, req Request, start time.Time, at Progress) (Result, *SummaryError, error)

// retryPolicy bounds the attempts of one summary.
type retryPolicy struct {
	RetryLimits
	// Secrets are removed from every error text (the key, header values).
	Secrets []string
	// Describe completes a failure's message with where the credential came from and
	// what fixes it (an auth failure) or which endpoint was unreachable.
	Describe func(se *SummaryError)
}

// summarizeWithRetries runs attempts until one succeeds, the policy gives up or ctx ends.
func summarizeWithRetries(parent context.Context, req Request, p retryPolicy, attempt attemptFunc) (Result, error) {
	ctx, cancel := context.WithTimeout(parent, p.TotalTimeout)
	defer cancel()
	start := time.Now()
	var last *SummaryError
	stopped := func(attempt int) error {
		if err := parent.Err(); err != nil {
			return fmt.Errorf("summary request: %w", err)
		}
		msg := "no summary within the summarizer's total timeout of " + p.TotalTimeout.String() + " (context deadline exceeded)"
		if last != nil {
			msg += "; last failure: " + last.Message
		}
		msg += "; raise the bound with summaryTimeout in settings or PI_LSP_SUMMARY_TIMEOUT"
		return &SummaryError{Kind: KindTransient, Retries: attempt, cause: ctx.Err(), Message: msg}
	}
	announce := func(pr Progress) {
		if req.Progress != nil {
			pr.Elapsed = time.Since(start)
			req.Progress(pr)
		}
	}
	maxAttempts := p.MaxRetries + 1
	stallRetries := p.MaxStallRetries
	unreachableRetried := false
	next := Progress{Kind: req.Kind, Attempt: 1, MaxAttempts: maxAttempts, Starting: true}
	announce(next)
	for n := 0; ; n++ {
		res, se, err := attempt(ctx, req, start, next)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return Result{}, stopped(n)
		}
		if se == nil {
			return Result{}, err
		}
		// Providers and proxies sometimes echo the key in their error text: it must not
		// travel on into errors, notifications or logs.
		se.Message = redactSecrets(se.Message, p.Secrets...)
		se.Retries = n
		if p.Describe != nil {
			p.Describe(se)
		}
		last = se
		retryable := se.Kind == KindTransient || se.Kind == KindRateLimited || se.Kind == KindUnreachable
		if se.stalled {
			if stallRetries <= 0 {
				return Result{}, last
			}
			stallRetries--
			// A server that stalled gets one more attempt, not the whole retry budget:
			// each stall costs StallTimeout.
			maxAttempts = min(maxAttempts, n+2+stallRetries)
		}
		if se.Kind == KindUnreachable {
			// A refused connection or an unknown host does not heal in seconds: one
			// more attempt, then the whole message.
			if unreachableRetried {
				return Result{}, last
			}
			unreachableRetried = true
			maxAttempts = min(maxAttempts, n+2)
		}
		if !retryable || n+1 >= maxAttempts {
			return Result{}, last
		}
		delay := p.RetryBase << n
		if ra := se.retryAfterHint; ra > 0 {
			delay = ra
		}
		if delay > p.MaxRetryDelay {
			delay = p.MaxRetryDelay
		}
		if se.stalled {
			delay = 0 // the stall itself was the wait
		}
		// Announced before the wait, so a long Retry-After is not silence.
		next = Progress{Kind: req.Kind, Attempt: n + 2, MaxAttempts: maxAttempts, Starting: true, Retry: retryReason(se), Wait: delay}
		announce(next)
		if delay > 0 {
			select {
			case <-ctx.Done():
				return Result{}, stopped(n)
			case <-time.After(delay):
			}
		}
	}
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
func unreachableError(endpoint string, err error) *SummaryError {
	msg := err.Error()
	if endpoint != "" && !strings.Contains(msg, endpoint) {
		msg = "cannot reach " + endpoint + ": " + msg
	}
	return &SummaryError{Kind: KindUnreachable, Message: msg}
}

// callInfo is what the transport saw of an attempt's response.
type callInfo struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
	body       []byte // an error response's body, kept for its message
	// activity, when set, is called whenever bytes of the response body arrive,
	// keep-alive comments included (SDKs skip those without returning).
	activity func()
	// send, when set, replaces the request body: the body pi-lsp built to be Pi's.
	send []byte
	// redirect is the redirect the endpoint answered with, refused (refuseRedirect).
	redirect *SummaryError
	// maxLine bounds a line of the response body (0: no bound), so that an SDK's line
	// reader never buffers an endless line.
	maxLine int
}

// refused is the failure of an attempt whose endpoint answered with a redirect, or nil.
func (ci *callInfo) refused() *SummaryError {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	if ci.redirect == nil {
		return nil
	}
	se := *ci.redirect
	return &se
}

type callKey struct{}

// withCall attaches ci to ctx for the transport.
func withCall(ctx context.Context, ci *callInfo) context.Context {
	return context.WithValue(ctx, callKey{}, ci)
}

// activityBody reports every read that returned bytes, and ends the body with
// errLineTooLong when a line grows past maxLine.
type activityBody struct {
	io.ReadCloser
	activity func()
	maxLine  int
	line     int // bytes since the last newline
}

// errLineTooLong ends a response body with a line longer than any answer asked for.
var errLineTooLong = errors.New("a line of the response is longer than any answer the request asked for")

func (b *activityBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		if b.activity != nil {
			b.activity()
		}
		if b.maxLine > 0 {
			if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
				b.line = n - i - 1
			} else {
				b.line += n
			}
			if b.line > b.maxLine {
				return n, errLineTooLong
			}
		}
	}
	return n, err
}

// callTransport sends every summary request: it puts pi-lsp's body in place of an SDK's,
// and records each response's status, Retry-After and arrivals of bytes.
type callTransport struct{ base http.RoundTripper }

func (t callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ci, _ := req.Context().Value(callKey{}).(*callInfo)
	if ci != nil && ci.send != nil && req.Method == http.MethodPost {
		if req.Body != nil {
			_, _ = io.Copy(io.Discard, req.Body)
			_ = req.Body.Close()
		}
		body := ci.send
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/json")
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if ci != nil && resp != nil {
		ci.mu.Lock()
		ci.status = resp.StatusCode
		ci.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
		activity, maxLine := ci.activity, ci.maxLine
		ci.mu.Unlock()
		if resp.StatusCode >= 400 && resp.Body != nil {
			// Keep the error body for the message, and hand the SDK a copy.
			data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			ci.mu.Lock()
			ci.body = data
			ci.mu.Unlock()
			resp.Body = io.NopCloser(bytes.NewReader(data))
		} else if (activity != nil || maxLine > 0) && resp.Body != nil {
			resp.Body = &activityBody{ReadCloser: resp.Body, activity: activity, maxLine: maxLine}
		}
	}
	return resp, err
}

// httpClient is c (or a default client) sending through callTransport, under the one
// policy of every model call: a redirect is never followed (refuseRedirect).
func httpClient(c *http.Client) *http.Client {
	out := &http.Client{}
	if c != nil {
		*out = *c
	}
	out.Transport = callTransport{base: out.Transport}
	out.CheckRedirect = refuseRedirect
	return out
}

// refuseRedirect is the redirect policy of every model call: none is followed. A request
// carries the credential (Authorization, x-api-key, x-goog-api-key) and the headers of
// models.json; Go's client keeps most of them on a redirect, so following one would hand
// them to whatever host or port a provider's base URL points at. The refusal names the
// status and the host of the Location (never its user info, path or query, where a
// credential could be), and is recorded for the attempt, which fails without a retry.
func refuseRedirect(req *http.Request, via []*http.Request) error {
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	se := &SummaryError{Kind: KindFatal, Status: status,
		Message: "the endpoint redirects to " + req.URL.Host + "; a model call never follows a redirect (the credential would go along): set the base URL to the address that answers"}
	if ci, ok := req.Context().Value(callKey{}).(*callInfo); ok {
		ci.mu.Lock()
		ci.redirect = se
		ci.mu.Unlock()
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
func (a *answerSize) add(n int) *SummaryError {
	a.n += n
	return a.check()
}

// set makes the count n (an answer re-sent whole); past the limit it is the failure.
func (a *answerSize) set(n int) *SummaryError {
	a.n = n
	return a.check()
}

func (a *answerSize) check() *SummaryError {
	if a.n <= a.limit {
		return nil
	}
	return &SummaryError{Kind: KindOversized, Message: fmt.Sprintf("the answer passed %d bytes, far more than the %d tokens the request asked for; the stream was cut and nothing of it is used", a.limit, a.asked)}
}

// isLineTooLong reports whether err is (or, through an SDK that flattened it, says)
// errLineTooLong.
func isLineTooLong(err error) bool {
	return errors.Is(err, errLineTooLong) || errors.Is(err, bufio.ErrTooLong) || strings.Contains(err.Error(), errLineTooLong.Error())
}

// lineTooLong is the failure of an attempt whose response had a line past ci.maxLine.
func lineTooLong(ci *callInfo) *SummaryError {
	ci.mu.Lock()
	limit := ci.maxLine
	ci.mu.Unlock()
	return &SummaryError{Kind: KindOversized, Message: fmt.Sprintf("a line of the answer passed %d bytes, far more than the request asked for; the stream was cut and nothing of it is used", limit)}
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

// statusError classifies an HTTP error response of any API by its status and body.
func statusError(status int, body string, retryAfter time.Duration) *SummaryError {
	msg := errorBodyMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	se := &SummaryError{Status: status, Message: msg, retryAfterHint: retryAfter}
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
