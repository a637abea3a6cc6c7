package compaction

import (
	"context"
	"errors"
	"testing"
	"time"
)

// pollCtx is a context that counts how often its Err is looked at and turns cancelled
// from look number cancelAt on (never when cancelAt is 0): a cancellation at a known
// point of the work, whatever the machine's speed.
type pollCtx struct {
	context.Context
	polls, cancelAt int
	cancelledAt     time.Time // when Err first said cancelled
}

func (c *pollCtx) Err() error {
	c.polls++
	if c.cancelAt > 0 && c.polls >= c.cancelAt {
		if c.cancelledAt.IsZero() {
			c.cancelledAt = time.Now()
		}
		return context.Canceled
	}
	return nil
}

// A compaction of a big session cancelled while the summarizer is at work returns
// context.Canceled at once, wherever the work is (reading the messages, or writing the
// checkpoint's sections), instead of finishing the summary first.
func TestExtractiveCancelledMidWayStopsPromptly(t *testing.T) {
	req := generatedRequest(t, 6000)

	full := &pollCtx{Context: context.Background()}
	start := time.Now()
	res, err := Extractive{}.Summarize(full, req)
	whole := time.Since(start)
	if err != nil || res.Text == "" {
		t.Fatalf("uncancelled summary: %v (%d bytes)", err, len(res.Text))
	}
	// The work looks at the context all along, not only once at the start.
	if full.polls < 100 {
		t.Fatalf("the summary looked at its context %d times over %d messages: it cannot stop while at work", full.polls, len(req.Messages))
	}
	// Cancel after the start check, a tenth, half and nine tenths of the way.
	for _, at := range []int{2, full.polls / 10, full.polls / 2, full.polls * 9 / 10} {
		ctx := &pollCtx{Context: context.Background(), cancelAt: at}
		res, err := Extractive{}.Summarize(ctx, req)
		after := time.Since(ctx.cancelledAt)
		if !errors.Is(err, context.Canceled) || res.Text != "" {
			t.Fatalf("cancelled at look %d of %d: err %v, %d bytes of summary; want context.Canceled and nothing", at, full.polls, err, len(res.Text))
		}
		// The time left after the cancellation is a small part of the whole run's; the
		// bound is loose (a loaded machine), the failure it catches is the whole run.
		if after > whole/5 {
			t.Errorf("cancelled at look %d of %d: returned %v after the cancellation; the whole summary takes %v", at, full.polls, after, whole)
		}
		t.Logf("cancelled at look %d of %d: returned %v after it (the whole summary: %v)", at, full.polls, after, whole)
		if ctx.polls > at+1 { // Summarize's own look for the error to return
			t.Errorf("cancelled at look %d: looked at the context %d times; once cancelled, it should stop at once", at, ctx.polls)
		}
	}
}
