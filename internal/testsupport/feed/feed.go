// Package feed holds what a test reads from a process or a connection, item by item as
// it comes, so that the test can wait for the item it expects: one goroutine adds the
// items and ends the feed, any other waits. A wait never misses an item: it looks at the
// items and takes the channel that wakes it under one lock.
package feed

import (
	"errors"
	"sync"
	"time"
)

// ErrEnded and ErrTimeout are why Await found no item.
var (
	ErrEnded   = errors.New("the feed ended")
	ErrTimeout = errors.New("timed out")
)

// Feed is a growing list of items of type T.
type Feed[T any] struct {
	mu    sync.Mutex
	items []T
	wake  chan struct{} // closed, and replaced, at each item
	ended chan struct{} // closed by End
	end   sync.Once
}

// New is an empty feed.
func New[T any]() *Feed[T] {
	return &Feed[T]{wake: make(chan struct{}), ended: make(chan struct{})}
}

// Add appends v and wakes every wait.
func (f *Feed[T]) Add(v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items = append(f.items, v)
	close(f.wake)
	f.wake = make(chan struct{})
}

// End says that the source is gone: a wait then looks at the items once more and gives
// up. An item added after End is still seen by that last look.
func (f *Feed[T]) End() { f.end.Do(func() { close(f.ended) }) }

// Items are the items so far.
func (f *Feed[T]) Items() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]T(nil), f.items...)
}

// Take returns the items so far and forgets them (a test that bounds its memory).
func (f *Feed[T]) Take() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	items := f.items
	f.items = nil
	return items
}

// Await waits for the first item that match accepts, from the first the feed holds:
// ErrEnded when the feed ends before one comes, ErrTimeout when timeout passes first.
func (f *Feed[T]) Await(timeout time.Duration, match func(T) bool) (T, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	seen, gone := 0, false
	for {
		f.mu.Lock()
		items, wake := f.items[min(seen, len(f.items)):], f.wake
		seen = len(f.items)
		f.mu.Unlock()
		for _, v := range items {
			if match(v) {
				return v, nil
			}
		}
		if gone {
			var zero T
			return zero, ErrEnded
		}
		select {
		case <-wake:
		case <-f.ended:
			gone = true // what was added before the end is all there: look once more
		case <-deadline.C:
			var zero T
			return zero, ErrTimeout
		}
	}
}
