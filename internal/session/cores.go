package session

import (
	"sync"
	"sync/atomic"
	"time"
)

// warmCores are goroutines started before their work is known, which keep their
// threads awake for a short while. A load starts them before it reads the header: a
// thread asleep on an idle core can take a millisecond to run again once woken (on a
// virtual machine its core has to be scheduled first), which a load of a few tens of
// milliseconds would otherwise wait at its start, with one core.
type warmCores struct {
	n       int // goroutines
	job     atomic.Pointer[func()]
	ready   chan struct{} // closed when job is known (or there is none)
	release sync.Once
}

// warmSpin is how long a warm goroutine keeps its thread awake before it sleeps until
// its work is known: longer than reading a header, short enough to cost nothing.
const warmSpin = 2 * time.Millisecond

// wakeCores starts n warm goroutines.
func wakeCores(n int) *warmCores {
	w := &warmCores{n: n, ready: make(chan struct{})}
	for range n {
		go w.wait()
	}
	return w
}

func (w *warmCores) wait() {
	for deadline := time.Now().Add(warmSpin); w.job.Load() == nil && time.Now().Before(deadline); {
		select {
		case <-w.ready:
			deadline = time.Time{}
		default:
		}
	}
	<-w.ready
	if job := w.job.Load(); job != nil {
		(*job)()
	}
}

// run has every warm goroutine run job (nil: none, they end). Only the first call
// counts; w may be nil.
func (w *warmCores) run(job func()) {
	if w == nil {
		return
	}
	w.release.Do(func() {
		if job != nil {
			w.job.Store(&job)
		}
		close(w.ready)
	})
}
