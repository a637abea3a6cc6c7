package compaction

import (
	"testing"
	"time"
)

func TestProgressMessages(t *testing.T) {
	for _, tc := range []struct {
		p          Progress
		note, want string
	}{
		{Progress{Tokens: 12, Elapsed: 3400 * time.Millisecond}, "", "summarizing: 12 tokens streamed, 3.4s"},
		{Progress{Attempt: 1, MaxAttempts: 4, Starting: true}, "attempt 1 of 4", "summarizing: attempt 1 of 4 (0.0s)"},
		{Progress{Attempt: 2, MaxAttempts: 2, Starting: true, Retry: "stall", Elapsed: 61 * time.Second}, "attempt 2 of 2 after stall", "summarizing: attempt 2 of 2 after stall (61s)"},
		{Progress{Attempt: 3, MaxAttempts: 4, Starting: true, Retry: "HTTP 429", Wait: 30 * time.Second, Elapsed: 2 * time.Second}, "attempt 3 of 4 after HTTP 429, in 30s", "summarizing: attempt 3 of 4 after HTTP 429, in 30s (2.0s)"},
		{Progress{Kind: KindTurnPrefix, Attempt: 2, MaxAttempts: 2, Starting: true, Retry: "stall", Elapsed: 60 * time.Second}, "attempt 2 of 2 after stall", "summarizing the turn prefix: attempt 2 of 2 after stall (60s)"},
		{Progress{Attempt: 2, MaxAttempts: 2, Tokens: 5, Elapsed: time.Second}, "", "summarizing: 5 tokens streamed, 1.0s (attempt 2 of 2)"},
	} {
		if n, m := tc.p.Note(), tc.p.Message(); n != tc.note || m != tc.want {
			t.Errorf("%+v: note %q message %q, want %q and %q", tc.p, n, m, tc.note, tc.want)
		}
	}
}
