package llm

// The machinery every API shares: one attempt streams an answer to its end; the attempts
// of a request are retried with backoff on rate limits, server errors and broken streams,
// within a bounded total time; a stall (no byte for StallTimeout) and an unreachable host
// are retried once; every attempt is announced through req.Progress.

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryLimits bound the attempts of one request (zero: the defaults New fills in).
type RetryLimits struct {
	// MaxRetries bounds retries on 429, 5xx and broken streams (default 3).
	MaxRetries int
	// RetryBase is the first backoff delay (default 1s), doubled each retry.
	RetryBase time.Duration
	// MaxRetryDelay caps one wait, including a server's Retry-After (default 30s).
	MaxRetryDelay time.Duration
	// TotalTimeout bounds the whole request, retries and waits included (default
	// DefaultTotalTimeout). It is the only limit on a server that keeps sending bytes.
	TotalTimeout time.Duration
	// StallTimeout aborts an attempt that receives no byte for this long, keep-alive
	// comments included (default DefaultStallTimeout).
	StallTimeout time.Duration
	// MaxStallRetries is how many times a stalled attempt is retried (default 1, <0:
	// never); the retry of a stall is the last attempt, whatever MaxRetries allows.
	MaxStallRetries int
}

const (
	// DefaultTotalTimeout bounds the time one request may take, retries and waits included.
	DefaultTotalTimeout = 90 * time.Second
	// DefaultStallTimeout is how long an attempt may receive nothing.
	DefaultStallTimeout = 60 * time.Second
)

// withDefaults is l with every unset bound at its default.
func (l RetryLimits) withDefaults() RetryLimits {
	if l.MaxRetries == 0 {
		l.MaxRetries = 3
	}
	if l.RetryBase == 0 {
		l.RetryBase = time.Second
	}
	if l.MaxRetryDelay == 0 {
		l.MaxRetryDelay = 30 * time.Second
	}
	if l.TotalTimeout <= 0 {
		l.TotalTimeout = DefaultTotalTimeout
	}
	if l.StallTimeout <= 0 {
		l.StallTimeout = DefaultStallTimeout
	}
	switch {
	case l.MaxStallRetries == 0:
		l.MaxStallRetries = 1
	case l.MaxStallRetries < 0:
		l.MaxStallRetries = 0
	}
	return l
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// attemptFunc makes one request attempt of a request.
type attemptFunc func(ctx context.Context, req Request, start time.Time, at Progress) (Result, *Error, error)

// retryPolicy bounds the attempts of one request.
type retryPolicy struct {
	RetryLimits
	// Secrets are removed from every error text (the key, header values).
	Secrets []string
	// Describe completes a failure's message with where the credential came from and
	// what fixes it (an auth failure) or which endpoint was unreachable.
	Describe func(se *Error)
}

// completeWithRetries runs attempts until one succeeds, the policy gives up or ctx ends.
func completeWithRetries(parent context.Context, req Request, p retryPolicy, attempt attemptFunc) (Result, error) {
	ctx, cancel := context.WithTimeout(parent, p.TotalTimeout)
	defer cancel()
	start := time.Now()
	var last *Error
	stopped := func(attempt int) error {
		if err := parent.Err(); err != nil {
			return fmt.Errorf("summary request: %w", err)
		}
		msg := "no summary within the summarizer's total timeout of " + p.TotalTimeout.String() + " (context deadline exceeded)"
		if last != nil {
			msg += "; last failure: " + last.Message
		}
		msg += "; raise the bound with summaryTimeout in settings or PI_LSP_SUMMARY_TIMEOUT"
		return &Error{Kind: KindTransient, Retries: attempt, cause: ctx.Err(), Message: msg}
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
	next := Progress{Attempt: 1, MaxAttempts: maxAttempts, Starting: true}
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
		next = Progress{Attempt: n + 2, MaxAttempts: maxAttempts, Starting: true, Retry: retryReason(se), Wait: delay}
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
