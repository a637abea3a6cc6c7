package session

import (
	"errors"
	"testing"
)

// The write lock is waited for while another writer holds it, and only then: an error
// other than "held" is answered at once, and a lock held past the wait is ErrLocked.
func TestWaitForLock(t *testing.T) {
	busy := errors.New("held")
	tries := 0
	heldTwice := func() error {
		if tries++; tries <= 2 {
			return busy
		}
		return nil
	}
	if err := waitForLock(heldTwice, busy); err != nil || tries != 3 {
		t.Errorf("a lock held for two tries: err %v after %d tries, want nil after 3", err, tries)
	}
	broken := errors.New("bad file descriptor")
	tries = 0
	if err := waitForLock(func() error { tries++; return broken }, busy); !errors.Is(err, broken) || tries != 1 {
		t.Errorf("a failing lock: err %v after %d tries, want it wrapped after 1", err, tries)
	}
	if err := waitForLock(func() error { return busy }, busy); !errors.Is(err, ErrLocked) {
		t.Errorf("a lock held throughout: err %v, want ErrLocked", err)
	}
}
