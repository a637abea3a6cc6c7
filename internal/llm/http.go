package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
)

// userAgent is what pi-lsp's requests say they are.
var userAgent = fmt.Sprintf("pi-lsp (summaries; pi-ai %s requests)", catalog.EmbeddedVersion())

// callInfo is what the transport saw of an attempt's response.
type callInfo struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
	body       []byte // an error response's body, kept for its message
	// activity, when set, is called whenever bytes of the response body arrive,
	// keep-alive comments included (the stream readers skip those without returning).
	activity func()
	// redirect is the redirect the endpoint answered with, refused (refuseRedirect).
	redirect *Error
	// maxLine bounds a line of the response body (0: no bound), so that a line reader
	// never buffers an endless line.
	maxLine int
}

// refused is the failure of an attempt whose endpoint answered with a redirect, or nil.
func (ci *callInfo) refused() *Error {
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

// callTransport sends every request and records each response's status, Retry-After,
// error body and arrivals of bytes.
type callTransport struct{ base http.RoundTripper }

func (t callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ci, _ := req.Context().Value(callKey{}).(*callInfo)
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
			// Keep the error body for the message, and hand the reader a copy.
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
	se := &Error{Kind: KindFatal, Status: status,
		Message: "the endpoint redirects to " + req.URL.Host + "; a model call never follows a redirect (the credential would go along): set the base URL to the address that answers"}
	if ci, ok := req.Context().Value(callKey{}).(*callInfo); ok {
		ci.mu.Lock()
		ci.redirect = se
		ci.mu.Unlock()
	}
	return se
}

// post sends one request of an attempt: body as JSON to url with headers (the API's
// own, then the model's configured ones, then the credential's, then final; each later
// one wins).
// A failure before a status is classified (streamFailure); an HTTP error status is the
// attempt's failure with the provider's message; otherwise the response is the caller's
// to read and close.
func post(parent, ctx context.Context, ci *callInfo, c *http.Client, cfg Config, url string, body []byte, headers, final map[string]string) (*http.Response, *Error, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		se := &Error{Kind: KindFatal, Message: err.Error()}
		return nil, se, se
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("User-Agent", userAgent)
	for _, h := range []map[string]string{headers, cfg.Model.Headers, cfg.Credential.Headers, final} {
		for k, v := range h {
			hreq.Header.Set(k, v)
		}
	}
	resp, err := c.Do(hreq)
	if err != nil {
		if parent.Err() != nil {
			return nil, nil, parent.Err()
		}
		se := streamFailure(ctx, ci, err, cfg.Model.BaseURL, cfg.StallTimeout, 0)
		return nil, se, se
	}
	if resp.StatusCode >= 400 {
		resp.Body.Close()
		ci.mu.Lock()
		se := statusError(resp.StatusCode, string(ci.body), ci.retryAfter)
		ci.mu.Unlock()
		return nil, se, se
	}
	return resp, nil, nil
}
