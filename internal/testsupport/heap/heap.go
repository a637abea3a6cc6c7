// Package heap measures how far the Go heap grows while a test runs one operation, for
// the tests that bound what a hostile input may cost in memory.
//
// Import it only from _test.go files.
package heap

import (
	"runtime"
	"sync"
	"time"
)

// HeapAlloc is the bytes of allocated heap objects now (collected or not).
func HeapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Peak samples the heap every 2 ms from StartPeak until Stop and keeps the highest
// reading.
type Peak struct {
	// Base is the heap at the start, after a collection: the baseline of the growth.
	Base uint64

	mu   sync.Mutex
	peak uint64
	stop chan struct{}
	done chan struct{}
}

// StartPeak collects garbage, takes the baseline and starts sampling.
func StartPeak() *Peak {
	runtime.GC()
	p := &Peak{Base: HeapAlloc(), stop: make(chan struct{}), done: make(chan struct{})}
	p.peak = p.Base
	go func() {
		defer close(p.done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				p.see(HeapAlloc())
			}
		}
	}()
	return p
}

func (p *Peak) see(n uint64) {
	p.mu.Lock()
	p.peak = max(p.peak, n)
	p.mu.Unlock()
}

// Stop ends the sampling and returns the growth of the peak over Base. A last reading
// counts too: garbage not yet collected is still heap, so an operation faster than one
// period is seen.
func (p *Peak) Stop() int64 {
	close(p.stop)
	<-p.done
	p.see(HeapAlloc())
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(p.peak) - int64(p.Base)
}

// Settled collects garbage three times (sync.Pool buffers survive one collection) and
// returns the heap then: what an operation left behind, compared with a baseline.
func Settled() uint64 {
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	return HeapAlloc()
}
