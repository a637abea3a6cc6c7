package watchdog

import (
	"testing"
	"time"
)

// A call that returns in time is reported returned; one that blocks is reported not
// returned without waiting for it, and its done channel closes once it is released.
func TestRunReportsWhetherFnReturned(t *testing.T) {
	if _, ok := Run(5*time.Second, func() {}); !ok {
		t.Fatal("a call that returns at once was reported hung")
	}
	release := make(chan struct{})
	done, ok := Run(10*time.Millisecond, func() { <-release })
	if ok {
		t.Fatal("a blocked call was reported returned")
	}
	select {
	case <-done:
		t.Fatal("done closed while the call still blocks")
	default:
	}
	close(release)
	<-done
}
