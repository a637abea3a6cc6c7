package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"io"
	"net/http"
	"sync"
	"time"
)

// userAgent is what pi-lsp's requests say they are.
var userAgent = fmt.Sprintf("pi-lsp (summaries; pi-ai %s requests)", catalog.EmbeddedVersion())

func mergeHeaders(hs ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		for k, v := range h {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// withConfigHeaders appends to opts the model's headers, then the credential's (which
// win), each made an option by header: each SDK has its own option type.
func withConfigHeaders[O any](opts []O, cfg Config, header func(k, v string) O) []O {
	for _, hs := range []map[string]string{cfg.Model.Headers, cfg.Credential.Headers} {
		for k, v := range hs {
			opts = append(opts, header(k, v))
		}
	}
	return opts
}

// headerDoer adds the configured headers (models.json, session affinity) to each request;
// callTransport puts pi-lsp's body in place of go-openai's and records the response.
type headerDoer struct {
	client  *http.Client
	headers map[string]string
}

type headersKey struct{}

func (d *headerDoer) Do(req *http.Request) (*http.Response, error) {
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	if extra, ok := req.Context().Value(headersKey{}).(map[string]string); ok {
		for k, v := range extra {
			req.Header.Set(k, v)
		}
	}
	return d.client.Do(req)
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
	redirect *Error
	// maxLine bounds a line of the response body (0: no bound), so that an SDK's line
	// reader never buffers an endless line.
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

// callTransport sends every request: it puts pi-lsp's body in place of an SDK's,
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
	se := &Error{Kind: KindFatal, Status: status,
		Message: "the endpoint redirects to " + req.URL.Host + "; a model call never follows a redirect (the credential would go along): set the base URL to the address that answers"}
	if ci, ok := req.Context().Value(callKey{}).(*callInfo); ok {
		ci.mu.Lock()
		ci.redirect = se
		ci.mu.Unlock()
	}
	return se
}
