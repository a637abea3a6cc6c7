package llm

import (
	"context"
	"net/http"
	"time"
)

// sseCall is one streaming request of a provider.
type sseCall struct {
	url            string
	body           []byte
	headers, final map[string]string // post's
	flushAtEnd     bool              // readSSE's: a last event without its blank line counts
}

// streamSSE posts call and passes each server-sent event of the answer to fn (false
// stops the read), under a watchdog that cancels a stalled stream: cancel runs once
// nothing has arrived for cfg.StallTimeout. Any received byte resets it (keep-alive
// comments included: a reasoning model behind a proxy may send only those for minutes;
// TotalTimeout still bounds the whole request), and so does each event. se and err are
// post's when the request failed; readErr is the read's.
func streamSSE(parent, ctx context.Context, cancel context.CancelFunc, ci *callInfo, c *http.Client, cfg Config, call sseCall, fn func(sseEvent) bool) (readErr error, se *Error, err error) {
	stall := time.AfterFunc(cfg.StallTimeout, cancel)
	defer stall.Stop()
	ci.activity = func() { stall.Reset(cfg.StallTimeout) }
	resp, se, err := post(parent, ctx, ci, c, cfg, call.url, call.body, call.headers, call.final)
	if err != nil {
		return nil, se, err
	}
	defer resp.Body.Close()
	return readSSE(resp.Body, ci.maxLine, call.flushAtEnd, func(ev sseEvent) bool {
		stall.Reset(cfg.StallTimeout)
		return fn(ev)
	}), nil, nil
}
