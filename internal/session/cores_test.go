package session

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Warm goroutines run the job they are given once each, only the first run counts, and
// released without a job they end.
func TestWarmCoresRunTheirJobOnceAndEnd(t *testing.T) {
	before := runtime.NumGoroutine()
	w := wakeCores(3)
	var ran atomic.Int32
	var wg sync.WaitGroup
	wg.Add(w.n)
	time.Sleep(3 * warmSpin) // past the spin: they wait asleep, and still take the job
	w.run(func() { defer wg.Done(); ran.Add(1) })
	w.run(func() { ran.Add(100) })
	wg.Wait()
	if got := ran.Load(); got != 3 {
		t.Fatalf("the job ran %d times, want 3", got)
	}
	idle := wakeCores(2)
	idle.run(nil)
	var none *warmCores
	none.run(func() { t.Error("a nil set ran a job") })
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > before; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}
