package feed

import (
	"errors"
	"testing"
	"time"
)

// A wait finds an item added before it and one added while it waits; it gives up with
// ErrTimeout when none comes, and with ErrEnded once the feed ends, after looking at
// what was added before the end.
func TestAwait(t *testing.T) {
	f := New[int]()
	f.Add(1)
	if v, err := f.Await(time.Second, func(v int) bool { return v == 1 }); v != 1 || err != nil {
		t.Fatalf("an item already there: %d, %v", v, err)
	}
	go func() { time.Sleep(10 * time.Millisecond); f.Add(2) }()
	if v, err := f.Await(5*time.Second, func(v int) bool { return v == 2 }); v != 2 || err != nil {
		t.Fatalf("an item added during the wait: %d, %v", v, err)
	}
	if _, err := f.Await(10*time.Millisecond, func(v int) bool { return v == 3 }); !errors.Is(err, ErrTimeout) {
		t.Fatalf("no such item: %v, want ErrTimeout", err)
	}
	f.Add(3)
	f.End()
	if v, err := f.Await(5*time.Second, func(v int) bool { return v == 3 }); v != 3 || err != nil {
		t.Fatalf("an item added before the end: %d, %v", v, err)
	}
	if _, err := f.Await(5*time.Second, func(v int) bool { return v == 4 }); !errors.Is(err, ErrEnded) {
		t.Fatalf("after the end: %v, want ErrEnded", err)
	}
	if got := f.Take(); len(got) != 3 || len(f.Items()) != 0 {
		t.Fatalf("Take = %v, then Items = %v", got, f.Items())
	}
}
