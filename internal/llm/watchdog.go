package llm

import (
	"context"
	"net/http"
	"time"
)

// sseCall is one streaming request of a provider.
type sseCall struct {
	url            string
	endpoint       string // the server an unreachable error names (the model's base URL)
	body           []byte
	headers, final map[string]string // post's
	flushAtEnd     bool              // readSSE's: a last event without its blank line counts
}

// sseRead is what a stream's event handler leaves for the end of the read.
type sseRead struct {
	failure *Error // what an event stopped the read on
	chunks  int    // the answer's chunks handled
}

// streamSSE posts call and passes each server-sent event of the answer to fn (false
// stops the read; fn notes a failure and counts chunks in read), under a watchdog that
// cancels a stalled stream: cancel runs once nothing has arrived for cfg.StallTimeout.
// Any received byte resets it (keep-alive comments included: a reasoning model behind a
// proxy may send only those for minutes; TotalTimeout still bounds the whole request),
// and so does each event. The result is the call's failure (streamEnd's), if any.
func streamSSE(parent, ctx context.Context, cancel context.CancelFunc, ci *callInfo, c *http.Client, cfg Config, call sseCall, read *sseRead, fn func(sseEvent) bool) (*Error, error) {
	stall := time.AfterFunc(cfg.StallTimeout, cancel)
	defer stall.Stop()
	ci.activity = func() { stall.Reset(cfg.StallTimeout) }
	resp, se, err := post(parent, ctx, ci, c, cfg, call.url, call.body, call.headers, call.final)
	if err != nil {
		return se, err
	}
	defer resp.Body.Close()
	readErr := readSSE(resp.Body, ci.maxLine, call.flushAtEnd, func(ev sseEvent) bool {
		stall.Reset(cfg.StallTimeout)
		return fn(ev)
	})
	return streamEnd(parent, ctx, ci, read.failure, readErr, call.endpoint, cfg.StallTimeout, read.chunks)
}
