// Package watchdog bounds an operation a test fears may hang: it runs in its own
// goroutine, and the test learns whether it returned in time without waiting longer.
package watchdog

import "time"

// Run calls fn in a goroutine and reports whether it returned within d. When it did not,
// fn is still running: done is closed once it returns (for a test that releases what
// fn waits on, then waits for it).
func Run(d time.Duration, fn func()) (done <-chan struct{}, returned bool) {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		fn()
	}()
	select {
	case <-ch:
		return ch, true
	case <-time.After(d):
		return ch, false
	}
}
